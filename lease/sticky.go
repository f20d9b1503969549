package lease

import "time"

// Sticky promises: first come, first served on a free chunk. When a lease
// ends, every node with a grant in hand prepares at once, and each newer
// ballot pre-empts the older one's propose before it lands: the attempts
// duel and back off until one gets through (seconds at the tail under
// load). So an acceptor that promises a ballot for server S on a chunk
// that holds no live lease refuses prepares for other servers on that
// chunk for a short window, long enough for S's propose to arrive: about
// twice the gap it has seen between a promise and its propose, learnt as
// it goes. Refusing a prepare is always safe (it only delays); if S's
// proposer never follows up, the others wait at most the window.

// stickyPromise is the promise that holds off other servers' prepares. It
// keeps the server's name, not its id: a sticky promise is no acceptor
// record, so it holds no reference in the name table (names.go), and the
// id could name another server once the record that used it is gone.
type stickyPromise struct {
	server  string
	counter uint64 // the promised ballot's counter
	at      time.Duration
	until   time.Duration
}

// stickiness is a node's acceptor-side sticky promises and what it learnt
// about the promise-to-propose gap.
type stickiness struct {
	byChunk map[string]stickyPromise
	gap     time.Duration // smoothed gap from a promise to its propose
}

// initialGap is the gap assumed before any was seen: a twentieth of the
// round timeout (50 ms with the defaults).
func (n *Node) initialGap() time.Duration { return ms(n.cfg.RoundTimeoutMs) / 20 }

// stickyWindow is how long a promise on a free chunk holds off other
// servers: twice the smoothed gap plus a millisecond, at most a round.
func (n *Node) stickyWindow() time.Duration {
	gap := n.sticky.gap
	if gap == 0 {
		gap = n.initialGap()
	}
	return min(2*gap+time.Millisecond, ms(n.cfg.RoundTimeoutMs))
}

// stickyRefuses reports whether a prepare for server on chunk must wait
// for another server's fresh promise.
func (n *Node) stickyRefuses(now time.Duration, chunk string, server uint32, b Ballot) bool {
	p, ok := n.sticky.byChunk[chunk]
	return ok && now < p.until && p.server != n.serverName(server) && p.counter != b.Counter && n.cfg.weaken != weakNoSticky
}

// notePromise makes a promise on a free chunk sticky.
func (n *Node) notePromise(now time.Duration, chunk string, server uint32, b Ballot) {
	if n.sticky.byChunk == nil {
		n.sticky.byChunk = map[string]stickyPromise{}
	}
	n.sticky.byChunk[chunk] = stickyPromise{server: n.serverName(server), counter: b.Counter, at: now, until: now + n.stickyWindow()}
}

// noteProposed learns the gap from a sticky promise to its propose, and
// ends the stickiness: from now on the accepted lease itself holds off
// other servers.
func (n *Node) noteProposed(now time.Duration, chunk string, b Ballot) {
	p, ok := n.sticky.byChunk[chunk]
	if !ok || p.counter != b.Counter {
		return
	}
	delete(n.sticky.byChunk, chunk)
	gap := now - p.at
	if n.sticky.gap == 0 {
		n.sticky.gap = gap
		return
	}
	n.sticky.gap += (gap - n.sticky.gap) / 8
}

// cancelSticky drops the sticky promise of ballot b on chunk: its
// proposer gave up (a split, or the chunk was held), so others need not
// wait for it.
func (n *Node) cancelSticky(chunk string, b Ballot) bool {
	p, ok := n.sticky.byChunk[chunk]
	if !ok || p.counter != b.Counter {
		return false
	}
	delete(n.sticky.byChunk, chunk)
	return true
}

// sendCancel tells the acceptors that the running prepare gave up:
// every acceptor, since one whose promise has not come back yet may hold
// a sticky promise for it, unless all answered and none promised (a
// grant that found the chunk held, the common case under contention), or
// it cancelled them already (dropStickyForHolder).
func (n *Node) sendCancel(r *request) {
	a := r.att
	if a == nil || a.phase != preparing || a.fast || a.cancelled {
		return
	}
	if a.open.count() == 0 && a.prepared.count() == len(n.voters()) {
		return
	}
	n.broadcast(Msg{Type: MsgCancel, Chunk: r.Chunk, Ballot: a.ballot})
}

// pruneSticky drops windows that have passed (at each sweep).
func (n *Node) pruneSticky(now time.Duration) {
	for chunk, p := range n.sticky.byChunk {
		if now >= p.until {
			delete(n.sticky.byChunk, chunk)
		}
	}
}
