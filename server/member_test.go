package server

import (
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"chunklease/internal/apart"
	"chunklease/internal/clock"
	"chunklease/lease"
)

// A member's loops with fake peers: no sockets, no HTTP. The member is
// n1 of the acceptors n1, n2, n3; n2 and n3 are fakePeers, which answer
// every message at once, as acceptors that agree with everything would,
// into the inbox of the loop that sent it (the loop of its chunk: the
// same routing the transport does). What is measured or tested is the
// member's side: its cores, its Drivers and its loops.

// fakePeers plays the other two acceptors for one loop of the member.
// It runs on whoever holds that loop (Send), so it needs no lock. Its
// inbox is as large as the transport's (inboxSize), and an answer that
// finds it full is dropped, as the transport drops a message to a full
// queue; the requests in flight (64 clients, two answers each) leave it
// far from full.
//
// The Records its answers point to come from a ring, not one allocation
// each, as a transport that decodes into buffers it reuses would do: a
// core keeps no pointer into a message past handling it (lease.Msg), and
// a slot is written again only after more answers than the inbox holds,
// plus the one the loop is handling.
type fakePeers struct {
	inbox   chan lease.Msg
	held    map[string]lease.Record // chunk -> the latest lease accepted
	records []lease.Record
	next    int
}

func newFakePeers(inbox chan lease.Msg) *fakePeers {
	return &fakePeers{inbox: inbox, held: map[string]lease.Record{}, records: make([]lease.Record, cap(inbox)+2)}
}

// record is a slot of the ring holding rec.
func (f *fakePeers) record(rec lease.Record) *lease.Record {
	p := &f.records[f.next]
	*p = rec
	f.next = (f.next + 1) % len(f.records)
	return p
}

// Send answers m as an acceptor that promises and accepts every ballot.
func (f *fakePeers) Send(m *lease.Msg) {
	r := lease.Msg{Type: m.Type.Answer(), From: m.To, To: m.From, Chunk: m.Chunk, Ballot: m.Ballot,
		ReqID: m.ReqID, Nonce: m.Nonce, OK: true, Promised: m.Ballot}
	switch m.Type {
	case lease.MsgPrepare:
		if h, ok := f.held[m.Chunk]; ok {
			r.Lease = f.record(h)
		}
	case lease.MsgPropose:
		r.Server, r.LeaseMs = m.Server, m.LeaseMs
		h := lease.Record{Server: m.Server, Token: int64(m.Ballot.Counter), RemainingMs: m.LeaseMs}
		f.held[m.Chunk] = h
		r.Lease = f.record(h)
	case lease.MsgRead:
		if h, ok := f.held[m.Chunk]; ok {
			r.Lease = f.record(h)
		}
		r.Promised = lease.Ballot{}
	case lease.MsgRelease:
		r.Server, r.Token = m.Server, m.Token
		delete(f.held, m.Chunk)
	case lease.MsgSync:
		r = lease.Msg{Type: lease.MsgSyncResp, From: m.To, To: m.From, ReqID: m.ReqID, Nonce: m.Nonce}
	}
	select {
	case f.inbox <- r:
	default: // full: lost, as the transport loses it
	}
}

func (f *fakePeers) Flush() {}

// loopPeers routes each loop's sends to that loop's fake peers.
type loopPeers []*fakePeers

func (p loopPeers) Send(m *lease.Msg) {
	if c, every := lease.Route(m, len(p)); !every {
		p[c].Send(m)
	}
}

func (p loopPeers) Flush() {}

// startFakeMember runs member n1 on loops loops with fake peers, until
// the test ends.
func startFakeMember(tb testing.TB, loops int) *member {
	tb.Helper()
	return startFakeMemberUntil(tb, loops, tb.Cleanup)
}

// startFakeMemberUntil is startFakeMember whose stop, and the end of
// what it keeps alive, go to cleanup.
func startFakeMemberUntil(tb testing.TB, loops int, cleanup func(func())) *member {
	tb.Helper()
	// The cores as lease-node serve builds them (buildCores: each
	// loop's memory apart from the others').
	cores, fences, err := buildCores(lease.Config{ID: "n1", Acceptors: []string{"n1", "n2", "n3"}, Incarnation: 1, Nonce: 1,
		MaxLeaseMs: 60000, QuorumTimeoutMs: 2000}, loops, clock.Real().Now(), func(i int) *rand.Rand { return rand.New(rand.NewPCG(1, uint64(i))) })
	if err != nil {
		tb.Fatal(err)
	}
	// The inboxes as the transport makes them: each loop writes its own
	// at every message, so their headers are kept apart (internal/apart).
	inboxes, spacers := apart.Chans[lease.Msg](loops, inboxSize(loops))
	// The fake peers stand for other processes: each loop's are built
	// apart from the others', as the loops are.
	peers := make(loopPeers, loops)
	peerFences := apart.Each(loops, func(i int) { peers[i] = newFakePeers(inboxes[i]) })
	cleanup(func() { runtime.KeepAlive(spacers); runtime.KeepAlive(peerFences) })
	m := newMember(cores, fences, clock.Real(), peers, func(i int) <-chan lease.Msg { return peers[i].inbox }, log.New(io.Discard, "", 0))
	m.start()
	cleanup(m.stopLoops)
	return m
}

// do runs one call through the member and waits for its reply.
func (m *member) do(tb testing.TB, r lease.Request) lease.Reply {
	rep, ok := m.try(r)
	if !ok {
		tb.Fatal("the loops stopped")
	}
	return rep
}

// try runs one call through the member and waits for its reply; false
// when the loops have stopped. It may run on any goroutine.
func (m *member) try(r lease.Request) (lease.Reply, bool) {
	c := callPool.Get().(*call)
	c.req = r
	if !m.call(c) {
		return lease.Reply{}, false
	}
	rep := <-c.done
	callPool.Put(c)
	return rep, true
}

// TestMemberServesEachChunkOnItsLoop: a member of three loops answers
// grants, renews and checks of many chunks, alone and in batches, and
// each chunk's state lives in its own loop's core only (lease.CoreOf);
// the master lease runs on loop 0.
func TestMemberServesEachChunkOnItsLoop(t *testing.T) {
	const loops, chunks = 3, 60
	m := startFakeMember(t, loops)
	want := make([]int, loops)
	var batch []*call
	for i := range chunks {
		chunk := fmt.Sprintf("ch_%d", i)
		want[lease.CoreOf(chunk, loops)]++
		if rep := m.do(t, lease.Request{Op: lease.OpGrant, Chunk: chunk, Server: "cs"}); rep.Err != nil || rep.Type != "lease_grant_ok" {
			t.Fatalf("grant of %s: %+v", chunk, rep)
		}
		c := callPool.Get().(*call)
		c.req = lease.Request{Op: lease.OpRenew, Chunk: chunk, Server: "cs"}
		batch = append(batch, c)
	}
	if refused := m.submit(batch); len(refused) > 0 {
		t.Fatalf("%d calls of the batch refused", len(refused))
	}
	for _, c := range batch {
		if rep := <-c.done; rep.Err != nil || rep.Type != "lease_renew_ok" {
			t.Fatalf("renew of %s in a batch: %+v", c.req.Chunk, rep)
		}
	}
	if rep := m.do(t, lease.Request{Op: lease.OpCheck, Chunk: "ch_7"}); rep.Err != nil || *rep.Body.(lease.CheckOK).Primary != "cs" {
		t.Fatalf("check of ch_7: %+v", rep)
	}
	if rep := m.do(t, lease.Request{Op: lease.OpMasterStart}); rep.Err != nil {
		t.Fatalf("master_start: %+v", rep)
	}
	eventuallyServe(t, "n1 is master", func() bool {
		rep := m.do(t, lease.Request{Op: lease.OpMasterStatus})
		return rep.Err == nil && rep.Body.(lease.MasterStatusOK).IsMaster
	})
	got := make([]int, loops)
	if !m.onEveryLoop(time.Second, func(l *coreLoop) { got[l.index] = l.drv.Core().Stats(l.clock.Now()).Chunks }) {
		t.Fatal("a loop did not answer")
	}
	want[0]++ // the master lease's instance
	for i := range loops {
		if got[i] != want[i] {
			t.Errorf("loop %d keeps %d chunk instances, want %d (its chunks, and the master lease on loop 0): %v vs %v", i, got[i], want[i], got, want)
		}
	}
}

// holdForTest takes loop l for the test, as a holder would, and returns
// the test's release. If the test ends (a Fatal) before it let l go, the
// loop is let go before the member stops: the loop's goroutine waits at
// the stop for its holder to let go, and would wait for ever.
func holdForTest(t *testing.T, l *coreLoop) (release func()) {
	for !l.tryHold() {
		runtime.Gosched()
	}
	released := false
	t.Cleanup(func() {
		if !released {
			l.release()
		}
	})
	return func() { released = true; l.release() }
}

// eventuallyServe polls cond every 5 ms until it holds, within 10 s (the
// loops run on their own goroutines and the real clock).
func eventuallyServe(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling the loops with a deadline
	}
}

// BenchmarkMemberCores measures what one member's cores carry, on as
// many loops as GOMAXPROCS (the -loops default), with fake peers and no
// sockets: clients renew (or check) their own chunks, one call at a
// time each, through the member's loops. It reports ops/s; its point is
// how that scales with the cores, e.g.
//
//	go test ./server -run '^$' -bench MemberCores -cpu 1,2 -count 10 -benchtime 3s
//
// (figures, not assertions: the machine may be shared; record the load).
func BenchmarkMemberCores(b *testing.B) {
	for _, op := range []lease.Op{lease.OpRenew, lease.OpCheck} {
		b.Run(fmt.Sprintf("op=%s", op), func(b *testing.B) {
			benchMember(b, op, 64)
		})
	}
}

func benchMember(b *testing.B, op lease.Op, clients int) {
	loops := runtime.GOMAXPROCS(0)
	bm := benchMemberFor(b, op, loops, clients)
	m, calls := bm.m, bm.calls
	handed0 := handedOver(m)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	// The b.N calls are taken from a shared count a grain at a time, not
	// split among the clients beforehand: the scheduler runs goroutines
	// unevenly, and with fixed shares half of them had finished at 60 %
	// of the run, the last few at the end often on one loop, leaving a
	// core idle for the tail (measured: 1.87 of 2 cpus busy). Taking
	// grains, every client works until the count runs out, as clients
	// that keep coming do; one atomic add per grain costs nothing beside
	// grainOps calls.
	const grainOps = 16
	var taken atomic.Int64
	var wg sync.WaitGroup
	for k := range clients {
		req := lease.Request{Op: op, Chunk: fmt.Sprintf("bench-%d", k), Server: fmt.Sprintf("cs%d", k)}
		wg.Go(func() {
			c := calls[k]
			for {
				first := taken.Add(grainOps) - grainOps
				if first >= int64(b.N) {
					return
				}
				for range min(grainOps, int64(b.N)-first) {
					c.req = req
					if !m.call(c) {
						return
					}
					if rep := <-c.done; rep.Err != nil {
						b.Errorf("%s: %v", op, rep.Err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	wall, cpu := time.Since(start), processCPU()-cpu0
	b.ReportMetric(float64(handedOver(m)-handed0)/float64(b.N), "handed-over/op")
	b.ReportMetric(float64(b.N)/wall.Seconds(), "ops/s")
	b.ReportMetric(float64(loops), "loops")
	// What the process spent (every goroutine, the collector's too): with
	// the machine to itself the run keeps GOMAXPROCS cpus busy, and ops/s
	// scales with them as far as cpu-us/op stays flat. On a shared machine
	// cpus says how much of it the run got.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpus")
}

// benchMembers are the members BenchmarkMemberCores measures, one per
// op, loop count and client count, each built and granted once in the
// process and then serving every run of that benchmark, as lease-node
// serve builds its member once, at the start, into a fresh heap. Built
// afresh for each run (the testing package runs a benchmark several
// times to size b.N, and -count more), the measured member came from a
// heap that the earlier runs' members had left behind, whatever
// internal/apart placed, and its two-core figure varied between runs of
// one process (checks: 1.24 to 1.58 million a second in one
// scripts/bench_net.sh run). TestMain stops them at the end.
var benchMembers struct {
	sync.Mutex
	built map[benchKey]*benchState
	stops []func()
}

type benchKey struct {
	op             lease.Op
	loops, clients int
}

// benchState is a built member, its clients' calls, and what must stay
// alive with them.
type benchState struct {
	m      *member
	calls  []*call
	fences [][]any
}

// benchMemberFor is the member for op, loops and clients: built, its
// chunks granted, on the first call in this process.
func benchMemberFor(b *testing.B, op lease.Op, loops, clients int) *benchState {
	benchMembers.Lock()
	defer benchMembers.Unlock()
	key := benchKey{op, loops, clients}
	if bm := benchMembers.built[key]; bm != nil {
		return bm
	}
	keep := func(stop func()) { benchMembers.stops = append(benchMembers.stops, stop) }
	m := startFakeMemberUntil(b, loops, keep)
	// Each loop's chunks are granted by a goroutine of its own, all at
	// once (internal/apart.Each), as clients on several CPUs would: what
	// the grants allocate for one loop (its slab, its maps' tables, the
	// fake peers' records) comes from another CPU's spans than
	// another loop's. Granted from one goroutine, the loops' objects lie
	// side by side, and the member's throughput at two cores varied by
	// 1.8x from one build to the next (docs/performance.md "Where each
	// loop's memory comes from").
	// A client's call (its reply channel, written at every call by the
	// holder and read by the client) is made there too, as a handler's
	// comes from the pool of the CPU it runs on.
	errs := make([]error, loops)
	bm := &benchState{m: m, calls: make([]*call, clients)}
	bm.fences = apart.Each(loops, func(loop int) {
		for k := range clients {
			chunk := fmt.Sprintf("bench-%d", k)
			if lease.CoreOf(chunk, loops) != loop {
				continue
			}
			bm.calls[k] = &call{done: make(chan lease.Reply, 1)}
			rep, ok := m.try(lease.Request{Op: lease.OpGrant, Chunk: chunk, Server: fmt.Sprintf("cs%d", k)})
			if (!ok || rep.Err != nil) && errs[loop] == nil {
				errs[loop] = fmt.Errorf("grant of %s: %+v (loops running: %v)", chunk, rep.Err, ok)
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			m.stopLoops()
			b.Fatal(err)
		}
	}
	if benchMembers.built == nil {
		benchMembers.built = map[benchKey]*benchState{}
	}
	benchMembers.built[key] = bm
	return bm
}

// handedOver is how many calls m's loops have handed over so far.
func handedOver(m *member) (n uint64) {
	for _, l := range m.loops {
		n += l.handedOver.Load()
	}
	return n
}

// stopBenchMembers stops every member benchMemberFor built.
func stopBenchMembers() {
	benchMembers.Lock()
	defer benchMembers.Unlock()
	for i := len(benchMembers.stops) - 1; i >= 0; i-- {
		benchMembers.stops[i]()
	}
	benchMembers.stops, benchMembers.built = nil, nil
}

// processCPU is the CPU time this process used so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestNoInputIsStranded: callers on many goroutines, and the loop's own
// goroutine with queries and the peers' answers, all give one loop input
// at once, so that input often finds the loop held and is posted
// (coreLoop.post), sometimes just as the holder lets go. Every call must
// be answered: an input posted after the holder's last look and never
// run (release's nudge, the order of pending and held) leaves its caller
// waiting. Each wait is bounded; none may run out.
func TestNoInputIsStranded(t *testing.T) {
	const callers, calls = 8, 3000
	m := startFakeMember(t, 1)
	for k := range callers {
		if rep := m.do(t, lease.Request{Op: lease.OpGrant, Chunk: fmt.Sprintf("s-%d", k), Server: "cs"}); rep.Err != nil {
			t.Fatalf("grant: %+v", rep.Err)
		}
	}
	stop := make(chan struct{})
	var queries sync.WaitGroup
	queries.Go(func() {
		for range 2000 { // questions through the loop's goroutine, bounded
			select {
			case <-stop:
				return
			default:
			}
			if !m.onEveryLoop(10*time.Second, func(*coreLoop) {}) {
				t.Error("a query through the loop's goroutine was not run within 10 s")
				return
			}
		}
	})
	var wg sync.WaitGroup
	for k := range callers {
		wg.Go(func() {
			c := &call{done: make(chan lease.Reply, 1)}
			for i := range calls {
				c.req = lease.Request{Op: lease.OpRenew, Chunk: fmt.Sprintf("s-%d", k), Server: "cs"}
				if !m.call(c) {
					t.Error("the loop stopped")
					return
				}
				select {
				case rep := <-c.done:
					if rep.Err != nil {
						t.Errorf("renew %d of caller %d: %+v", i, k, rep.Err)
						return
					}
				case <-time.After(10 * time.Second):
					t.Errorf("renew %d of caller %d: no answer within 10 s (a posted call was stranded)", i, k)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	queries.Wait()
	var posted uint64
	for _, l := range m.loops {
		posted += l.handedOver.Load()
	}
	t.Logf("%d of %d calls were posted for the holder", posted, callers*calls)
}

// TestCallPostedAsTheHolderLetsGoIsRun: a call that finds the loop held
// is posted; the holder has already looked for posted input for the last
// time and lets go without running it. The loop's goroutine must run it
// (release nudges it); nothing else comes to run it here.
func TestCallPostedAsTheHolderLetsGoIsRun(t *testing.T) {
	m := startFakeMember(t, 1)
	if rep := m.do(t, lease.Request{Op: lease.OpGrant, Chunk: "late", Server: "cs"}); rep.Err != nil {
		t.Fatalf("grant: %+v", rep.Err)
	}
	// The loop's goroutine has taken every input before this question
	// (the grant's late answer among them): nothing is left for it to
	// run, and its timer is QuorumTimeoutMs (2 s) away, beyond the bound
	// below.
	if !m.onEveryLoop(10*time.Second, func(*coreLoop) {}) {
		t.Fatal("the loop did not answer")
	}
	l := m.loops[0]
	release := holdForTest(t, l) // as a caller running its call would hold it
	c := &call{req: lease.Request{Op: lease.OpRenew, Chunk: "late", Server: "cs"}, done: make(chan lease.Reply, 1)}
	if !m.call(c) { // finds the loop held: posted
		t.Fatal("the loop stopped")
	}
	release() // the holder lets go, its last look already taken
	select {
	case rep := <-c.done:
		if rep.Err != nil {
			t.Fatalf("renew: %+v", rep.Err)
		}
	case <-time.After(time.Second):
		t.Fatal("a call posted just before the holder let go was not run within 1 s")
	}
}

// TestSpreadReturnsWhenTheLoopsStopFirst: spread's last query to the
// lead is posted for the holder, and the loops stop before anyone runs
// it; spread must return once the loops stopped, not wait for the query
// (a goroutine left waiting for ever).
func TestSpreadReturnsWhenTheLoopsStopFirst(t *testing.T) {
	m := startFakeMember(t, 2)
	l := m.loops[0]
	release := holdForTest(t, l) // the test holds the lead's loop
	returned := make(chan struct{})
	go func() { m.spread(lease.Membership{}); close(returned) }()
	posted := func() bool { return l.backlog.Load() > 0 }
	eventuallyServe(t, "spread's query to every loop is posted", posted)
	// Run what is posted now, once, as a holder does. Not burst: its
	// drainReady goes on while input keeps arriving, and would run the
	// lead's query too when spread sends it at once (a run under -race
	// waited 10 s for that query to be posted: it had been run).
	l.takePosted()
	l.endBurst()
	eventuallyServe(t, "spread's query to the lead is posted", posted)
	m.signalStop()
	eventuallyServe(t, "the lead's loop is stopping", l.stopping.Load)
	release()
	<-m.loopDone
	select {
	case <-returned:
	case <-time.After(2 * time.Second):
		t.Fatal("spread still waits for the lead's query 2 s after every loop stopped")
	}
}
