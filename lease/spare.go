package lease

import "slices"

// Attempts are kept for reuse, as queues are: a renewal's attempt is the
// largest allocation of a request, and at the rates of a busy member the
// collector's work (and on several cores, its stops of every running
// loop) grows with the bytes allocated. An attempt ends in
// finishAttempts, where its request drops it, and is kept aside until
// the end of the call (finish): no caller up the stack still holds it
// when it is reused. Nothing else points to an attempt, and the next
// attempt of the request, or of another, starts with a fresh ballot, so
// a late answer to the ended one matches none (running).

// maxSpareAttempts bounds the attempts a node keeps, those ended in the
// call in progress counted.
const maxSpareAttempts = 256

// retireAttempt keeps a, which its request just dropped, for reuse after
// the call in progress.
func (n *Node) retireAttempt(a *attempt) {
	if a != nil && len(n.endedAttempts)+len(n.spareAttempts) < maxSpareAttempts {
		n.endedAttempts = append(n.endedAttempts, a)
	}
}

// spareEnded makes the attempts ended in this call available to the next
// ones (finish: the call is over, none of them is referenced).
func (n *Node) spareEnded() {
	if len(n.endedAttempts) == 0 {
		return
	}
	n.spareAttempts = append(n.spareAttempts, n.endedAttempts...)
	clear(n.endedAttempts)
	n.endedAttempts = n.endedAttempts[:0]
}

// Answered requests are kept for reuse, as attempts are (retireAttempt):
// at the end of a call (finish), a request that is answered and that
// nothing of the node points to any more is kept, and the next client
// request starts in it. What points to requests: the list of pending
// ones (which finish drops them from), the chunks' queues (grant, renew),
// the reads and releases by id (check, release), the waiting list
// (admission: a request answered while waiting stays in it until
// admitWaiting drops it), the change run (membership) and the master
// controller (the node's own requests). A request answered by its quorum
// timeout or another path that leaves it in one of these is not kept;
// the collector takes it, as before.

// maxSpareRequests bounds the answered requests a node keeps.
const maxSpareRequests = 256

// dropAnswered drops the answered requests from the pending list,
// keeping those nothing points to for reuse.
func (n *Node) dropAnswered() {
	kept := n.pending[:0]
	for _, r := range n.pending {
		switch {
		case !r.done:
			kept = append(kept, r)
		case len(n.spareRequests) < maxSpareRequests && n.unreferenced(r):
			n.spareRequests = append(n.spareRequests, r)
			if r.rd != nil && len(n.spareReads) < maxSpareRequests {
				// Its answer does not point into it (answerCheck), and its
				// id is out of byReq (unreferenced).
				n.spareReads = append(n.spareReads, r.rd)
				r.rd = nil
			}
		}
	}
	clear(n.pending[len(kept):])
	n.pending = kept
}

// unreferenced reports whether answered request r, just dropped from the
// pending list, is held by none of the node's other structures.
func (n *Node) unreferenced(r *request) bool {
	switch {
	case r.internal || r.waiting:
		return false
	case r.Op == OpGrant || r.Op == OpRenew:
		return !slices.Contains(n.queues[r.Chunk], r)
	case r.Op == OpCheck:
		return r.rd == nil || n.byReq[r.rd.id] != r
	case r.Op == OpRelease:
		return r.rel == nil || n.byReq[r.rel.id] != r
	}
	return false // the master and membership requests, and unknown ones
}

// takeSpare is a kept one of *spares to start afresh, or a new one.
func takeSpare[T any](spares *[]*T) *T {
	k := len(*spares)
	if k == 0 {
		return new(T)
	}
	x := (*spares)[k-1]
	(*spares)[k-1] = nil
	*spares = (*spares)[:k-1]
	return x
}

// reuseSelfRecords empties selfRecords for the next call, once finish
// delivered every answer that points into it (and the core kept no
// pointer: Msg.Lease). A burst that needed more than maxSelfRecords
// gives its buffer back.
func (n *Node) reuseSelfRecords() {
	clear(n.selfRecords) // the server names they hold
	n.selfRecords = n.selfRecords[:0]
	if cap(n.selfRecords) > maxSelfRecords {
		n.selfRecords = nil
	}
}

// maxSelfRecords bounds the room selfRecords keeps between calls.
const maxSelfRecords = 1024
