package server

import (
	"io"
	"log"
	"math/rand/v2"
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
	m := newMember([]*lease.Node{core}, clk, noPeers{}, func(int) <-chan lease.Msg { return inbox }, log.New(io.Discard, "", 0))
	l := m.loops[0]
	t.Cleanup(func() { l.timer.t.Stop() })
	return l
}
