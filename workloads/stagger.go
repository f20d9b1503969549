package workloads

import (
	"math"
	"math/rand/v2"
	"time"
)

// Never is what Wake returns when no operation will ever be due (a rate of
// zero, or nothing left to do).
const Never = time.Duration(math.MaxInt64)

// Stagger is Jepsen's gen/stagger with explicit time: the first op is due
// at time 0 and each op makes the next one due a uniform random gap in
// [0, 2/rate) after the time it was actually emitted, so a late op (every
// worker busy) pushes the schedule back instead of causing a burst. One
// stagger is shared by all workers, as in Maelstrom.
type Stagger struct {
	gapMax time.Duration // 2/rate; the mean gap is 1/rate
	nextAt time.Duration // when the next op is due; Never when rate is 0
}

func NewStagger(ratePerSec float64) Stagger {
	if ratePerSec <= 0 {
		return Stagger{nextAt: Never}
	}
	gapMax := time.Duration(2 * float64(time.Second) / ratePerSec)
	return Stagger{gapMax: gapMax, nextAt: 0}
}

// Due reports whether an op is due at now.
func (s *Stagger) Due(now time.Duration) bool {
	return s.nextAt != Never && now >= s.nextAt
}

// Fire records that an op was emitted at now and draws the next gap.
func (s *Stagger) Fire(now time.Duration, rng *rand.Rand) {
	var gap time.Duration
	if s.gapMax > 0 {
		gap = time.Duration(rng.Int64N(int64(s.gapMax)))
	}
	s.nextAt = now + gap
}

// NextAt is when the next op is due; Never when the rate is 0.
func (s *Stagger) NextAt() time.Duration { return s.nextAt }

// NewRand returns the workload's deterministic random source for a seed.
func NewRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x6c65617365)) // second word: "lease"
}
