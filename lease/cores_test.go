package lease

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCoreOfPartitionsChunks: every chunk has exactly one core, the same
// on every call and in range; the empty handle (the master lease) is the
// lead's; one core serves everything; and the hash spreads chunk names
// of the usual shapes evenly (within 10% of a fair share over 20 000).
func TestCoreOfPartitionsChunks(t *testing.T) {
	for cores := 1; cores <= MaxCores; cores++ {
		if CoreOf("", cores) != 0 {
			t.Fatalf("the master lease's instance is on core %d of %d, not the lead's", CoreOf("", cores), cores)
		}
		for _, shape := range chunkShapes {
			count := make([]int, cores)
			const chunks = 20_000
			for i := range chunks {
				c := fmt.Sprintf(shape, i)
				k := CoreOf(c, cores)
				if k < 0 || k >= cores || k != CoreOf(strings.Clone(c), cores) {
					t.Fatalf("chunk %s: core %d of %d, then %d", c, k, cores, CoreOf(c, cores))
				}
				count[k]++
			}
			fair := chunks / cores
			if lo, hi := slices.Min(count), slices.Max(count); cores > 1 && cores <= 16 && (lo < fair*9/10 || hi > fair*11/10) {
				t.Errorf("%d cores, chunks %q: between %d and %d of %d chunks a core, a fair share is %d", cores, shape, lo, hi, chunks, fair)
			}
		}
	}
}

// chunkShapes are handles as users name them: short and long, numbered
// at the end, padded, and numbered in the middle of a path.
var chunkShapes = []string{"ch_%d", "bench-%d", "chunk-%08d", "%d", "tenant-7/volume-%d/chunk-0000", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%d"}

// BenchmarkCoreOf: the hash every input of a member of several cores
// takes at least twice (the shell's routing, the core's owns).
func BenchmarkCoreOf(b *testing.B) {
	for _, shape := range []string{"bench-%d", "tenant-7/volume-%04d/chunk-00000001"} {
		names := make([]string, 64)
		for i := range names {
			names[i] = fmt.Sprintf(shape, i)
		}
		b.Run(fmt.Sprintf("bytes=%d", len(names[10])), func(b *testing.B) {
			sum := 0
			for i := range b.N {
				sum += CoreOf(names[i&63], 3)
			}
			if sum < 0 {
				b.Fatal(sum)
			}
		})
	}
}

// TestRouteSendsNodeLevelMessagesToEveryCore: sync and its answer go to
// every core; every other message to its chunk's core.
func TestRouteSendsNodeLevelMessagesToEveryCore(t *testing.T) {
	for _, typ := range []MsgType{MsgPrepare, MsgPrepareResp, MsgPropose, MsgProposeResp, MsgRead, MsgReadResp,
		MsgRelease, MsgReleaseResp, MsgSync, MsgSyncResp, MsgCancel, MsgCancelResp, MsgBooting} {
		for _, chunk := range []string{"", "a", "ch_17", "another chunk"} {
			core, every := Route(&Msg{Type: typ, Chunk: chunk}, 3)
			wantEvery := typ == MsgSync || typ == MsgSyncResp
			if every != wantEvery || !every && core != CoreOf(chunk, 3) {
				t.Errorf("%s of %q: core %d, every %v", typ, chunk, core, every)
			}
		}
	}
}

// TestACoreServesOnlyItsChunks: a request for a chunk another core
// serves is refused definitely (error 11, nothing sent) and names the
// core that serves it; a peer message for such a chunk changes nothing
// and is not answered; the core's own chunks are served.
func TestACoreServesOnlyItsChunks(t *testing.T) {
	cores, err := NewCores(Config{ID: "n1", Acceptors: []string{"n1"}, MaxLeaseMs: 1000, Nonce: 1}, 2, 0,
		func(i int) *rand.Rand { return rand.New(rand.NewPCG(1, uint64(i))) })
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		chunk := fmt.Sprint("c", i)
		own, other := cores[CoreOf(chunk, 2)], cores[1-CoreOf(chunk, 2)]
		before := other.Stats(0).Chunks
		out := other.Request(0, Request{ID: 1, Op: OpGrant, Chunk: chunk, Server: "s"})
		if len(out.Msgs) != 0 || len(out.Replies) != 1 || out.Replies[0].Err == nil || out.Replies[0].Err.Code != CodeTemporarilyUnavailable ||
			!strings.Contains(out.Replies[0].Err.Text, fmt.Sprintf("core %d serves it", CoreOf(chunk, 2))) {
			t.Fatalf("a grant of %s at the wrong core: %+v", chunk, out)
		}
		m := Msg{Type: MsgPrepare, From: "n2", To: "n1", Chunk: chunk, Server: "s", Ballot: Ballot{Counter: 1 << 20, Incarnation: 1}}
		if out := other.Receive(0, m); len(out.Msgs) != 0 {
			t.Fatalf("the wrong core answered a prepare for %s: %+v", chunk, out.Msgs)
		}
		if other.Stats(0).Chunks != before {
			t.Fatalf("the wrong core keeps state for %s", chunk)
		}
		if out := own.Request(0, Request{ID: 2, Op: OpGrant, Chunk: chunk, Server: "s"}); len(out.Replies) != 1 || out.Replies[0].Err != nil {
			t.Fatalf("the grant of %s at its own core: %+v", chunk, out.Replies)
		}
	}
}

// testMember builds the cores of one member: acceptor n1 of acc,
// restarted (boot wait 1 s) at time 0.
func testMember(t *testing.T, acc []string, cores int, w weakening) []*Node {
	t.Helper()
	nodes, err := NewCores(Config{ID: "n1", Acceptors: acc, MaxLeaseMs: 1000, BootWaitMs: 1000, Incarnation: 7, Nonce: 7, weaken: w}, cores, 0,
		func(i int) *rand.Rand { return rand.New(rand.NewPCG(1, uint64(i))) })
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// TestOnlyTheLeadCoreAsksAndEveryCoreRecovers: a restarted member of
// three cores sends one sync round (the lead's), every core answers a
// sync for itself, naming its core, and every core ends its recovery on
// the answers the lead's round brought back (the shell hands them to
// every core).
func TestOnlyTheLeadCoreAsksAndEveryCoreRecovers(t *testing.T) {
	acc := []string{"n1", "n2", "n3"}
	cores := testMember(t, acc, 3, strong)
	var syncs []Msg
	for i, c := range cores {
		for _, m := range c.Tick(0).Msgs {
			if m.Type != MsgSync || i != 0 {
				t.Fatalf("core %d sent %+v at its first tick; only the lead sends sync rounds", i, m)
			}
			syncs = append(syncs, m)
		}
		if !c.Recovering() {
			t.Fatalf("core %d is not recovering after a restart", i)
		}
	}
	if len(syncs) != 2 {
		t.Fatalf("the lead sent %d syncs, want one to each other acceptor", len(syncs))
	}
	// A peer of two cores answers: each core names itself.
	peer := testPeer(t, "n2", acc, 2)
	var answers []Msg
	for _, pc := range peer {
		out := pc.Receive(time.Second, Msg{Type: MsgSync, From: "n1", To: "n2", ReqID: 7, Nonce: 7})
		answers = append(answers, out.Msgs...)
	}
	if len(answers) != 2 || answers[0].Core != 0 || answers[1].Core != 1 || answers[0].Cores != 2 || answers[1].Cores != 2 {
		t.Fatalf("the two cores of n2 answered %+v, want one answer each naming core 0 and 1 of 2", answers)
	}
	fromN3 := testPeer(t, "n3", acc, 1)[0].Receive(time.Second, Msg{Type: MsgSync, From: "n1", To: "n3", ReqID: 7, Nonce: 7}).Msgs
	if len(fromN3) != 1 || fromN3[0].Cores != 0 {
		t.Fatalf("n3, of one core, answered %+v: want one answer naming no core", fromN3)
	}
	for i, c := range cores {
		c.Receive(time.Millisecond, fromN3[0])
		c.Receive(time.Millisecond, answers[0])
		if !c.Recovering() {
			t.Fatalf("core %d recovered on n3's answer and one of n2's two cores' answers", i)
		}
		c.Receive(time.Millisecond, answers[1])
		if c.Recovering() {
			t.Fatalf("core %d still recovers with n3 and both cores of n2 answered (n-q+1 = 2 peers needed)", i)
		}
	}
}

// testPeer builds the cores of acceptor id, not restarted.
func testPeer(t *testing.T, id string, acc []string, cores int) []*Node {
	t.Helper()
	nodes, err := NewCores(Config{ID: id, Acceptors: acc, MaxLeaseMs: 1000, Incarnation: 3, Nonce: 3}, cores, 0,
		func(i int) *rand.Rand { return rand.New(rand.NewPCG(2, uint64(i))) })
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// TestRecoveryWaitsForEveryCoreOfAPeer is the recovery guard's property
// for peers of several cores (doc.go "Cores sharing one member"): each of
// a peer's cores knows the promises of its own chunks only, and the
// restarted core's chunks may be any of them, so a restarted core counts
// a peer as answered only once each of the peer's cores answered (from
// any start of the peer with that many cores: each answer covers its
// core's chunks as a whole member's answer would). Whenever it ends its
// recovery, n-q+1 peers not restarting (or q-1 peers) have, and its
// floor is at least every mark it heard. Answers arrive in any order,
// duplicated, and peers restart meanwhile with another number of cores.
func TestRecoveryWaitsForEveryCoreOfAPeer(t *testing.T) {
	if err := recoveryCoresRounds(propSeed(t), strong, 500); err != nil {
		t.Fatal(err)
	}
}

// peerStart is one start of a simulated peer: its cores' marks, and
// whether it is recovering itself.
type peerStart struct {
	marks      []uint64
	restarting bool
}

func newPeerStart(rng *rand.Rand) peerStart {
	s := peerStart{marks: make([]uint64, 1+rng.IntN(4)), restarting: rng.IntN(6) == 0}
	for k := range s.marks {
		s.marks[k] = uint64(rng.Int64N(1 << 40))
	}
	return s
}

// answers are a start's sync answers, one a core.
func (s peerStart) answers(from string) []Msg {
	var out []Msg
	for k, mark := range s.marks {
		m := Msg{Type: MsgSyncResp, From: from, To: "n1", ReqID: 7, Nonce: 7, Counter: mark, Recovering: s.restarting}
		if len(s.marks) > 1 {
			m.Core, m.Cores = k, len(s.marks)
		}
		out = append(out, m)
	}
	return out
}

func recoveryCoresRounds(seed uint64, w weakening, rounds int) error {
	rng := rand.New(rand.NewPCG(seed, 0xc0e5))
	acc := []string{"n1", "n2", "n3", "n4", "n5"}
	for round := range rounds {
		cores := 1 + rng.IntN(4)
		n, err := NewNode(Config{ID: "n1", Acceptors: acc, MaxLeaseMs: 1000, BootWaitMs: 1000, Incarnation: 7, Nonce: 7,
			Core: rng.IntN(cores), Cores: cores, Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}, 0)
		if err != nil {
			return err
		}
		latest := map[string]peerStart{}
		for _, p := range acc[1:] {
			latest[p] = newPeerStart(rng)
		}
		var inFlight, heard []Msg
		for step := 0; n.Recovering() && step < 300; step++ {
			p := acc[1+rng.IntN(len(acc)-1)]
			switch r := rng.IntN(10); {
			case r == 0: // the peer restarts, perhaps with another number of cores
				latest[p] = newPeerStart(rng)
			case r < 4 || len(inFlight) == 0: // its latest start answers, every core
				inFlight = append(inFlight, latest[p].answers(p)...)
			default: // one answer arrives, perhaps to arrive again later
				i := rng.IntN(len(inFlight))
				m := inFlight[i]
				if rng.IntN(5) > 0 {
					inFlight = slices.Delete(inFlight, i, i+1)
				}
				n.Receive(time.Duration(step)*time.Millisecond, m)
				heard = append(heard, m)
				if err := checkRecovered(n, heard, len(acc)); err != nil {
					return fmt.Errorf("seed %d round %d (core %d of %d): %v", seed, round, n.cfg.Core, cores, err)
				}
			}
		}
	}
	return nil
}

// checkRecovered checks, after each answer, that the floor is at least
// each peer's first mark (as TestRecoveryFloorIsTheLargestAnswer; later
// ones from a core already heard may be left out), and that a core that
// ended its recovery heard each core of enough peers: n-q+1 with answers
// that say they are not restarting, or q-1 with any answers.
func checkRecovered(n *Node, heard []Msg, total int) error {
	first := map[string]bool{}
	for _, m := range heard {
		if !first[m.From] && m.Counter > n.floor {
			return fmt.Errorf("floor %d below %s's first mark %d", n.floor, m.From, m.Counter)
		}
		first[m.From] = true
	}
	if n.Recovering() {
		return nil
	}
	ready, any := 0, 0
	for _, p := range []string{"n2", "n3", "n4", "n5"} {
		ready += b2i(everyCoreAnswered(heard, p, false))
		any += b2i(everyCoreAnswered(heard, p, true))
	}
	if q := total/2 + 1; ready < total-q+1 && any < q-1 {
		return fmt.Errorf("recovered when each core had answered of only %d peers not restarting and %d peers in all (%d answers)",
			ready, any, len(heard))
	}
	return nil
}

// everyCoreAnswered reports whether, for some number of cores k, each
// core 0..k-1 of peer p sent an answer among heard (one not restarting,
// unless restartingToo).
func everyCoreAnswered(heard []Msg, p string, restartingToo bool) bool {
	got := map[int]uint64{} // cores -> the cores heard, a bit each
	for _, m := range heard {
		if m.From == p && (restartingToo || !m.Recovering) {
			got[max(m.Cores, 1)] |= 1 << uint(m.Core)
		}
	}
	for k, set := range got {
		if set == 1<<uint(k)-1 {
			return true
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// membershipCores is member n1 of n1, n2, n3 with membership on, on
// cores cores, serving at once (a first start).
func membershipCores(t *testing.T, cores int, w weakening) []*Node {
	t.Helper()
	nodes, err := NewCores(Config{ID: "n1", Acceptors: []string{"n1", "n2", "n3"}, MaxLeaseMs: 1000, Incarnation: 5, Nonce: 5,
		Membership: true, weaken: w}, cores, 0, func(i int) *rand.Rand { return rand.New(rand.NewPCG(5, uint64(i))) })
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// chunkOf is a chunk handle core serves in a member of cores cores.
func chunkOf(core, cores int) string {
	for i := 0; ; i++ {
		if c := fmt.Sprint("c", i); CoreOf(c, cores) == core {
			return c
		}
	}
}

// TestChangePrepareReportsEveryCoresMark: a change prepare reaches every
// core of a member (Route); the lead promises, naming itself, and every
// other core answers with its own high-water mark, which covers the
// ballots it promised on its chunks and the lead's does not (doc.go
// "Membership and cores").
func TestChangePrepareReportsEveryCoresMark(t *testing.T) {
	nodes := membershipCores(t, 2, strong)
	if _, every := Route(&Msg{Type: MsgChangePrepare}, 2); !every {
		t.Fatal("a change prepare is not routed to every core")
	}
	high := uint64(1) << 40
	chunk := chunkOf(1, 2)
	nodes[1].Receive(0, Msg{Type: MsgPrepare, From: "n2", To: "n1", Chunk: chunk, Server: "s", Ballot: Ballot{Counter: high, Incarnation: 9}})
	prep := Msg{Type: MsgChangePrepare, From: "n2", To: "n1", Ballot: Ballot{Counter: 7, Incarnation: 9}, Active: true}
	var answers []Msg
	for _, n := range nodes {
		answers = append(answers, n.Receive(time.Millisecond, prep).Msgs...)
	}
	if len(answers) != 2 {
		t.Fatalf("answers %+v, want one from each core", answers)
	}
	lead, part := answers[0], answers[1]
	switch {
	case lead.Type != MsgChangePrepareResp || !lead.OK || lead.Core != 0 || lead.Cores != 2:
		t.Errorf("the lead's answer %+v: want a promise naming core 0 of 2", lead)
	case lead.Counter >= high:
		t.Errorf("the lead's mark %d covers core 1's promise %d: the test shows nothing", lead.Counter, high)
	}
	if part.Type != MsgChangePrepareResp || !part.OK || part.Core != 1 || part.Cores != 2 || part.Counter < high {
		t.Errorf("core 1's answer %+v: want its mark >= %d, naming core 1 of 2", part, high)
	}
}

// TestChangerCountsAMemberOnceEveryCoreAnswered: the changer counts a
// member of several cores as promised only once its lead promised and
// each of its cores reported its mark, and then with the highest mark; a
// lead's refusal counts at once. The membership-one-core-mark weakening
// counts the lead's promise alone, with its own mark.
func TestChangerCountsAMemberOnceEveryCoreAnswered(t *testing.T) {
	lead := Msg{Type: MsgChangePrepareResp, From: "n2", OK: true, Counter: 5, Core: 0, Cores: 3}
	part := func(core int, counter uint64) Msg {
		return Msg{Type: MsgChangePrepareResp, From: "n2", OK: true, Counter: counter, Core: core, Cores: 3}
	}
	var c changeRun
	for _, m := range []Msg{lead, part(2, 11), part(2, 11)} {
		if _, ok := c.wholeMember(1, m); ok {
			t.Fatalf("counted after %+v, before core 1 answered", m)
		}
	}
	whole, ok := c.wholeMember(1, part(1, 8))
	if !ok || !whole.OK || whole.Core != 0 || whole.Counter != 11 {
		t.Fatalf("after every core: %+v %v, want the lead's promise with mark 11", whole, ok)
	}
	var d changeRun
	if _, ok := d.wholeMember(1, Msg{Type: MsgChangePrepareResp, From: "n2", WaitMs: 300, Core: 0, Cores: 3}); !ok {
		t.Error("a lead's refusal waits for the other cores")
	}
	if _, ok := d.wholeMember(2, part(1, 3)); ok {
		t.Error("a core other than the lead counted without the lead")
	}
}

// TestLeadPromisesNoChangeUntilEveryCoreAdopted: a lead of several
// cores that adopted a configuration promises no change until the shell
// says every core holds it (Node.Adopt), and then only once the waiting
// rule has run again from that call; with one core the rule runs from
// its own adoption. membership-cores-no-confirm promises without it.
func TestLeadPromisesNoChangeUntilEveryCoreAdopted(t *testing.T) {
	m := time.Duration(stretch(ms(1000), 0))
	conf := Membership{Epoch: 1, Members: []string{"n1", "n2", "n3", "n4"}, Prev: []string{"n1", "n2", "n3"}}
	prep := func(at time.Duration, counter uint64) Msg {
		return Msg{Type: MsgChangePrepare, From: "n2", To: "n1", Epoch: 1, Ballot: Ballot{Counter: counter, Incarnation: 9}, Active: true}
	}
	for _, tc := range []struct {
		name    string
		cores   int
		w       weakening
		confirm bool
		want    bool // promised after the wait from its own adoption
	}{
		{"one core", 1, strong, false, true},
		{"two cores, no word from the shell", 2, strong, false, false},
		{"two cores, without the confirmation", 2, weakCoresNoConfirm, false, true},
	} {
		nodes := membershipCores(t, tc.cores, tc.w)
		nodes[0].Receive(0, Msg{Type: MsgConfig, From: "n2", To: "n1", Conf: &conf})
		out := nodes[0].Receive(m+time.Millisecond, prep(m, 10))
		if got := len(out.Msgs) == 1 && out.Msgs[0].OK; got != tc.want {
			t.Errorf("%s: promised %v after the wait, want %v (%+v)", tc.name, got, tc.want, out.Msgs)
		}
	}
	nodes := membershipCores(t, 2, strong)
	nodes[0].Receive(0, Msg{Type: MsgConfig, From: "n2", To: "n1", Conf: &conf})
	confirmAt := 3 * m
	nodes[1].Adopt(confirmAt-time.Millisecond, conf)
	nodes[0].Adopt(confirmAt, conf)
	if out := nodes[0].Receive(confirmAt+m-time.Millisecond, prep(0, 10)); len(out.Msgs) != 1 || out.Msgs[0].OK || out.Msgs[0].WaitMs == 0 {
		t.Errorf("promised within the wait from the shell's word: %+v", out.Msgs)
	}
	if out := nodes[0].Receive(confirmAt+m, prep(0, 11)); len(out.Msgs) != 1 || !out.Msgs[0].OK {
		t.Errorf("no promise once the wait from the shell's word is over: %+v", out.Msgs)
	}
}

// TestSelfMessagesStayOnTheirCore: handledHere, which keeps a core's
// message to its own node within the call without hashing the chunk
// again, agrees with Route for every message a core may send itself:
// those about the chunks it serves (a core refuses requests and ignores
// peer messages of other chunks: TestACoreServesOnlyItsChunks) and those
// that name no chunk.
func TestSelfMessagesStayOnTheirCore(t *testing.T) {
	types := []MsgType{MsgPrepare, MsgPrepareResp, MsgPropose, MsgProposeResp, MsgRead, MsgReadResp,
		MsgRelease, MsgReleaseResp, MsgSync, MsgSyncResp, MsgCancel, MsgCancelResp, MsgBooting,
		MsgChangePrepare, MsgChangePrepareResp, MsgChangePropose, MsgChangeProposeResp, MsgConfig, MsgConfigResp}
	for _, cores := range []int{1, 2, 3, 8} {
		for core := range cores {
			n := &Node{}
			n.cfg.Cores, n.cfg.Core = cores, core
			chunks := []string{""}
			for i := 0; len(chunks) < 6 && i < 1000; i++ {
				if c := fmt.Sprintf("ch_%d", i); CoreOf(c, cores) == core {
					chunks = append(chunks, c)
				}
			}
			for _, typ := range types {
				for _, chunk := range chunks {
					m := &Msg{Type: typ, Chunk: chunk}
					to, every := Route(m, cores)
					if want := cores <= 1 || !every && to == core; n.handledHere(m) != want {
						t.Errorf("%d cores, core %d, %s of %q: handled here %v, Route says core %d (every %v)", cores, core, typ, chunk, !want, to, every)
					}
				}
			}
		}
	}
}

// TestBuildCoresAtOnceBuildsWhatNewCoresDoes: cores built all at once
// on goroutines of their own (as lease-node serve builds them, with
// internal/apart.Each) are the cores NewCores builds one after another:
// each its index, the member's count and identity, and the same answers
// to the same requests. Run under -race (scripts/run_tests.sh), it also
// holds that building cores at once shares nothing they write.
func TestBuildCoresAtOnceBuildsWhatNewCoresDoes(t *testing.T) {
	const cores = 4
	cfg := Config{ID: "n1", Acceptors: []string{"n3", "n1", "n2"}, Nodes: []string{"n3", "n1", "n2"}, MaxLeaseMs: 1000, Incarnation: 9, Nonce: 9}
	rnd := func(i int) *rand.Rand { return rand.New(rand.NewPCG(1, uint64(i))) }
	inOrder, err := NewCores(cfg, cores, 0, rnd)
	if err != nil {
		t.Fatal(err)
	}
	builds := 0
	atOnce, err := BuildCores(cfg, cores, 0, rnd, func(n int, build func(i int)) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { build(i) })
		}
		wg.Wait()
		builds = n
	})
	if err != nil || builds != cores {
		t.Fatalf("BuildCores: %v, %d builds", err, builds)
	}
	for i := range cores {
		if atOnce[i].cfg.Core != i || atOnce[i].cfg.Cores != cores || atOnce[i].cfg.ID != "n1" || atOnce[i].cfg.Incarnation != 9 {
			t.Fatalf("core %d built at once has core %d of %d, id %s, incarnation %d", i, atOnce[i].cfg.Core, atOnce[i].cfg.Cores, atOnce[i].cfg.ID, atOnce[i].cfg.Incarnation)
		}
	}
	for k := range 16 {
		chunk := fmt.Sprint("c", k)
		c := CoreOf(chunk, cores)
		req := Request{ID: uint64(k + 1), Op: OpGrant, Chunk: chunk, Server: "s"}
		a, b := inOrder[c].Request(0, req), atOnce[c].Request(0, req)
		if fmt.Sprint(a.Msgs) != fmt.Sprint(b.Msgs) || fmt.Sprint(a.Replies) != fmt.Sprint(b.Replies) {
			t.Fatalf("a grant of %s: built in order %+v, at once %+v", chunk, a, b)
		}
	}
	if _, err := BuildCores(cfg, 0, 0, rnd, func(int, func(int)) { t.Fatal("built 0 cores") }); err == nil {
		t.Fatal("BuildCores of 0 cores: no error")
	}
}
