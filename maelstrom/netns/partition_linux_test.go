package netns

import (
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

const probePort = 9100

// probeNet is one UDP socket per node (and one for the client) for
// one-way probes: UDP shows a single direction, which TCP cannot.
type probeNet struct {
	lab   *Lab
	socks map[string]*net.UDPConn // by node id, and "client"
	seq   int
}

func newProbeNet(t *testing.T, lab *Lab) *probeNet {
	p := &probeNet{lab: lab, socks: map[string]*net.UDPConn{}}
	for _, n := range lab.members() {
		p.socks[n.ID()] = udpSocket(t, n, probePort)
	}
	return p
}

// pairs are every directed pair of distinct nodes.
func (p *probeNet) pairs() [][2]string {
	var pairs [][2]string
	for _, a := range p.lab.Nodes() {
		for _, b := range p.lab.Nodes() {
			if a != b {
				pairs = append(pairs, [2]string{a, b})
			}
		}
	}
	return pairs
}

// check sends one datagram over every directed pair and asserts that
// exactly the pairs in blocked (receiver -> senders) are dropped: the
// others arrive, and each blocked one is counted once by the receiver's
// drop rule for that sender (so it was dropped there, not lost).
func (p *probeNet) check(t *testing.T, blocked map[string][]string) {
	t.Helper()
	before := p.dropCounts(t)
	want := map[string]map[int]string{}   // receiver -> seq -> sender
	banned := map[string]map[int]string{} // the same, for blocked pairs
	for _, pair := range p.pairs() {
		from, to := pair[0], pair[1]
		p.seq++
		sendSeq(t, p.socks[from], p.socks[to], p.seq, 1)
		if slices.Contains(blocked[to], from) {
			if banned[to] == nil {
				banned[to] = map[int]string{}
			}
			banned[to][p.seq] = from
		} else {
			if want[to] == nil {
				want[to] = map[int]string{}
			}
			want[to][p.seq] = from
		}
	}
	for to, seqs := range want {
		got := recvUntil(t, p.socks[to], 5*time.Second, 5*time.Second, func(got []received) bool {
			return countSeen(got, seqs) == len(seqs)
		})
		for seq, from := range seqs {
			if !seen(seq)(got) {
				t.Errorf("%s -> %s: the probe did not arrive, but the grudge allows it", from, to)
			}
		}
		for seq, from := range banned[to] {
			if seen(seq)(got) {
				t.Errorf("%s -> %s: the probe arrived, but the grudge blocks it", from, to)
			}
		}
	}
	waitFor(t, "every blocked probe counted by its drop rule", 5*time.Second, func() bool {
		return p.dropped(t, before) == len(flatten(blocked))
	})
	now := p.dropCounts(t)
	for to, senders := range blocked {
		for _, from := range senders {
			if d := now[to+"<-"+from] - before[to+"<-"+from]; d != 1 {
				t.Errorf("%s drops %s: its rule counted %d probes, want 1", to, from, d)
			}
		}
	}
}

func countSeen(got []received, seqs map[int]string) int {
	n := 0
	for _, r := range got {
		if _, ok := seqs[r.seq]; ok {
			n++
		}
	}
	return n
}

func flatten(g map[string][]string) []string {
	var all []string
	for to, froms := range g {
		for _, f := range froms {
			all = append(all, f+"->"+to)
		}
	}
	return all
}

// dropCounts reads every node's drop counters as "receiver<-sender".
func (p *probeNet) dropCounts(t *testing.T) map[string]uint64 {
	t.Helper()
	counts := map[string]uint64{}
	for _, to := range p.lab.Nodes() {
		c, err := p.lab.Node(to).shaper.rules.dropCounts()
		if err != nil {
			t.Fatal(err)
		}
		for addr, n := range c {
			for _, from := range p.lab.Nodes() {
				if p.lab.Node(from).Addr() == addr {
					counts[to+"<-"+from] = n
				}
			}
		}
	}
	return counts
}

// dropped is how many probes the drop rules counted since before
// (rules rewritten since count from zero).
func (p *probeNet) dropped(t *testing.T, before map[string]uint64) int {
	total := 0
	for k, n := range p.dropCounts(t) {
		total += int(n - min(n, before[k]))
	}
	return total
}

// clientReachesAll: the client's datagram reaches every node and every
// node's reply reaches the client, whatever the partition.
func (p *probeNet) clientReachesAll(t *testing.T) {
	t.Helper()
	for _, id := range p.lab.Nodes() {
		p.seq++
		sendSeq(t, p.socks["client"], p.socks[id], p.seq, 1)
		if got := recvUntil(t, p.socks[id], 5*time.Second, 5*time.Second, seen(p.seq)); !seen(p.seq)(got) {
			t.Errorf("client -> %s: dropped by a partition", id)
		}
		p.seq++
		sendSeq(t, p.socks[id], p.socks["client"], p.seq, 1)
		if got := recvUntil(t, p.socks["client"], 5*time.Second, 5*time.Second, seen(p.seq)); !seen(p.seq)(got) {
			t.Errorf("%s -> client: dropped by a partition", id)
		}
	}
}

// TestPartitionGrudge: a directed ring blocks exactly its three directed
// pairs (the other three still deliver), a symmetric grudge replaces it
// in place, heal restores every pair, and clients are never cut off.
func TestPartitionGrudge(t *testing.T) {
	lab := newLab(t, 3)
	p := newProbeNet(t, lab)
	p.check(t, nil)

	// The 3-node majorities-ring: each node hears only its predecessor.
	ring := map[string][]string{"n1": {"n2"}, "n2": {"n3"}, "n3": {"n1"}}
	if err := lab.Partition(ring); err != nil {
		t.Fatal(err)
	}
	p.check(t, ring)
	p.clientReachesAll(t)

	// One node cut off both ways; n2 and n3 are no longer in the ring.
	isolate := map[string][]string{"n1": {"n2", "n3"}, "n2": {"n1"}, "n3": {"n1"}}
	if err := lab.Partition(isolate); err != nil {
		t.Fatal(err)
	}
	p.check(t, isolate)
	p.clientReachesAll(t)

	if err := lab.Heal(); err != nil {
		t.Fatal(err)
	}
	p.check(t, nil)
	if n := p.dropCounts(t); len(n) != 0 {
		t.Errorf("after heal, drop rules remain: %v", slices.Sorted(maps.Keys(n)))
	}
}

// TestPartitionRejectsBadGrudge: unknown ids and self-drops are errors
// that name the id, and change nothing.
func TestPartitionRejectsBadGrudge(t *testing.T) {
	lab := newLab(t, 2)
	if err := lab.Partition(map[string][]string{"n1": {"n2"}}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []map[string][]string{
		{"n9": {"n1"}},
		{"n1": {"n9"}},
		{"n2": {"n2"}},
	} {
		err := lab.Partition(g)
		if err == nil {
			t.Errorf("Partition(%v) = nil, want an error", g)
			continue
		}
		if !strings.Contains(err.Error(), "n9") && !strings.Contains(err.Error(), "itself") {
			t.Errorf("Partition(%v) = %q: does not name the problem", g, err)
		}
	}
	counts, err := lab.Node("n1").shaper.rules.dropCounts()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := counts[lab.Node("n2").Addr()]; !ok || len(counts) != 1 {
		t.Errorf("a rejected grudge changed n1's rules: %v", counts)
	}
}
