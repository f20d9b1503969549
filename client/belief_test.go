package client

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestSuccessAfterTheLossDeadlineEndsTheBelief: the loss deadline is a
// promise to the holder (stop acting by then), so a success that is
// handled at or after it, before the watchdog's timer has run (a paused
// process, a busy machine: timers fire late), ends the belief instead
// of extending it: Done closes, the error is ErrLost naming why, and the
// owner's requests are stopped. A success a nanosecond before the
// deadline extends it.
func TestSuccessAfterTheLossDeadlineEndsTheBelief(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const safety = 100 * time.Millisecond
		for _, late := range []time.Duration{-time.Nanosecond, 0, time.Nanosecond, 50 * time.Millisecond} {
			stopped := false
			b := &belief{what: `chunk "ch_1" for cs1`, safety: safety}
			start := time.Now()
			if !b.start(start.Add(time.Second), func() { stopped = true }) {
				t.Fatal("a belief of a second with a safety margin of 100 ms did not start")
			}
			b.watchdog.Stop() // the watchdog runs late
			time.Sleep(time.Second - safety + late)
			extended := b.extend(time.Now().Add(time.Second), nil)
			ended := b.getErr() != nil
			switch {
			case late < 0 && (!extended || ended):
				t.Fatalf("a success %v before the loss deadline: extended %v, ended %v (%v); want it extended", -late, extended, ended, b.getErr())
			case late < 0:
				b.end(ErrClosed)
			case extended || !ended || !stopped || !errors.Is(b.getErr(), ErrLost) || !strings.Contains(b.getErr().Error(), "after the loss deadline"):
				t.Fatalf("a success %v after the loss deadline: extended %v, requests stopped %v, error %v; want the belief ended, lost after the loss deadline",
					late, extended, stopped, b.getErr())
			}
			select {
			case <-b.done:
			default:
				t.Fatalf("a success %v after the loss deadline left Done open", late)
			}
		}
	})
}
