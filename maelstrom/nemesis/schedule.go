package nemesis

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// The history f of the two nemesis ops.
const (
	StartPartition = "start-partition"
	StopPartition  = "stop-partition"
)

// Op is one scheduled nemesis operation.
type Op struct {
	At     time.Duration // when it is due, since the test started
	F      string        // StartPartition or StopPartition
	Target Target        // the shape of a start; empty for a stop
}

// Schedule yields the partition nemesis's ops in order. It is not safe
// for concurrent use.
type Schedule struct {
	interval time.Duration
	rng      *rand.Rand
	next     Op
}

// NewSchedule returns the schedule for --nemesis-interval interval (> 0):
// a start-partition due at t=0, then strictly alternating stop and start
// ops, each a uniform gap in [0, 2*interval) after the one before.
func NewSchedule(interval time.Duration, rng *rand.Rand) (*Schedule, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("nemesis interval must be > 0, got %v", interval)
	}
	s := &Schedule{interval: interval, rng: rng}
	s.next = Op{At: 0, F: StartPartition, Target: s.pickTarget()}
	return s, nil
}

// Peek returns the next op without consuming it.
func (s *Schedule) Peek() Op { return s.next }

// Pop returns the next op and schedules the one after it.
func (s *Schedule) Pop() Op {
	op := s.next
	gap := time.Duration(s.rng.Int64N(int64(2 * s.interval)))
	if op.F == StartPartition {
		s.next = Op{At: op.At + gap, F: StopPartition}
	} else {
		s.next = Op{At: op.At + gap, F: StartPartition, Target: s.pickTarget()}
	}
	return op
}

// pickTarget draws a shape uniformly, as Jepsen's rand-nth.
func (s *Schedule) pickTarget() Target {
	return Targets[s.rng.IntN(len(Targets))]
}
