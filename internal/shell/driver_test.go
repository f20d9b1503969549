package shell

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"chunklease/lease"
)

// fakeEdges records what the Driver does with a core's outputs.
type fakeEdges struct {
	now     time.Duration
	sent    []lease.Msg
	replies map[string]lease.Reply
	timers  []time.Duration // deadlines asked for
	live    int             // timers not cancelled
	fire    func()
	logs    []string // the core's log lines
}

func (e *fakeEdges) Now() time.Duration { return e.now }
func (e *fakeEdges) After(d time.Duration, f func()) func() {
	e.timers = append(e.timers, e.now+d)
	e.live++
	e.fire = f
	done := false
	return func() {
		if !done {
			done = true
			e.live--
		}
	}
}
func (e *fakeEdges) Send(m lease.Msg)              { e.sent = append(e.sent, m) }
func (e *fakeEdges) Reply(h string, r lease.Reply) { e.replies[h] = r }
func (e *fakeEdges) Log(line string)               { e.logs = append(e.logs, line) }

func newCore(t *testing.T, acceptors ...string) *lease.Node {
	core, err := lease.NewNode(lease.Config{ID: "n1", Acceptors: acceptors, Nonce: 1, MaxLeaseMs: 1000, QuorumTimeoutMs: 500,
		Rand: rand.New(rand.NewPCG(1, 2))}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return core
}

// TestRepliesReachTheirHandlesOnce: a single-acceptor core answers within
// the call; the reply reaches the handle given, once, and nothing stays
// pending.
func TestRepliesReachTheirHandlesOnce(t *testing.T) {
	e := &fakeEdges{replies: map[string]lease.Reply{}}
	d := New[string](newCore(t, "n1"), e)
	d.Request(0, lease.Request{Op: lease.OpGrant, Chunk: "c", Server: "s"}, "client-a")
	d.Request(0, lease.Request{Op: lease.OpCheck, Chunk: "c"}, "client-b")
	if r := e.replies["client-a"]; r.Type != "lease_grant_ok" || r.Err != nil {
		t.Fatalf("client-a got %+v", r)
	}
	if r := e.replies["client-b"]; r.Type != "lease_check_ok" {
		t.Fatalf("client-b got %+v", r)
	}
	if d.Pending() != 0 || len(e.replies) != 2 {
		t.Fatalf("pending %d, replies %d", d.Pending(), len(e.replies))
	}
}

// TestOneTimerAtTheCoresWake: with two silent acceptors the request waits;
// the Driver keeps exactly one timer, moves it as the core's wake-up
// moves, and the timer's Tick answers the request at its quorum timeout.
func TestOneTimerAtTheCoresWake(t *testing.T) {
	e := &fakeEdges{replies: map[string]lease.Reply{}}
	d := New[string](newCore(t, "n1", "n2", "n3"), e)
	d.Request(0, lease.Request{Op: lease.OpGrant, Chunk: "c", Server: "s"}, "h")
	if len(e.sent) == 0 || e.live != 1 || d.Pending() != 1 {
		t.Fatalf("after a grant: %d messages sent, %d timers live, %d pending", len(e.sent), e.live, d.Pending())
	}
	for i := 0; d.Pending() > 0 && i < 100; i++ {
		if e.live != 1 {
			t.Fatalf("%d timers live, want exactly 1", e.live)
		}
		e.now = e.timers[len(e.timers)-1]
		e.live--
		e.fire()
	}
	if r := e.replies["h"]; r.Err == nil || r.Err.Code != lease.CodeTemporarilyUnavailable || e.now != 500*time.Millisecond {
		t.Fatalf("at %v the request got %+v, want error 11 at the 500 ms quorum timeout", e.now, r)
	}
}

// timedEdges set their timers at a time (Timer), and count clock reads.
type timedEdges struct {
	fakeEdges
	reads int
	at    []time.Duration // the times asked for through At
}

func (e *timedEdges) Now() time.Duration { e.reads++; return e.now }
func (e *timedEdges) At(at time.Duration, f func()) func() {
	e.at = append(e.at, at)
	return e.After(at-e.now, f)
}

// TestATimerEdgeGetsTheWakeUpAsItIs: Edges that implement Timer get each
// of the core's wake-ups through At, at the very times Edges without it
// get through After (the same core, the same inputs), and the Driver
// reads the clock only when a timer fires (Tick's now), never to set
// one; the request is answered at its quorum timeout either way.
func TestATimerEdgeGetsTheWakeUpAsItIs(t *testing.T) {
	plain := &fakeEdges{replies: map[string]lease.Reply{}}
	timed := &timedEdges{fakeEdges: fakeEdges{replies: map[string]lease.Reply{}}}
	dp, dt := New[string](newCore(t, "n1", "n2", "n3"), plain), New[string](newCore(t, "n1", "n2", "n3"), timed)
	plain.now, timed.now = 7*time.Millisecond, 7*time.Millisecond
	req := lease.Request{Op: lease.OpGrant, Chunk: "c", Server: "s"}
	dp.Request(plain.now, req, "h")
	dt.Request(timed.now, req, "h")
	fires := 0
	for ; dt.Pending() > 0 && fires < 100; fires++ {
		if timed.live != 1 || !slices.Equal(timed.at, plain.timers) {
			t.Fatalf("%d timers live; At asked for %v, After for %v: want one timer, at the same times", timed.live, timed.at, plain.timers)
		}
		plain.now, timed.now = plain.timers[len(plain.timers)-1], timed.at[len(timed.at)-1]
		plain.live--
		timed.live--
		plain.fire()
		timed.fire()
	}
	if timed.reads != fires {
		t.Fatalf("%d clock reads for %d timers fired: the Driver read the clock to set a timer", timed.reads, fires)
	}
	if r := timed.replies["h"]; r.Err == nil || r.Err.Code != lease.CodeTemporarilyUnavailable || timed.now != 507*time.Millisecond {
		t.Fatalf("at %v the request got %+v, want error 11 at the 500 ms quorum timeout", timed.now, r)
	}
}

// adoptingEdges also records the configurations the core adopted.
type adoptingEdges struct {
	fakeEdges
	adopted []lease.Membership
}

func (e *adoptingEdges) Adopted(c lease.Membership) { e.adopted = append(e.adopted, c) }

// TestAdoptedConfigurationsReachTheShell: a membership change the core
// makes reaches Edges that implement Adopter, once, with the new
// configuration, and the change's reply reaches its handle.
func TestAdoptedConfigurationsReachTheShell(t *testing.T) {
	core, err := lease.NewNode(lease.Config{ID: "n1", Acceptors: []string{"n1"}, Nodes: []string{"n1", "n2"}, Nonce: 1,
		MaxLeaseMs: 1000, QuorumTimeoutMs: 500, Membership: true, Rand: rand.New(rand.NewPCG(1, 2))}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := &adoptingEdges{fakeEdges: fakeEdges{replies: map[string]lease.Reply{}}}
	d := New[string](core, e)
	d.Request(0, lease.Request{Op: lease.OpMemberAdd, Member: "n2", Force: true}, "operator")
	if len(e.adopted) != 1 || e.adopted[0].Epoch != 1 || len(e.adopted[0].Members) != 2 {
		t.Fatalf("adopted %+v, want epoch 1 with n1 and n2", e.adopted)
	}
	if r := e.replies["operator"]; r.Type != "member_add_ok" {
		t.Fatalf("the change was answered %+v", r)
	}
}
