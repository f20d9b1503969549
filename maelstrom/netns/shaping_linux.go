package netns

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
)

// shaper is one node's share of the packet faults: as a receiver, its
// packet-in chain and, while some sender's packets to it are delayed, its
// delay path; as a sender, its packet-out chain (duplication) and the
// counts of what happened to its packets.
type shaper struct {
	ns      *Namespace
	queue   uint16 // this node's queue number as a sender: index + 1
	seed    uint64
	rules   *ruleset
	ifindex uint32 // eth0, for the packet-out chain's oif match

	inbound []inbound
	sources map[uint16]source     // the delayed senders, by queue
	rngs    map[uint16]*rand.Rand // per sender, lent to the delay path
	path    *delayPath            // nil while nothing is delayed
	dupPct  float64
	stats   pathStats // this node's packets, as a sender
}

func newShaper(n *Namespace, index int, seed uint64) *shaper {
	return &shaper{ns: n, queue: uint16(index + 1), seed: seed, rngs: map[uint16]*rand.Rand{}}
}

// rng is the seeded stream for the packets from sender to this node.
func (s *shaper) rng(sender *Namespace) *rand.Rand {
	q := sender.shaper.queue
	if s.rngs[q] == nil {
		h := fnv.New64a()
		h.Write([]byte(sender.id + "->" + s.ns.id))
		s.rngs[q] = rand.New(rand.NewPCG(s.seed, h.Sum64()))
	}
	return s.rngs[q]
}

// receive makes this node treat other senders' packets as in and
// sources say. Order matters: the delay path knows a sender before the
// rule that queues its packets exists, and the rule is gone before the
// path lets the sender go (releasing what it held) or stops, so no packet
// is ever queued with nobody listening.
func (s *shaper) receive(in []inbound, sources map[uint16]source) error {
	if slices.Equal(in, s.inbound) && sameFaults(sources, s.sources) {
		return nil
	}
	started := false
	if len(sources) > 0 && s.path == nil {
		p, err := startDelayPath(s.ns, s.otherQueues(), s.ns.lab.cfg.logf())
		if err != nil {
			return fmt.Errorf("delay path in %s: %w", s.ns.name, err)
		}
		s.path, started = p, true
	}
	if s.path != nil {
		union := map[uint16]source{}
		maps.Copy(union, s.sources)
		maps.Copy(union, sources)
		s.path.update(union)
	}
	if err := s.rules.setInbound(in); err != nil {
		if started {
			s.stopPath()
		} else if s.path != nil {
			s.path.update(s.sources)
		}
		return fmt.Errorf("packet rules in %s: %w", s.ns.name, err)
	}
	s.inbound, s.sources = in, sources
	switch {
	case s.path != nil && len(sources) == 0:
		return s.stopPath()
	case s.path != nil:
		s.path.update(sources)
	}
	return nil
}

func sameFaults(a, b map[uint16]source) bool {
	return maps.EqualFunc(a, b, func(x, y source) bool { return x.fault == y.fault })
}

// otherQueues are the queue numbers of every other node.
func (s *shaper) otherQueues() []uint16 {
	var qs []uint16
	for i := range s.ns.lab.nodes {
		if q := uint16(i + 1); q != s.queue {
			qs = append(qs, q)
		}
	}
	return qs
}

func (s *shaper) stopPath() error {
	err := s.path.close()
	s.path = nil
	if err != nil {
		return fmt.Errorf("close the delay path in %s: %w", s.ns.name, err)
	}
	return nil
}

// duplicate makes this node send a second copy of pct percent of its
// packets to other nodes.
func (s *shaper) duplicate(pct float64) error {
	if pct == s.dupPct {
		return nil
	}
	if err := s.rules.setDuplicate(pct, s.ifindex); err != nil {
		return fmt.Errorf("duplicate rule in %s: %w", s.ns.name, err)
	}
	s.dupPct = pct
	return nil
}

// SetLatency delays every packet between nodes by latencyMs (0: none),
// on every node's link, under any packet fault (the delays add). Client
// traffic is never delayed.
func (l *Lab) SetLatency(latencyMs int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if latencyMs < 0 || latencyMs > maxDelayMs {
		return fmt.Errorf("latency %d ms: must be in 0..%d", latencyMs, maxDelayMs)
	}
	return l.reshape(latencyMs, l.packet)
}

// StartPacket puts fault f on the links of nodes (replacing any packet
// fault in place): every packet they send to another node. A node listed
// twice counts once.
func (l *Lab) StartPacket(nodes []string, f PacketFault) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	packet := map[string]PacketFault{}
	for _, id := range nodes {
		if l.byID[id] == nil {
			return fmt.Errorf("packet fault: %q is not a node of this lab (%v)", id, l.cfg.Nodes)
		}
		packet[id] = f
	}
	return l.reshape(l.latencyMs, packet)
}

// StopPacket removes every packet fault at once (the latency stays).
// Packets held for a delay go on at once.
func (l *Lab) StopPacket() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reshape(l.latencyMs, nil)
}

// reshape validates every node's new settings, then applies them:
// duplication at each sender, loss and delay at each receiver. A bad
// setting changes nothing; a kernel error midway leaves the nodes before
// it changed (the error names the node; the run should stop).
func (l *Lab) reshape(latencyMs int, packet map[string]PacketFault) error {
	if l.closed {
		return errClosed
	}
	effective := map[string]PacketFault{}
	for _, n := range l.nodes {
		if err := packet[n.id].validate(latencyMs); err != nil {
			return fmt.Errorf("node %s: %w", n.id, err)
		}
		effective[n.id] = packet[n.id].withLatency(latencyMs)
	}
	var errs []error
	for _, n := range l.nodes {
		errs = append(errs, n.shaper.duplicate(effective[n.id].DuplicatePct))
	}
	for _, r := range l.nodes {
		in, sources := l.inboundTo(r, effective)
		errs = append(errs, r.shaper.receive(in, sources))
	}
	l.latencyMs, l.packet = latencyMs, maps.Clone(packet)
	return errors.Join(errs...)
}

// inboundTo is what receiver r does to every other node's packets.
func (l *Lab) inboundTo(r *Namespace, effective map[string]PacketFault) ([]inbound, map[uint16]source) {
	var in []inbound
	sources := map[uint16]source{}
	for _, x := range l.nodes {
		f := effective[x.id]
		if x == r || (f.LossPct == 0 && !f.delays()) {
			continue
		}
		rule := inbound{from: x.addr, lossPct: f.LossPct}
		if f.delays() {
			rule.queue = x.shaper.queue
			sources[rule.queue] = source{fault: f, rng: r.shaper.rng(x), stats: &x.shaper.stats}
		}
		in = append(in, rule)
	}
	return in, sources
}

// PacketStats is, per node id, what the delay paths did with the packets
// that node sent, since the lab was created.
func (l *Lab) PacketStats() map[string]PacketStats {
	stats := map[string]PacketStats{}
	for _, n := range l.nodes {
		stats[n.id] = n.shaper.stats.snapshot()
	}
	return stats
}
