package maelstrom

import (
	"container/heap"
	"math"
	"time"
)

// Timers live in one heap owned by the loop, ordered by (deadline, creation
// order), behind one time.Timer armed for the earliest deadline. So timers
// with equal deadlines fire in the order they were set, on the loop
// goroutine, one at a time; and a cancelled timer leaves the heap at once,
// so nothing is retained until its deadline.

type timer struct {
	at    time.Duration // Node.Now() at which it is due
	seq   uint64        // creation order, breaks ties
	fn    func()
	index int // position in the heap; -1 once fired or cancelled
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// After runs f on the loop once d has passed (d <= 0: at the next turn of
// the loop, after the current event). The returned cancel stops it if it
// has not run yet; calling cancel again, or after f ran, does nothing.
// Call After and cancel only on the loop (handlers, callbacks, timers, the
// init hook).
func (n *Node) After(d time.Duration, f func()) (cancel func()) {
	t := n.addTimer(n.deadlineAfter(d), f)
	return func() { n.removeTimer(t) }
}

// deadlineAfter is Now()+d, saturating instead of wrapping for huge d, so a
// "never" timer cannot overflow into the past and fire at once.
func (n *Node) deadlineAfter(d time.Duration) time.Duration {
	now := n.Now()
	if d <= 0 {
		return now
	}
	if d > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + d
}

func (n *Node) addTimer(at time.Duration, f func()) *timer {
	n.timerSeq++
	t := &timer{at: at, seq: n.timerSeq, fn: f}
	heap.Push(&n.timers, t)
	return t
}

func (n *Node) removeTimer(t *timer) {
	if t.index >= 0 {
		heap.Remove(&n.timers, t.index)
	}
}

// fireDue runs, in order, every timer that existed and was due when it was
// entered (the clock is read once). Timers set by those callbacks wait for
// the next turn of the loop, even with d <= 0, so a timer that keeps
// re-arming itself cannot starve input.
func (n *Node) fireDue() {
	now, lastSeq := n.Now(), n.timerSeq
	for len(n.timers) > 0 && n.timers[0].at <= now && n.timers[0].seq <= lastSeq {
		t := heap.Pop(&n.timers).(*timer)
		t.fn()
	}
}

// armWake points the loop's single time.Timer at the earliest deadline and
// returns its channel, or nil (never ready) when no timer is set.
func (n *Node) armWake() <-chan time.Time {
	if len(n.timers) == 0 {
		n.wake.Stop()
		return nil
	}
	n.wake.Reset(n.clock.RealDelay(n.timers[0].at - n.Now()))
	return n.wake.C
}
