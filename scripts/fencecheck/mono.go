package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// monoClock converts Go times to CLOCK_MONOTONIC nanoseconds, the clock
// every process on the machine shares. Go's time.Time carries a reading
// of that same clock since the process started, so t.Sub(base) is exact;
// only the base is uncertain, by the gap between the two kernel reads
// around time.Now (lo and hi). early and late widen an interval by it.
type monoClock struct {
	base   time.Time
	lo, hi int64
}

func newMonoClock() monoClock {
	lo := monoNow()
	base := time.Now()
	hi := monoNow()
	return monoClock{base: base, lo: lo, hi: hi}
}

// early is the earliest CLOCK_MONOTONIC time t can be.
func (m monoClock) early(t time.Time) int64 { return m.lo + int64(t.Sub(m.base)) }

// late is the latest CLOCK_MONOTONIC time t can be.
func (m monoClock) late(t time.Time) int64 { return m.hi + int64(t.Sub(m.base)) }

func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}
