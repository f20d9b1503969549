package lease

import "time"

// Reclaiming idle chunk instances. Memory follows live leases, not every
// chunk ever touched: an instance that protected nothing through one
// whole sweep interval (the quarantine, max(MaxLeaseMs, 1 s)) is dropped
// at the next sweep, between one and two intervals after its last lease
// ended. Forgetting is safe because the node's floor is first raised to
// the instance's promise: a ballot at or below it (a stale prepare or
// propose, or a duplicate of the last accepted one) is refused as before,
// and a ballot above it would have been promised anyway. Nothing is
// protected, so no lease is forgotten. What is lost is the name of the
// last holder: a check of a reclaimed chunk answers primary null, as for
// a chunk never seen.

// sweepInterval is the quarantine between two sweeps.
func (n *Node) sweepInterval() time.Duration {
	return max(ms(n.cfg.MaxLeaseMs), time.Second)
}

// sweepWake is when the next sweep is due, or Never when there is
// nothing to sweep.
func (n *Node) sweepWake() time.Duration {
	if n.chunks.len() == 0 {
		return Never
	}
	return n.nextSweep
}

// sweep drops the instances found idle at the previous sweep and still
// idle now, and marks the idle ones for the next.
func (n *Node) sweep(now time.Duration) {
	if now < n.nextSweep {
		return
	}
	n.nextSweep = now + n.sweepInterval()
	n.pruneSticky(now)
	n.chunks.each(func(chunk string, a *acceptor) bool {
		busy := a.live(now) || n.queues[chunk] != nil
		if a.idle() && !busy {
			n.floor = max(n.floor, a.promised)
			return false
		}
		a.setIdle(!busy)
		return true
	})
}

// touch stores a chunk's acceptor state after a change.
func (n *Node) touch(now time.Duration, chunk string, a acceptor) {
	a.setIdle(false)
	if n.chunks.len() == 0 && n.nextSweep <= now {
		n.nextSweep = now + n.sweepInterval()
	}
	n.chunks.put(chunk, a)
}
