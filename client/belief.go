package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// belief is a time-bounded belief in holding something, a lease or a
// mastership: the believed end (until), the loss deadline (until less the
// safety margin), a watchdog timer that declares the loss at that
// deadline whatever else is going on, and the Done channel. Once ended it
// never comes back: a success answered after the loss deadline does not
// reopen Done.
type belief struct {
	what   string // for texts, e.g. `chunk "ch_1" for cs1`
	safety time.Duration
	// late is the broken variant that declares the loss a safety margin
	// after the believed end (a negative control).
	late bool
	// stalled is the tests' model of a process paused past its loss
	// deadline: the watchdog never fires, so only a check that reads the
	// clock (current) can find the loss.
	stalled bool

	mu        sync.Mutex
	until     time.Time
	err       error // why done closed; nil while held
	lastCause error // the latest failure since the last success
	done      chan struct{}
	watchdog  *time.Timer
	// stop ends the owner's in-flight requests when the belief ends.
	stop context.CancelFunc
}

// start arms the belief with its first believed end; false (and nothing
// armed) when the loss deadline has passed already.
func (b *belief) start(until time.Time, stop context.CancelFunc) bool {
	b.done, b.until, b.stop = make(chan struct{}), until, stop
	wait := time.Until(b.lossAtLocked())
	if wait <= 0 {
		return false
	}
	b.watchdog = time.AfterFunc(wait, b.expire)
	return true
}

// extend records a success with believed end until, and runs apply under
// the lock; false when the belief has ended or the success came at or
// after the loss deadline (then it ends now).
func (b *belief) extend(until time.Time, apply func()) bool {
	b.mu.Lock()
	if b.err != nil || !time.Now().Before(b.lossAtLocked()) {
		b.mu.Unlock()
		b.end(fmt.Errorf("%w: %s: the success answered after the loss deadline", ErrLost, b.what))
		return false
	}
	if until.After(b.until) {
		b.until = until
	}
	b.lastCause = nil
	if apply != nil {
		apply()
	}
	b.watchdog.Reset(time.Until(b.lossAtLocked()))
	b.mu.Unlock()
	return true
}

// failed notes a failure that is not yet a loss, for the loss's text.
func (b *belief) failed(err error) {
	b.mu.Lock()
	b.lastCause = err
	b.mu.Unlock()
}

// expire is the watchdog: at the loss deadline with no success since, the
// belief ends, whatever the owner's loop is waiting for.
func (b *belief) expire() {
	b.mu.Lock()
	if b.err != nil || b.stalled {
		b.mu.Unlock()
		return
	}
	if wait := time.Until(b.lossAtLocked()); wait > 0 {
		b.watchdog.Reset(wait) // a success moved the deadline as this fired
		b.mu.Unlock()
		return
	}
	cause := b.lastCause
	b.mu.Unlock()
	err := fmt.Errorf("%w: %s: nothing confirmed it by %v before the believed end", ErrLost, b.what, b.safety)
	if cause != nil {
		err = fmt.Errorf("%w (last failure: %w)", err, cause)
	}
	b.end(err)
}

// end closes Done with err, once, and stops the owner's requests.
func (b *belief) end(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return
	}
	b.err = err
	b.watchdog.Stop()
	close(b.done)
	b.stop()
}

// lost ends the belief at once with a refusal.
func (b *belief) lost(cause error) {
	b.end(fmt.Errorf("%w: %s: %w", ErrLost, b.what, cause))
}

// lossAt is the loss deadline, and whether the belief still holds.
func (b *belief) lossAt() (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lossAtLocked(), b.err == nil
}

func (b *belief) lossAtLocked() time.Time {
	if b.late {
		return b.until.Add(b.safety)
	}
	return b.until.Add(-b.safety)
}

func (b *belief) getErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *belief) getUntil() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.until
}

// waitFor waits until t; false when the belief ends or stopping closes
// first.
func (b *belief) waitFor(t time.Time, stopping <-chan struct{}) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-stopping:
		return false
	case <-b.done:
		return false
	}
}

// fatal reports whether a failed request's error ends the belief at once:
// a definite refusal other than "unavailable" (409, 400, 401, 404) will
// not change by retrying.
func fatal(err error) bool {
	return IsRefused(err) && !errors.Is(err, ErrUnavailable)
}
