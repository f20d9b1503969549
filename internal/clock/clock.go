package clock

import (
	"sync"
	"time"
)

// Clock is one process's clocks; safe for concurrent use.
type Clock struct {
	originReal time.Time // the machine's clock at the origin (monotonic and wall)

	mu       sync.Mutex
	base     time.Duration // Now() at realBase
	realBase time.Duration // real time since originReal at the last rate change
	rate     float64       // this clock's seconds per real second
	offset   time.Duration // added to every wall-clock read
	changed  chan struct{} // closed and replaced at every change; nil while nothing can change

	stop, done chan struct{} // the control file's poller (clockfault builds); nil without one
}

// Real is the machine's clocks, unskewed: what every normal build runs on.
func Real() *Clock {
	return &Clock{originReal: time.Now(), rate: 1}
}

// Now is the time elapsed on this clock since it was made.
func (c *Clock) Now() time.Duration {
	real := time.Since(c.originReal)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at(real)
}

// at converts a real elapsed time into this clock's time; c.mu is held.
func (c *Clock) at(real time.Duration) time.Duration {
	if c.rate == 1 {
		return c.base + (real - c.realBase)
	}
	return c.base + time.Duration(float64(real-c.realBase)*c.rate)
}

// Wall is the wall clock as this process reads it.
func (c *Clock) Wall() time.Time {
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.originReal.Round(0).Add(c.offset + now)
}

// RealDelay is how long a timer must really wait for d of this clock to
// pass at the current rate (never negative).
func (c *Clock) RealDelay(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rate == 1 {
		return d
	}
	return time.Duration(float64(d) / c.rate)
}

// Changed is closed when the rate or the offset changes; a timer waiting
// on RealDelay should then re-arm. Nil (never ready) while the clock
// cannot change.
func (c *Clock) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Skew reports the current offset and rate.
func (c *Clock) Skew() (offset time.Duration, rate float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset, c.rate
}

// set changes the offset and the rate at once, keeping Now continuous.
func (c *Clock) set(offset time.Duration, rate float64) {
	real := time.Since(c.originReal)
	c.mu.Lock()
	defer c.mu.Unlock()
	if offset == c.offset && rate == c.rate {
		return
	}
	c.base = c.at(real)
	c.realBase = real
	c.offset, c.rate = offset, rate
	if c.changed != nil {
		close(c.changed)
	}
	c.changed = make(chan struct{})
}
