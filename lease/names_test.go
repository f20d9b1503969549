package lease

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNameTableAgainstOracle drives a nameTable with random holds, call
// ends, retains, releases and compactions, beside a map of reference
// counts by name; after every step the table must agree with it: a name
// is known exactly while referenced, its id names it, and free ids are
// empty.
func TestNameTableAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t), 2))
	tab := newNameTable()
	refs := map[string]int{} // the oracle, call references included
	var stored []string      // names referenced outside calls, one entry per reference
	var inCall []string
	for step := range 20000 {
		switch k := rng.IntN(10); {
		case k < 4: // a message names a server
			s := "s" + strconv.Itoa(rng.IntN(60))
			id := tab.hold(s)
			refs[s]++
			inCall = append(inCall, s)
			if rng.IntN(2) == 0 { // and a record stores it
				tab.retain(id)
				refs[s]++
				stored = append(stored, s)
			}
		case k < 6 && len(stored) > 0: // a record is dropped or renamed
			i := rng.IntN(len(stored))
			id, _ := tab.lookup(stored[i])
			tab.release(id)
			refs[stored[i]]--
			stored = append(stored[:i], stored[i+1:]...)
		case k < 8: // the call returns
			tab.endCall()
			for _, s := range inCall {
				refs[s]--
			}
			inCall = inCall[:0]
		case k < 9 && tab.sparse():
			before := map[string]uint32{}
			for _, s := range stored {
				before[s], _ = tab.lookup(s)
			}
			remap := tab.compact()
			for s, id := range before {
				if got, _ := tab.lookup(s); remap[id] != got || tab.name(got) != s {
					t.Fatalf("step %d: compact renamed %q: old id %d maps to %d, lookup says %d", step, s, id, remap[id], got)
				}
			}
		}
		checkNameTable(t, fmt.Sprintf("step %d", step), &tab, refs)
	}
}

func checkNameTable(t *testing.T, where string, tab *nameTable, refs map[string]int) {
	t.Helper()
	live := 0
	for s, r := range refs {
		id, ok := tab.lookup(s)
		switch {
		case r == 0 && ok:
			t.Fatalf("%s: %q is unreferenced but still known (id %d)", where, s, id)
		case r > 0 && (!ok || tab.name(id) != s || int(tab.refs[id]) != r):
			t.Fatalf("%s: %q has %d references; the table: known=%v id=%d name=%q refs=%d", where, s, r, ok, id, tab.name(id), tab.refs[id])
		case r > 0:
			live++
		}
	}
	if tab.len() != live {
		t.Fatalf("%s: the table knows %d names, %d are referenced", where, tab.len(), live)
	}
	for _, id := range tab.free {
		if tab.names[id] != "" || tab.refs[id] != 0 {
			t.Fatalf("%s: free id %d still names %q with %d references", where, id, tab.names[id], tab.refs[id])
		}
	}
}

// TestAnEmptiedNameTableGivesItsIdsBack: a table compacted at one name
// (peak 1) that then loses that name is sparse, and compacting leaves
// only noServer. (Found by TestServerNamesFollowRecords with seed
// 10727798660565687947: "0 names, 2 ids kept" after every lease ended.)
func TestAnEmptiedNameTableGivesItsIdsBack(t *testing.T) {
	tab := newNameTable()
	for _, s := range []string{"cs1", "cs2", "cs3"} {
		tab.retain(tab.hold(s))
	}
	tab.endCall()
	for _, s := range []string{"cs1", "cs2"} {
		id, _ := tab.lookup(s)
		tab.release(id)
	}
	if !tab.sparse() {
		t.Fatalf("1 name in use of a peak of 3 is not sparse")
	}
	tab.compact() // peak 1 now
	id, _ := tab.lookup("cs3")
	tab.release(id)
	if !tab.sparse() {
		t.Fatalf("no name in use of a peak of 1 is not sparse: the last id would be kept for ever")
	}
	tab.compact()
	if len(tab.names) != 1 || tab.len() != 0 || len(tab.free) != 0 {
		t.Fatalf("after the last name went: %d ids kept, %d names, %d free ids; want noServer alone", len(tab.names), tab.len(), len(tab.free))
	}
}

// TestServerNamesFollowRecords runs a 3-node cluster through random
// grants, renews, releases and checks of many chunks by many servers,
// with lost and duplicated messages and time passing; after every call
// each node's name table must hold exactly one reference per record that
// names a server, none left from the call, and after every sweep each
// remaining record must still name the same server (the sweep may
// renumber). When every lease has ended and two sweeps passed, no name is
// left: the names went with the chunks that used them.
func TestServerNamesFollowRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t), 3))
	ids := []string{"n1", "n2", "n3"}
	c := newNameCluster(t, ids)
	now := time.Duration(0)
	for i := range 3000 {
		now += time.Duration(rng.IntN(40)) * time.Millisecond
		chunk := "ch" + strconv.Itoa(rng.IntN(40))
		server := "cs" + strconv.Itoa(i/100) + "-" + strconv.Itoa(rng.IntN(8)) // new names keep coming
		req := Request{ID: uint64(i + 1), Op: OpGrant + Op(rng.IntN(4)), Chunk: chunk, Server: server, LeaseMs: 50 + int64(rng.IntN(400))}
		if req.Op == OpRelease {
			if req.Token = c.tokens[chunk+"/"+server]; req.Token == 0 {
				req.Token = 1
			}
			req.LeaseMs = 0
		} else if req.Op == OpCheck {
			req.LeaseMs = 0
		}
		c.reqs[req.ID] = chunk + "/" + server
		c.absorb(now, c.nodes[ids[rng.IntN(3)]].Request(now, req))
		c.deliver(rng, now)
		if rng.IntN(5) == 0 {
			c.tick(now)
		}
	}
	for round := 0; round < 4; round++ { // every lease ends, two sweeps and more pass
		now += 2 * time.Second
		c.tick(now)
		c.deliver(rng, now)
	}
	for id, n := range c.nodes {
		if n.chunks.len() != 0 || n.chunks.names.len() != 0 || len(n.chunks.names.names) > 1 {
			t.Fatalf("%s: after every lease ended and the sweeps: %d chunks, %d names, %d ids kept",
				id, n.chunks.len(), n.chunks.names.len(), len(n.chunks.names.names))
		}
	}
}

// nameCluster is a small cluster for TestServerNamesFollowRecords.
type nameCluster struct {
	t      *testing.T
	nodes  map[string]*Node
	queue  []Msg
	reqs   map[uint64]string // request id -> chunk/server
	tokens map[string]int64  // chunk/server -> latest token
}

func newNameCluster(t *testing.T, ids []string) *nameCluster {
	c := &nameCluster{t: t, nodes: map[string]*Node{}, reqs: map[uint64]string{}, tokens: map[string]int64{}}
	for i, id := range ids {
		n, err := NewNode(Config{ID: id, Acceptors: ids, Incarnation: 1, Nonce: 1, MaxLeaseMs: 1000, QuorumTimeoutMs: 300,
			Rand: rand.New(rand.NewPCG(uint64(i), 9))}, 0)
		if err != nil {
			t.Fatal(err)
		}
		c.nodes[id] = n
	}
	return c
}

// absorb queues a call's messages, learns tokens from its replies and
// checks every node's name table.
func (c *nameCluster) absorb(now time.Duration, out *Output) {
	c.queue = append(c.queue, out.Msgs...)
	for _, r := range out.Replies {
		key := c.reqs[r.ID]
		switch b := r.Body.(type) {
		case GrantOK:
			if strings.HasSuffix(key, "/"+b.Primary) {
				c.tokens[key] = b.Token
			}
		case RenewOK:
			c.tokens[key] = b.Token
		}
	}
	for id, n := range c.nodes {
		checkRecordNames(c.t, fmt.Sprintf("%s at %v", id, now), n)
	}
}

// deliver delivers the queued messages, losing and duplicating some.
func (c *nameCluster) deliver(rng *rand.Rand, now time.Duration) {
	for len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		switch rng.IntN(20) {
		case 0:
			continue
		case 1:
			c.queue = append(c.queue, m)
		}
		c.absorb(now, c.nodes[m.To].Receive(now, m))
	}
}

// tick lets time pass at every node; a sweep may renumber the names, and
// must not rename any record it keeps.
func (c *nameCluster) tick(now time.Duration) {
	for id, n := range c.nodes {
		before := recordNames(n)
		c.absorb(now, n.Tick(now))
		for chunk, got := range recordNames(n) {
			if got != before[chunk] {
				c.t.Fatalf("%s at %v: the sweep renamed %s's last holder from %q to %q", id, now, chunk, before[chunk], got)
			}
		}
	}
}

// recordNames is the server each chunk record names, by chunk.
func recordNames(n *Node) map[string]string {
	names := map[string]string{}
	for chunk, i := range n.chunks.index {
		names[chunk] = n.serverName(n.chunks.slab[i].server())
	}
	return names
}

// checkRecordNames recounts the references the records hold.
func checkRecordNames(t *testing.T, where string, n *Node) {
	t.Helper()
	tab := &n.chunks.names
	if len(tab.call) != 0 {
		t.Fatalf("%s: %d name references outlived the call", where, len(tab.call))
	}
	want := map[uint32]uint32{}
	for _, i := range n.chunks.index {
		if id := n.chunks.slab[i].server(); id != noServer {
			want[id]++
		}
	}
	for id := range tab.names {
		if tab.refs[id] != want[uint32(id)] {
			t.Fatalf("%s: id %d (%q) has %d references, %d records name it", where, id, tab.names[id], tab.refs[id], want[uint32(id)])
		}
	}
	if tab.len() != len(want) {
		t.Fatalf("%s: %d names known, %d named by records", where, tab.len(), len(want))
	}
}
