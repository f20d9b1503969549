package lease

import (
	"slices"
	"time"
)

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
	n.resizeInFlight()
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

// Requests in flight. Go maps never give memory back: after a burst of a
// million requests the maps of requests in flight (queues by chunk, reads
// and releases by id, sticky promises by chunk) would keep the burst's
// size for good. Each sweep copies them at their present size, which
// costs O(requests in flight), less than the sweep's walk of the chunks;
// and a node with nothing pending that took more than inFlightBurst
// requests since it last did so starts them afresh (a node that is no
// acceptor holds no chunks, so it never sweeps).

// inFlightBurst is how many requests a node takes before an idle moment
// replaces its (then empty) maps of requests in flight.
const inFlightBurst = 1024

// resizeInFlight copies the maps of requests in flight at their size.
func (n *Node) resizeInFlight() {
	n.queues = resized(n.queues)
	n.byReq = resized(n.byReq)
	n.sticky.byChunk = resized(n.sticky.byChunk)
	if cap(n.pending) > 2*len(n.pending)+inFlightBurst {
		n.pending = slices.Clone(n.pending)
	}
	n.taken = 0
}

// afterBurst starts the maps of requests in flight afresh when nothing is
// pending and a burst may have swollen them.
func (n *Node) afterBurst() {
	if n.taken > inFlightBurst && len(n.pending) == 0 && len(n.queues) == 0 && len(n.byReq) == 0 {
		n.queues, n.byReq, n.pending, n.taken = map[string][]*request{}, map[uint64]*request{}, nil, 0
	}
}

// resized is a copy of m with room for its entries only.
func resized[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
