package netns

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"chunklease/internal/testseed"
)

// queueWith is a delayQueue with one source per fault, on queues 1, 2, ...
func queueWith(seed uint64, faults ...PacketFault) *delayQueue {
	q := newDelayQueue()
	for i, f := range faults {
		q.sources[uint16(i+1)] = &dqSource{fault: f, rng: rand.New(rand.NewPCG(seed, uint64(i)))}
	}
	return q
}

// drain pops everything, stepping time 1 ms at a time, and returns the
// ids in release order with their release times.
func drain(q *delayQueue, fromNs int64) (ids []uint32, atNs []int64) {
	var out []heldPacket
	for now := fromNs; q.len() > 0; now += 1e6 {
		out = q.popDue(now, out[:0])
		for _, h := range out {
			ids = append(ids, h.id)
			atNs = append(atNs, now)
		}
	}
	return ids, atNs
}

// TestDelayQueuePlainDelayKeepsOrder: without jitter or reorder every
// packet is held exactly the delay and the order never changes, ties
// included.
func TestDelayQueuePlainDelayKeepsOrder(t *testing.T) {
	q := queueWith(testseed.Get(t), PacketFault{DelayMs: 30})
	for i := range 100 {
		if q.admit(int64(i/10)*1e6, 1, uint32(i)) { // ten arrivals per ms: ties
			t.Fatalf("packet %d left at once under a plain delay", i)
		}
	}
	if due, _ := q.nextDue(); due != 30e6 {
		t.Errorf("first due at %d ns, want 30 ms", due)
	}
	ids, at := drain(q, 0)
	for i, id := range ids {
		if id != uint32(i) {
			t.Fatalf("release order %v: not arrival order", ids)
		}
		if want := int64(i/10)*1e6 + 30e6; at[i] != want {
			t.Fatalf("packet %d released at %d ns, want %d", i, at[i], want)
		}
	}
}

// TestDelayQueueJitter: delays spread uniformly over [delay-jitter,
// delay+jitter] (mean and both tails checked), and crossing delays
// reorder.
func TestDelayQueueJitter(t *testing.T) {
	seed := testseed.Get(t)
	q := queueWith(seed, PacketFault{DelayMs: 40, JitterMs: 20})
	const n = 10_000
	for i := range n {
		q.admit(0, 1, uint32(i))
	}
	var delays []float64 // in due order, so sorted
	for _, h := range q.popDue(math.MaxInt64, nil) {
		delays = append(delays, float64(h.dueNs)/1e6)
	}
	if delays[0] < 20 || delays[n-1] > 60 {
		t.Errorf("delays span [%.3f, %.3f] ms, outside [20, 60]", delays[0], delays[n-1])
	}
	mean := 0.0
	below := 0
	for _, d := range delays {
		mean += d / n
		if d < 30 {
			below++
		}
	}
	// Uniform on [20, 60]: mean 40 (sd of the mean 0.12 ms), a quarter below 30.
	if math.Abs(mean-40) > 1 || math.Abs(float64(below)/n-0.25) > 0.03 {
		t.Errorf("mean %.2f ms, %.1f%% below 30 ms; want 40 ms and 25%%", mean, 100*float64(below)/n)
	}

	q = queueWith(seed, PacketFault{DelayMs: 40, JitterMs: 20})
	for i := range 100 {
		q.admit(int64(i)*1e5, 1, uint32(i))
	}
	if ids, _ := drain(q, 0); slices.IsSorted(ids) {
		t.Error("jitter kept 100 packets in order")
	}
}

// TestDelayQueueReorder: a reorder share leaves at once (about that
// share), the rest is held; 0% and 100% are exact.
func TestDelayQueueReorder(t *testing.T) {
	seed := testseed.Get(t)
	for _, c := range []struct{ pct, lo, hi float64 }{{0, 0, 0}, {25, 0.22, 0.28}, {100, 1, 1}} {
		q := queueWith(seed, PacketFault{DelayMs: 20, ReorderPct: c.pct})
		now := 0
		for i := range 10_000 {
			if q.admit(0, 1, uint32(i)) {
				now++
			}
		}
		if f := float64(now) / 10_000; f < c.lo || f > c.hi {
			t.Errorf("reorder %g%%: %.1f%% left at once", c.pct, 100*f)
		}
		if q.len() != 10_000-now {
			t.Errorf("reorder %g%%: %d held, want %d", c.pct, q.len(), 10_000-now)
		}
	}
}

// TestDelayQueueSources: each queue follows its own source; a queue
// without one lets packets go at once; forget drops one queue's packets
// only.
func TestDelayQueueSources(t *testing.T) {
	q := queueWith(testseed.Get(t), PacketFault{DelayMs: 10}, PacketFault{DelayMs: 50})
	q.admit(0, 1, 100)
	q.admit(0, 2, 200)
	q.admit(0, 1, 101)
	if !q.admit(0, 9, 900) {
		t.Error("a packet of a queue with no source was held")
	}
	if got := q.popDue(10e6, nil); len(got) != 2 || got[0].id != 100 || got[1].id != 101 {
		t.Errorf("due at 10 ms: %+v, want queue 1's two packets", got)
	}
	q.admit(20e6, 1, 102)
	if n := q.forget(2); n != 1 || q.len() != 1 {
		t.Errorf("forget(2) dropped %d, %d left; want 1 and 1", n, q.len())
	}
	if got := q.popDue(30e6, nil); len(got) != 1 || got[0].id != 102 {
		t.Errorf("after forget: %+v", got)
	}
}

// TestDelayQueueSeed: the same seed gives the same draws.
func TestDelayQueueSeed(t *testing.T) {
	seed := testseed.Get(t)
	run := func() []uint32 {
		q := queueWith(seed, PacketFault{DelayMs: 40, JitterMs: 30, ReorderPct: 20})
		var out []uint32
		for i := range 500 {
			if q.admit(int64(i)*1e5, 1, uint32(i)) {
				out = append(out, uint32(i))
			}
		}
		ids, _ := drain(q, 0)
		return append(out, ids...)
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Error("two runs with one seed differ")
	}
}

// TestDelayQueueKeepsOrderWhenStampsStepBack: a later packet of the same
// queue whose arrival stamp reads a little earlier (the kernel's wall-clock
// stamps moved onto the monotonic clock at each read) still leaves after
// the earlier one under a plain delay.
func TestDelayQueueKeepsOrderWhenStampsStepBack(t *testing.T) {
	q := newDelayQueue()
	q.sources[1] = &dqSource{fault: PacketFault{DelayMs: 30}, rng: rand.New(rand.NewPCG(1, 2))}
	stamps := []int64{1000, 998, 1003, 1001, 1001, 2000}
	for i, at := range stamps {
		if q.admit(at, 1, uint32(i+1)) {
			t.Fatalf("packet %d went on at once under a plain delay", i+1)
		}
	}
	out := q.popDue(1e9, nil)
	for i, h := range out {
		if h.id != uint32(i+1) {
			t.Fatalf("released %v, want ids 1..%d in order", out, len(stamps))
		}
	}
}
