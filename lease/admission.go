package lease

import (
	"time"
)

// Admission control. Every client grant, renew, check and release holds
// one of MaxInFlight slots from when it starts its first round until it
// is answered; a request that finds every slot taken waits, in arrival
// order, and sends nothing until one frees.
//
// Why: a burst of requests that all start at once puts every prepare of
// the burst on the acceptors' queues ahead of the first propose, so under
// a load the node cannot carry within the quorum timeout every request
// times out after its propose went out (error 0: indefinite, possibly
// recorded, blocking the chunk until it expires), and none succeeds. With
// a cap the node keeps a bounded number of rounds in the pipeline, those
// finish in time, and a request still waiting when less than half its
// quorum timeout is left fails definitely (error 11: nothing was sent, so
// nothing changed), which a client can retry elsewhere at once.
//
// How many slots a node opens adapts, as TCP's congestion window does:
// the limit starts at slowStart (or MaxInFlight, if smaller), grows by one
// with every request answered within half its quorum timeout of taking
// its slot, up to MaxInFlight, and halves, to no less than minLimit, when
// a request is answered later than that (at most once per quorum
// timeout: the requests of one wave are late together). A late answer is
// the signal, whatever the answer: a round that met a congested node, a
// lost majority or a round that timed out all say that more rounds at
// once would not have finished sooner. A fixed cap is right for one
// machine only: on a slower or busier one a full cap of rounds can take
// longer than the quorum timeout, and a burst that arrives at once then
// times out entirely, every request after its propose went out. A node
// whose requests run at most minLimit at a time never notices the limit.
//
// A chunk's grants and renews run one at a time at a node (proposer.go,
// enqueue), so its queue holds one slot, passed from request to request:
// a grant or renew that finds a request of its chunk running here waits
// in the chunk's queue without a slot, and takes one when its turn comes.
// Only rounds need slots; a request in a chunk's queue sends nothing.
// Before, a standby polling lease_grant for a held chunk every few
// milliseconds, while the grant at the head of that chunk's queue waited
// a round for an acceptor that was down, filled every slot with its
// queued grants, and the holder's renewal waited behind them for a slot
// until its lease ran out (rolling_test.go).
//
// The master lease's own requests and master_* requests take no slot: a
// burst of client requests must not cost the node its master lease.

// DefaultMaxInFlight is the most slots a node opens when
// Config.MaxInFlight is zero: far above what a client with a few dozen
// connections keeps in flight at one node; the adaptive limit below keeps
// a slower machine under it.
const DefaultMaxInFlight = 256

// slowStart is the limit a node starts with (NewNode; MaxInFlight if
// smaller); minLimit the least it keeps while its answers come late.
const (
	slowStart = 16
	minLimit  = 8
)

// grow widens the limit by one after a request answered in time.
func (n *Node) grow() {
	n.limit = min(n.limit+1, n.cfg.MaxInFlight)
}

// congested halves the limit after a request answered late, once per
// quorum timeout.
func (n *Node) congested(now time.Duration) {
	if now < n.cutUntil {
		return
	}
	n.limit = max(min(minLimit, n.cfg.MaxInFlight), n.limit/2)
	n.cutUntil = now + ms(n.cfg.QuorumTimeoutMs)
}

// admit starts client request r now if a slot is free, else queues it;
// a grant or renew of a chunk with a request running here goes to that
// chunk's queue.
func (n *Node) admit(now time.Duration, r *request) {
	if (r.Op == OpGrant || r.Op == OpRenew) && len(n.queues[r.Chunk]) > 0 {
		r.admitted = now
		n.enqueue(now, r)
		return
	}
	if n.inFlight >= n.limit {
		r.waiting = true
		n.waiting = append(n.waiting, r)
		return
	}
	n.begin1(now, r)
}

// begin1 starts a client grant, renew, check or release in a slot: its
// first round, or its place in its chunk's queue.
func (n *Node) begin1(now time.Duration, r *request) {
	r.waiting = false
	n.takeSlot(now, r)
	switch r.Op {
	case OpGrant, OpRenew:
		n.enqueue(now, r)
	case OpCheck:
		n.startRead(now, r)
	case OpRelease:
		n.startRelease(now, r)
	}
}

// takeSlot gives r a slot now, whatever the limit: a request admitted,
// or the next of a chunk's queue taking the slot its predecessor gave
// back.
func (n *Node) takeSlot(now time.Duration, r *request) {
	if !r.slot && !r.internal {
		r.slot, r.admitted = true, now
		n.inFlight++
	}
}

// freeSlot gives back the slot of a request just answered, and adapts the
// limit to how long the request took.
func (n *Node) freeSlot(r *request) {
	if !r.slot {
		return
	}
	r.slot = false
	n.inFlight--
	if n.now-r.admitted > ms(n.cfg.QuorumTimeoutMs)/2 {
		n.congested(n.now)
	} else {
		n.grow()
	}
}

// admitWaiting starts waiting requests, oldest first, while slots are
// free. It reports whether it started any. Requests that expired while
// waiting are already answered and are dropped here; one with less than
// half its quorum timeout left is answered overloaded instead of started
// (lateForASlot).
func (n *Node) admitWaiting(now time.Duration) bool {
	started := false
	for len(n.waiting) > 0 && n.inFlight < n.limit {
		r := n.waiting[0]
		n.waiting[0] = nil
		n.waiting = n.waiting[1:]
		switch {
		case r.done:
		case n.lateForASlot(now, r):
			n.fail(r, n.overloaded(r))
		default:
			n.begin1(now, r)
			started = true
		}
	}
	if len(n.waiting) == 0 {
		n.waiting = nil // let the array of a past burst go
	}
	return started
}

// lateForASlot reports whether a waiting request has too little of its
// quorum timeout left to be started: less than half, the time within
// which the adaptive limit expects an answer. Started that late, its
// rounds would run out of time after messages went out, an indefinite
// outcome that blames the network; answered now, it gets a definite one,
// and the slot goes to a request that can still finish. A request whose
// quorum timeout has passed (the loop ran late, and an answer freed a
// slot before the timer fired) is the extreme case: it is never started.
func (n *Node) lateForASlot(now time.Duration, r *request) bool {
	return r.deadline-now < ms(n.cfg.QuorumTimeoutMs)/2
}

// overloaded is the definite error of a request that waited for a slot
// until too little of its quorum timeout was left.
func (n *Node) overloaded(r *request) *Error {
	return unavailable("this node is overloaded: all %d of its request slots stayed busy until less than half of this %s request's "+
		"quorum timeout of %d ms was left, so it sent nothing and nothing changed (it opens up to %d, LEASE_MAX_IN_FLIGHT, "+
		"fewer while answers come late); retry through another node, later, or with fewer requests in flight at once",
		n.limit, r.Op, n.cfg.QuorumTimeoutMs, n.cfg.MaxInFlight)
}
