package lease

import (
	"fmt"
	"time"
)

// What a shell other than the Maelstrom one needs from the core: a check
// for peer messages that arrive in another encoding than DecodeMsg's JSON,
// and figures for monitoring. Neither changes the core's state.

// CheckMsg applies DecodeMsg's checks to a peer message decoded from an
// encoding that always carries every field of its type (the serve shell's
// binary frames): a field the type needs must be set, and no number may
// be one the core never sends. The master lease's instance is the empty
// chunk handle there, so an empty Chunk is never "missing".
func CheckMsg(m Msg) error {
	if !m.Type.known() {
		return fmt.Errorf("%q is not a peer message type", m.Type)
	}
	ballot, promised, reqID, ok, counter, booting := m.Ballot, m.Promised, m.ReqID, m.OK, m.Counter, m.BootingMs
	w := wireMsg{Master: m.Chunk == masterChunk, OK: &ok, Counter: &counter, Promised: &promised}
	if m.Type.unnumbered() {
		return checkMsg(m, w)
	}
	if m.Type == MsgBooting {
		// A booting answer names the ballot it answers, or else the
		// request id (a read or a release).
		w.BootingMs = &booting
		if !ballot.IsZero() {
			w.Ballot = &ballot
		} else {
			w.ReqID, w.Nonce = &reqID, m.Nonce
		}
	} else if m.Type.usesBallot() {
		w.Ballot = &ballot
	} else {
		w.ReqID, w.Nonce = &reqID, m.Nonce
	}
	return checkMsg(m, w)
}

// Stats are the core's figures at one instant, for a shell's metrics.
type Stats struct {
	Chunks     int // chunk instances this node's acceptor keeps (idle ones until reclaimed)
	LiveLeases int // of those, the ones protecting a live lease now
	Pending    int // client requests not yet answered
}

// Stats counts at now. It walks every chunk instance, so it costs about
// 10 ns a chunk: for a scrape, not for every request.
func (n *Node) Stats(now time.Duration) Stats {
	s := Stats{Chunks: n.chunks.len(), Pending: len(n.pending)}
	for _, i := range n.chunks.index {
		if n.chunks.slab[i].live(now) {
			s.LiveLeases++
		}
	}
	return s
}

// BootUntil is when the acceptor's boot wait ends, on the core's clock
// (NewNode's now plus BootWaitMs stretched by the drift factor): until
// then the node cannot count as an acceptor, which a shell's readiness
// reports.
func (n *Node) BootUntil() time.Duration { return n.bootUntil }

// Recovering reports whether the restarted acceptor is still learning the
// ballot high-water marks recovery needs to order tokens whatever the
// clocks (n-q+1 acceptors not restarting, recovery.go). It serves
// meanwhile, under its floor.
func (n *Node) Recovering() bool { return n.recovering }

// AwaitingRecovery reports whether a shell's readiness must still wait
// for recovery: until it completes, or until the boot wait is over, the
// marks of a majority (this node counted) are in and the others had a
// round to answer (recovery.go, doc.go "What readiness waits for"). It
// never waits for an acceptor that does not answer, so a member that,
// with the acceptors it reaches, forms a majority becomes ready.
func (n *Node) AwaitingRecovery() bool { return n.recovering && !n.sync.settled }
