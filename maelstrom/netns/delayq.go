package netns

import (
	"container/heap"
	"math/rand/v2"
)

// delayQueue decides, for each packet the kernel queues to us, when it
// may go on: at once (a reorder) or at its due time (arrival + delay ±
// jitter). Packets come from sources (one kernel queue per sending node),
// each with its own fault and its own seeded random stream. It is pure:
// time comes in as nanoseconds on the caller's monotonic clock. Packets
// with equal due times leave in arrival order, so without jitter or
// reorder the order is never changed.
type delayQueue struct {
	sources map[uint16]*dqSource
	held    heldHeap
	seq     uint64 // arrival counter: the tie-break for equal due times
}

// dqSource is one kernel queue's fault and random stream.
type dqSource struct {
	fault PacketFault
	rng   *rand.Rand
	// lastAtNs is the latest arrival admitted: a queue's packets arrive
	// in order, but their stamps come from the kernel's microsecond wall
	// clock moved onto ours at each read, and can step back by a few
	// microseconds between reads; a stamp is never taken as earlier than
	// the one before it, so that equal delays keep the order.
	lastAtNs int64
}

// heldPacket is one packet the kernel holds until we give its verdict.
type heldPacket struct {
	dueNs int64
	seq   uint64
	queue uint16 // the kernel queue it waits in
	id    uint32 // its id in that queue
}

func newDelayQueue() *delayQueue {
	return &delayQueue{sources: map[uint16]*dqSource{}}
}

// admit takes packet id of queue arriving at nowNs. It returns true when
// the packet goes on at once (a reorder, a jittered delay of 0, or a
// queue with no source); otherwise the packet is held.
func (q *delayQueue) admit(nowNs int64, queue uint16, id uint32) (now bool) {
	src := q.sources[queue]
	if src == nil {
		return true
	}
	nowNs = max(nowNs, src.lastAtNs)
	src.lastAtNs = nowNs
	f := src.fault
	if f.ReorderPct > 0 && src.rng.Float64()*100 < f.ReorderPct {
		return true
	}
	delayNs := int64(f.DelayMs) * 1e6
	if f.JitterMs > 0 {
		jitterNs := int64(f.JitterMs) * 1e6
		delayNs += src.rng.Int64N(2*jitterNs+1) - jitterNs
	}
	if delayNs <= 0 {
		return true
	}
	q.seq++
	heap.Push(&q.held, heldPacket{dueNs: nowNs + delayNs, seq: q.seq, queue: queue, id: id})
	return false
}

// popDue appends to out every held packet due at or before nowNs,
// earliest first, and forgets them.
func (q *delayQueue) popDue(nowNs int64, out []heldPacket) []heldPacket {
	for len(q.held) > 0 && q.held[0].dueNs <= nowNs {
		out = append(out, heap.Pop(&q.held).(heldPacket))
	}
	return out
}

// forget drops every held packet of queue (the caller released them all
// at once) and returns how many there were.
func (q *delayQueue) forget(queue uint16) int {
	kept := q.held[:0]
	for _, h := range q.held {
		if h.queue != queue {
			kept = append(kept, h)
		}
	}
	n := len(q.held) - len(kept)
	q.held = kept
	heap.Init(&q.held)
	return n
}

// nextDue is the earliest due time held; ok is false when nothing is held.
func (q *delayQueue) nextDue() (dueNs int64, ok bool) {
	if len(q.held) == 0 {
		return 0, false
	}
	return q.held[0].dueNs, true
}

// len is how many packets are held.
func (q *delayQueue) len() int { return len(q.held) }

// heldHeap orders held packets by due time, then arrival.
type heldHeap []heldPacket

func (h heldHeap) Len() int { return len(h) }
func (h heldHeap) Less(i, j int) bool {
	if h[i].dueNs != h[j].dueNs {
		return h[i].dueNs < h[j].dueNs
	}
	return h[i].seq < h[j].seq
}
func (h heldHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heldHeap) Push(x any)   { *h = append(*h, x.(heldPacket)) }
func (h *heldHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
