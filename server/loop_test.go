package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"chunklease/internal/clock"
	"chunklease/lease"
)

// TestLoopReadsInputBeforeDueTimers: a process starved of CPU wakes with
// its timer due and peer answers already waiting; the loop must handle
// the answers first, or a round timeout gives up the round they complete
// (docs/decisions.md). Each round sets the timer due at once and puts a
// message in the inbox, so both are ready when turn chooses; the timer
// must find the inbox empty. Before the fix turn's select chose at random.
func TestLoopReadsInputBeforeDueTimers(t *testing.T) {
	inbox := make(chan lease.Msg, 4)
	l := loopOnly(t, inbox)
	const rounds = 64
	late := 0
	for range rounds {
		// An answer to no sync round of this node: the core ignores it.
		inbox <- lease.Msg{Type: lease.MsgSyncResp, From: "n2", To: "n1", ReqID: 1}
		fired := false
		l.After(-time.Millisecond, func() {
			fired = true
			if len(inbox) > 0 {
				late++
			}
		})
		l.armTimer() // as the end of every burst does
		for !fired {
			if !l.turn() {
				t.Fatal("the loop stopped")
			}
		}
	}
	if late > 0 {
		t.Fatalf("%d of %d due timers ran before the peer message waiting beside them", late, rounds)
	}
}

// noPeers is a peer edge that drops everything.
type noPeers struct{}

func (noPeers) Send(*lease.Msg) {}
func (noPeers) Flush()          {}

// loopOnly is a member's loop with a core, its channels and the given
// inbox, and no peers or listeners: enough for turn.
func loopOnly(t *testing.T, inbox <-chan lease.Msg) *coreLoop {
	t.Helper()
	clk := clock.Real()
	core, err := lease.NewNode(lease.Config{ID: "n1", Acceptors: []string{"n1", "n2"}, Nodes: []string{"n1", "n2"},
		Incarnation: 1, Nonce: 1, DefaultLeaseMs: 1000, MaxLeaseMs: 1000, Rand: rand.New(rand.NewPCG(1, 1))}, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	m := newMember([]*lease.Node{core}, nil, clk, noPeers{}, func(int) <-chan lease.Msg { return inbox }, log.New(io.Discard, "", 0))
	l := m.loops[0]
	t.Cleanup(func() { l.timer.t.Stop() })
	return l
}

// panicChildEnv marks the child process of TestAPanicInTheCoreEndsTheProcess.
const panicChildEnv = "LEASE_TEST_PANIC_CHILD"

// TestAPanicInTheCoreEndsTheProcess: a caller that runs its call on the
// loop (an HTTP handler: member.call) panics half way through the burst.
// net/http recovers a handler's panic; had the process gone on, the loop
// would stay held for ever and the member serve nothing while it looks
// alive. The process must end instead, with status 2 and the panic on
// standard error (dieOnPanic). The test runs itself as a child process
// that makes the panic, its handler recovering as net/http would.
func TestAPanicInTheCoreEndsTheProcess(t *testing.T) {
	if os.Getenv(panicChildEnv) != "" {
		panicInAHandler(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestAPanicInTheCoreEndsTheProcess$", "-test.v")
	cmd.Env = append(os.Environ(), panicChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(out.String(), "panic in a member's loop: send on closed channel") {
		t.Fatalf("the child should end with status 2 and the panic; it ended with %v:\n%s", err, out.String())
	}
}

// panicInAHandler (the child) makes a call whose reply channel is closed:
// the holder panics as it hands the reply out (deliver). What follows the
// recovery runs only when the panic did not end the process.
func panicInAHandler(t *testing.T) {
	m := startFakeMember(t, 1)
	c := &call{req: lease.Request{Op: lease.OpGrant, Chunk: "p", Server: "cs"}, done: make(chan lease.Reply, 1)}
	close(c.done)
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }() // as net/http does for a handler
		m.call(c)
	}()
	select {
	case r := <-recovered:
		t.Logf("the handler recovered from %v and the process goes on, the loop held: %v", r, m.loops[0].held.Load())
	case <-time.After(30 * time.Second):
		t.Log("the call neither panicked nor returned within 30 s")
	}
}
