package netsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// PacketFault is what a node's link does, for a while, to every message
// the node sends to another node (never to or from a client, whose links
// have no latency either): Jepsen's packet nemesis on the simulated
// network. The zero value does nothing.
type PacketFault struct {
	DelayMs      int     // added to the latency of each message
	JitterMs     int     // the added delay is uniform in [DelayMs-JitterMs, DelayMs+JitterMs], never below 0
	LossPct      float64 // this share of messages is lost (counted as a drop)
	DuplicatePct float64 // this share is delivered twice, each copy with its own loss and delay draws
	ReorderPct   float64 // this share skips the added delay, overtaking delayed messages
}

// Validate says what is wrong with f; nil when the network can carry it.
func (f PacketFault) Validate() error {
	if f.DelayMs < 0 || f.JitterMs < 0 {
		return fmt.Errorf("packet fault: delay %d ms and jitter %d ms must be >= 0", f.DelayMs, f.JitterMs)
	}
	for _, pct := range []float64{f.LossPct, f.DuplicatePct, f.ReorderPct} {
		if math.IsNaN(pct) || pct < 0 || pct > 100 {
			return fmt.Errorf("packet fault: %g is not a percentage in 0..100", pct)
		}
	}
	return nil
}

// packetStream seeds the packet faults' draws apart from the latency
// draws, so a run without packet faults draws exactly as before.
const packetStream = 0x7061636b6574 // "packet"

// StartPacket puts fault f on the links of nodes (replacing any fault
// they had) until StopPacket. A message already queued is not affected.
func (n *Net) StartPacket(nodes []string, f PacketFault) error {
	if err := f.Validate(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, node := range nodes {
		if err := n.check("node", node); err != nil {
			return err
		}
	}
	if n.packet == nil {
		n.packet = map[string]PacketFault{}
	}
	for _, node := range nodes {
		n.packet[node] = f
	}
	return nil
}

// StopPacket puts every link back to normal and returns the nodes whose
// links had a fault, sorted.
func (n *Net) StopPacket() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	nodes := make([]string, 0, len(n.packet))
	for node := range n.packet {
		nodes = append(nodes, node)
	}
	slices.Sort(nodes)
	n.packet = nil
	return nodes
}

// sendFaulty queues m, which crosses a link with fault f, on in: one
// copy, or two when drawn duplicated; each copy is lost (a drop) or
// delivered after latency plus the fault's delay (none when drawn
// reordered). The network's lock is held.
func (n *Net) sendFaulty(in *inbox, m Message, latency time.Duration, f PacketFault) {
	copies := 1
	if chance(n.prng, f.DuplicatePct) {
		copies = 2
	}
	for range copies {
		if chance(n.prng, f.LossPct) {
			n.note(m, dropped)
			continue
		}
		delay := latency
		if !chance(n.prng, f.ReorderPct) {
			delay += faultDelay(n.prng, f)
		}
		n.push(in, m, delay)
	}
}

// chance draws true with probability pct percent.
func chance(rng *rand.Rand, pct float64) bool {
	return pct > 0 && rng.Float64()*100 < pct
}

// faultDelay draws the added delay: uniform within the jitter, in
// nanoseconds, never below 0.
func faultDelay(rng *rand.Rand, f PacketFault) time.Duration {
	d := time.Duration(f.DelayMs) * time.Millisecond
	if f.JitterMs > 0 {
		j := time.Duration(f.JitterMs) * time.Millisecond
		d += time.Duration(rng.Int64N(int64(2*j)+1)) - j
	}
	return max(d, 0)
}
