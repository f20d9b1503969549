package netns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	vnetns "github.com/vishvananda/netns"
)

// Lab is one run's network: a switch, a client namespace and one
// namespace per node. Its fault methods (Partition, Heal, SetLatency,
// StartPacket, StopPacket) may be called from any goroutine; Close ends
// it and must come last.
type Lab struct {
	name   labName
	cfg    Config
	origin vnetns.NsHandle // the harness's own namespace
	sw     *Namespace
	client *Namespace
	nodes  []*Namespace
	byID   map[string]*Namespace

	mu        sync.Mutex // serializes faults and Close
	latencyMs int
	packet    map[string]PacketFault // node id -> its packet fault
	closed    bool
}

var errClosed = errors.New("the lab is closed")

// labSeq numbers this process's labs.
var labSeq atomic.Uint64

// Create builds a lab for cfg. It first removes every stale lab (one
// whose creating process is gone), saying so through cfg.Logf. On error
// nothing of the new lab is left.
func Create(ctx context.Context, cfg Config) (*Lab, error) {
	if err := Check(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	logf := cfg.logf()
	removed, err := CleanStale()
	for _, m := range removed {
		logf("%s", m)
	}
	if err != nil {
		return nil, err
	}
	name, err := newLabName()
	if err != nil {
		return nil, err
	}
	cfg.Nodes = slices.Clone(cfg.Nodes) // the caller's slice stays the caller's
	l := &Lab{name: name, cfg: cfg, byID: map[string]*Namespace{}}
	if err := l.build(ctx); err != nil {
		l.Close()
		return nil, fmt.Errorf("create lab %s: %w", name, err)
	}
	return l, nil
}

func (c Config) logf() func(string, ...any) {
	if c.Logf != nil {
		return c.Logf
	}
	return func(format string, args ...any) { fmt.Fprintf(os.Stderr, "netns: "+format+"\n", args...) }
}

func newLabName() (labName, error) {
	pid := os.Getpid()
	st, err := readProcStat(pid)
	if err != nil {
		return labName{}, fmt.Errorf("lab name: %w", err)
	}
	return labName{pid: pid, startTicks: st.startTicks, seq: labSeq.Add(1)}, nil
}

// build creates the namespaces, wires them and writes the nodes' tables.
func (l *Lab) build(ctx context.Context) error {
	var err error
	if l.origin, err = vnetns.Get(); err != nil {
		return fmt.Errorf("the harness's own namespace: %w", err)
	}
	if l.sw, err = l.newMember(memberSwitch, memberSwitch); err != nil {
		return err
	}
	if l.client, err = l.newMember(memberClient, memberClient); err != nil {
		return err
	}
	l.client.addr = clientAddr
	for i, id := range l.cfg.Nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := l.newMember(id, memberNode+id)
		if err != nil {
			return err
		}
		n.addr = nodeAddr(i)
		n.shaper = newShaper(n, i, l.cfg.Seed)
	}
	if err := l.wire(); err != nil {
		return err
	}
	if err := l.writeTables(); err != nil {
		return err
	}
	return l.waitLinks(ctx)
}

// newMember creates one namespace and records it (even half made, so
// Close finds it).
func (l *Lab) newMember(id, member string) (*Namespace, error) {
	n, err := newNamespace(id, l.name.namespace(member), l.origin)
	n.lab = l
	if n.handle.IsOpen() {
		if member != memberSwitch && member != memberClient {
			l.nodes = append(l.nodes, n)
			l.byID[id] = n
		}
	}
	return n, err
}

// members are the client and the nodes, in port order (p0, p1, ...).
func (l *Lab) members() []*Namespace {
	return append([]*Namespace{l.client}, l.nodes...)
}

// writeTables gives every node its table and checks, once, that the
// kernel takes the packet rules (the xt NFQUEUE target through
// nft_compat, numgen, dup), so a missing feature fails here and not at
// the first packet fault. The probe's sender, 198.18.0.127, is in the
// node block but never a node's address, so no packet meets it.
func (l *Lab) writeTables() error {
	for _, n := range l.nodes {
		r, err := newRuleset(n, l.name.String())
		if err != nil {
			return err
		}
		n.shaper.rules = r
	}
	s := l.nodes[0].shaper
	unused := netip.AddrFrom4([4]byte{198, 18, 0, 127})
	err := s.rules.setInbound([]inbound{{from: unused, lossPct: 1, queue: 1}})
	if err == nil {
		err = s.rules.setDuplicate(1, s.ifindex)
	}
	if err != nil {
		return fmt.Errorf("this kernel does not take the packet-fault rules (nftables numgen, dup, and iptables' NFQUEUE target through nft_compat): %w", err)
	}
	if err := s.rules.setInbound(nil); err != nil {
		return err
	}
	return s.rules.setDuplicate(0, s.ifindex)
}

// Name is the run's prefix: every namespace of the lab is named
// Name()+"-switch", "-client" or "-node-<id>".
func (l *Lab) Name() string { return l.name.String() }

// Nodes are the node ids, as configured.
func (l *Lab) Nodes() []string { return append([]string(nil), l.cfg.Nodes...) }

// Node is the namespace of node id; nil for an id the lab does not have.
func (l *Lab) Node(id string) *Namespace { return l.byID[id] }

// Client is the namespace of the harness's clients (198.18.0.254): dial
// nodes with Client().DialContext.
func (l *Lab) Client() *Namespace { return l.client }

// Close removes the whole lab: it stops the delay paths (their
// goroutines end before Close returns), kills any process still inside
// one of the lab's namespaces (saying so through Config.Logf: the
// caller should have stopped its own), and deletes the namespaces, with
// which go every link, address, rule and queue. Closing twice is a
// no-op.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	for _, n := range l.nodes {
		if n.shaper == nil {
			continue // Create failed before it was made
		}
		if n.shaper.path != nil {
			errs = append(errs, n.shaper.stopPath())
		}
		if n.shaper.rules != nil {
			n.shaper.rules.close()
		}
	}
	all := l.allMembers()
	if procs := processesIn(inodes(all)); len(procs) > 0 {
		l.cfg.logf()("lab %s: killed %d process(es) left in its namespaces: %s", l.name, len(procs), killAll(procs))
	}
	for _, n := range all {
		errs = append(errs, n.remove())
	}
	if l.origin.IsOpen() {
		l.origin.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close lab %s: %w", l.name, err)
	}
	return nil
}

// allMembers is every namespace made so far, the switch included.
func (l *Lab) allMembers() []*Namespace {
	var all []*Namespace
	for _, n := range append([]*Namespace{l.sw, l.client}, l.nodes...) {
		if n != nil && n.handle.IsOpen() {
			all = append(all, n)
		}
	}
	return all
}

func inodes(ns []*Namespace) map[uint64]string {
	m := map[uint64]string{}
	for _, n := range ns {
		m[n.inode] = n.name
	}
	return m
}

// remove closes the handle and deletes the name, also when /run/netns
// was mounted over meanwhile (deleteName); the kernel frees the
// namespace, its links and its rules once nothing holds it.
func (n *Namespace) remove() error {
	n.handle.Close()
	_, err := deleteName(n.name)
	return err
}
