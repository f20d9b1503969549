package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock is one process's clocks; safe for concurrent use. Reads take no
// lock: every loop of a member reads the clock at every event, and a
// shared mutex there would put the loops in one line on the same cache
// line. A change (set) publishes a new skew whole.
type Clock struct {
	originReal time.Time // the machine's clock at the origin (monotonic and wall)

	mu   sync.Mutex           // serialises set
	skew atomic.Pointer[skew] // the skew in force; replaced, never changed, by set

	stop, done chan struct{} // the control file's poller (clockfault builds); nil without one
}

// skew is how a Clock runs from its last change on; immutable once
// published.
type skew struct {
	base     time.Duration // Now() at realBase
	realBase time.Duration // real time since originReal at the last rate change
	rate     float64       // this clock's seconds per real second
	offset   time.Duration // added to every wall-clock read
	changed  chan struct{} // closed at the next change; nil while nothing can change
}

// Real is the machine's clocks, unskewed: what every normal build runs on.
func Real() *Clock {
	c := &Clock{originReal: time.Now()}
	c.skew.Store(&skew{rate: 1})
	return c
}

// Now is the time elapsed on this clock since it was made.
func (c *Clock) Now() time.Duration {
	return c.skew.Load().at(time.Since(c.originReal))
}

// at converts a real elapsed time into this clock's time.
func (s *skew) at(real time.Duration) time.Duration {
	if s.rate == 1 {
		return s.base + (real - s.realBase)
	}
	return s.base + time.Duration(float64(real-s.realBase)*s.rate)
}

// Wall is the wall clock as this process reads it.
func (c *Clock) Wall() time.Time {
	s := c.skew.Load()
	return c.originReal.Round(0).Add(s.offset + s.at(time.Since(c.originReal)))
}

// RealDelay is how long a timer must really wait for d of this clock to
// pass at the current rate (never negative).
func (c *Clock) RealDelay(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	s := c.skew.Load()
	if s.rate == 1 {
		return d
	}
	return time.Duration(float64(d) / s.rate)
}

// Changed is closed when the rate or the offset changes; a timer waiting
// on RealDelay should then re-arm. Nil (never ready) while the clock
// cannot change.
func (c *Clock) Changed() <-chan struct{} {
	return c.skew.Load().changed
}

// Skew reports the current offset and rate.
func (c *Clock) Skew() (offset time.Duration, rate float64) {
	s := c.skew.Load()
	return s.offset, s.rate
}

// set changes the offset and the rate at once, keeping Now continuous.
func (c *Clock) set(offset time.Duration, rate float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.skew.Load()
	if offset == old.offset && rate == old.rate {
		return
	}
	real := time.Since(c.originReal)
	c.skew.Store(&skew{base: old.at(real), realBase: real, offset: offset, rate: rate, changed: make(chan struct{})})
	if old.changed != nil {
		close(old.changed)
	}
}
