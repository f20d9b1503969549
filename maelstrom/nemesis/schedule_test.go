package nemesis

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	const interval, n = 2 * time.Second, 20000
	s, err := NewSchedule(Faults{Partition: true}, interval, Streams{Partition: rand.New(rand.NewPCG(testSeed(t), 3))})
	if err != nil {
		t.Fatal(err)
	}
	first := s.Pop()
	if first.At != 0 || first.F != StartPartition || first.Target == "" {
		t.Fatalf("first op %+v, want a start-partition at t=0", first)
	}
	prev := first
	var sum, maxGap time.Duration
	targets := map[Target]int{first.Target: 1}
	for range n {
		op := s.Pop()
		gap := op.At - prev.At
		if gap < 0 || gap >= 2*interval {
			t.Fatalf("gap %v outside [0, %v)", gap, 2*interval)
		}
		if op.F == prev.F {
			t.Fatalf("%s followed %s: ops must alternate", op.F, prev.F)
		}
		if (op.F == StartPartition) != (op.Target != "") {
			t.Fatalf("op %+v: a start has a target, a stop none", op)
		}
		targets[op.Target]++
		sum += gap
		maxGap = max(maxGap, gap)
		prev = op
	}
	// Gaps are U[0, 4s): mean 2s, standard error 1.15s/sqrt(20000) = 8ms.
	if mean := sum / n; math.Abs(float64(mean-interval)) > float64(60*time.Millisecond) {
		t.Errorf("mean gap %v, want %v +- 60ms", mean, interval)
	}
	if maxGap < 2*interval-10*time.Millisecond {
		t.Errorf("max gap %v: the gaps do not span [0, 2*interval)", maxGap)
	}
	starts := n/2 + 1
	for _, target := range Targets {
		// Each target has p = 1/4; 0.03 is over 6 standard errors.
		if f := float64(targets[target]) / float64(starts); math.Abs(f-0.25) > 0.03 {
			t.Errorf("target %s chosen %.3f of the time, want 0.25", target, f)
		}
	}
}

func TestScheduleRejectsZeroIntervalAndNoFaults(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := NewSchedule(Faults{Partition: true}, 0, Streams{Partition: rng, Process: rng}); err == nil {
		t.Error("interval 0 accepted")
	}
	if _, err := NewSchedule(Faults{}, time.Second, Streams{Partition: rng, Process: rng}); err == nil {
		t.Error("a schedule without faults accepted")
	}
}
