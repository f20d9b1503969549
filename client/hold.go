package client

import (
	"errors"
	"fmt"
	"time"
)

// Acting on a lease (contract section 3, "Holders and storage"): a holder
// asks, at the moment of acting, whether its lease still holds, and hands
// the token on with the action. The answer comes from the monotonic clock
// read then, never from a timer: a process that was paused (SIGSTOP, a
// VM or GC stall, a starved CPU) runs again with its timers not yet fired,
// so Done can still be open long after the lease ended. Current and Act
// are that question for a Session and a Mastership alike.

// Held is the lease as its holder may act on it, read by Current.
type Held struct {
	// Token is the fencing token of the latest instance: hand it to every
	// action, so that storage can refuse the action if a newer holder has
	// acted (package fence).
	Token int64
	// Until is the believed end of the lease on the caller's clock.
	Until time.Time
	// ActBy is Until less the safety margin: Current refuses from then on.
	// An action that starts now and must end before the lease may have
	// ended should end by ActBy.
	ActBy time.Time
}

// Acted is what Act reports of one action.
type Acted struct {
	// Token is the token the action ran with; 0 when it did not run (the
	// lease did not hold when Act was called).
	Token int64
	// From is when the lease was found held, just before the action ran.
	From time.Time
	// To is when the lease was asked about again, just after the action
	// returned.
	To time.Time
	// Held reports whether the lease still held at To: then it held
	// throughout [From, To], so the action ran entirely under the lease.
	Held bool
}

// current is the check both holders share: b holds at time.Now() by the
// clock (now before its loss deadline), with read run under b's lock so
// that the token read belongs to the believed end returned. A check that
// finds the deadline passed ends the belief, as the watchdog would have
// had it run: Done closes and Err says why.
func (b *belief) current(read func()) (until, actBy time.Time, err error) {
	now := time.Now()
	b.mu.Lock()
	if b.err != nil {
		err = b.err
		b.mu.Unlock()
		return time.Time{}, time.Time{}, err
	}
	lossAt := b.lossAtLocked()
	if now.Before(lossAt) {
		until = b.until
		read()
		b.mu.Unlock()
		return until, lossAt, nil
	}
	cause := b.lastCause
	b.mu.Unlock()
	err = fmt.Errorf("%w: %s: asked %v after its believed end less the safety margin (%v); the process may have been paused or starved",
		ErrLost, b.what, now.Sub(lossAt).Round(time.Microsecond), b.safety)
	if cause != nil {
		err = fmt.Errorf("%w (last failure: %w)", err, cause)
	}
	b.end(err)
	return time.Time{}, time.Time{}, b.getErr()
}

// act runs action under the check: current before, current after.
func act(current func() (Held, error), action func(token int64) error) (Acted, error) {
	h, err := current()
	if err != nil {
		return Acted{}, err
	}
	a := Acted{Token: h.Token, From: time.Now()}
	actErr := action(h.Token)
	a.To = time.Now()
	_, lapse := current()
	a.Held = lapse == nil
	if lapse != nil {
		lapse = fmt.Errorf("the lease may have ended before the action with token %d returned: act as a deposed holder (storage that fences refuses it if a newer holder acted): %w", h.Token, lapse)
	}
	return a, errors.Join(actErr, lapse)
}

// Current reports, from the monotonic clock read now, whether the
// Session's lease still holds, with the token to hand on. It is the
// question to ask at the moment of acting, immediately before each
// action: the error (wrapping ErrLost or ErrClosed) says the lease ended
// or may have ended (now is at or past Until less the safety margin), and
// the program must not act as primary. Unlike Done it does not rely on a
// timer having run: after a pause it answers from the time now. An error
// is final: Done is closed by then.
func (s *Session) Current() (Held, error) {
	var token int64
	until, actBy, err := s.b.current(func() { token = s.token })
	if err != nil {
		return Held{}, err
	}
	return Held{Token: token, Until: until, ActBy: actBy}, nil
}

// Act runs action with the token of the latest instance if the lease
// holds now (Current), and reports whether it still held when action
// returned. err is nil only when action ran, returned nil, and the lease
// held throughout; otherwise it is action's error, or Current's (action
// did not run: Acted.Token is 0), or, when the lease may have ended
// before action returned, an error wrapping ErrLost, joined with
// action's. Action must pass the token to the storage it changes (e.g.
// fence.SetToken on an HTTP request): a holder paused between the check
// and the write can still write late, and only storage that refuses old
// tokens stops that.
func (s *Session) Act(action func(token int64) error) (Acted, error) {
	return act(s.Current, action)
}

// Current reports, from the monotonic clock read now, whether the node is
// still master as this Mastership believes, with the master lease's token
// to hand on: see Session.Current.
func (m *Mastership) Current() (Held, error) {
	var token int64
	until, actBy, err := m.b.current(func() { token = m.status.Token })
	if err != nil {
		return Held{}, err
	}
	return Held{Token: token, Until: until, ActBy: actBy}, nil
}

// Act runs action with the master lease's token if the mastership holds
// now, and reports whether it still held when action returned: see
// Session.Act.
func (m *Mastership) Act(action func(token int64) error) (Acted, error) {
	return act(m.Current, action)
}
