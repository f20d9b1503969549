package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// ErrLost is why a Session's or a Mastership's Done closed when the lease
// was lost: a renew was refused (ErrHeld, ...), or nothing confirmed the
// lease by its loss deadline (believed end less the safety margin). Err
// wraps it with the cause.
var ErrLost = errors.New("lease lost")

// ErrClosed is a Session's Err after Close, and a Mastership's after
// Resign, when it was not lost first.
var ErrClosed = errors.New("closed")

// SessionOptions tune a Session; the zero value means the defaults.
type SessionOptions struct {
	// LeaseMs is the lease length asked for at every grant and renew; 0
	// asks for the members' default, and the first grant's answer then
	// sets the schedule.
	LeaseMs int64
	// DriftMargin is taken off every believed expiry: the most the
	// caller's clock may lose against a member's over one lease. 0 means
	// 1% of the lease plus 1 ms.
	DriftMargin time.Duration
	// SafetyMargin is how long before the believed expiry the Session
	// gives up and declares the lease lost, so that the program has time
	// to stop acting as primary. 0 means 10% of the lease.
	SafetyMargin time.Duration
	// Seed seeds the renewals' jitter; 0 draws one.
	Seed uint64
	// OnRenew, when set, is called after each successful renewal with the
	// new instance, from the Session's goroutine (keep it short).
	OnRenew func(Lease)
}

// Session holds server's lease on chunk alive, as etcd's
// concurrency.Session does: see the package documentation for the
// schedule, the clock assumption and the loss rule.
type Session struct {
	c      *Client
	chunk  string
	server string
	opts   SessionOptions
	rand   *rand.Rand // the loop's only
	// ctx ends in-flight renewals when the Session stops.
	ctx context.Context
	b   belief
	// Guarded by b.mu:
	lease Lease // the latest answer
	token int64 // the largest token told

	closing   chan struct{}
	closeOnce sync.Once
	stopped   chan struct{} // the loop has returned

	variant sessionVariant // tests' broken variants (negative controls)
}

// sessionVariant names a deliberately broken Session, which tests must
// catch; the zero value is the real one.
type sessionVariant uint8

const (
	sessionCorrect sessionVariant = iota
	// lossAfterEnd declares the loss only a safety margin after the
	// believed expiry, i.e. after the lease can have ended.
	lossAfterEnd
	// expiryFromReceipt counts the believed expiry from when the answer
	// arrived instead of from when the request was sent.
	expiryFromReceipt
	// stalledWatchdog is correct but for the watchdog, which never fires:
	// a process whose timers run late after a pause. Current must still
	// refuse in time; Done alone must be caught.
	stalledWatchdog
)

// NewSession grants chunk to server and keeps the lease alive until Close
// or until it is lost. ctx bounds the grant only. The error wraps ErrHeld
// when another server holds the chunk (its text names the holder), and is
// unknown (IsUnknown) when the grant's outcome is.
func (c *Client) NewSession(ctx context.Context, chunk, server string, opts SessionOptions) (*Session, error) {
	return c.newSession(ctx, chunk, server, opts, sessionCorrect)
}

func (c *Client) newSession(ctx context.Context, chunk, server string, opts SessionOptions, v sessionVariant) (*Session, error) {
	if opts.LeaseMs < 0 || opts.DriftMargin < 0 || opts.SafetyMargin < 0 {
		return nil, errors.New("session options: LeaseMs, DriftMargin and SafetyMargin must not be negative (0 means the default)")
	}
	l, err := c.Grant(ctx, chunk, server, opts.LeaseMs)
	if err != nil {
		return nil, err
	}
	grant := (&request{op: opGrant, chunk: chunk, server: server}).describe("")
	if !l.Granted() {
		return nil, &Error{Request: grant, Code: -1, kind: ErrHeld,
			Text: fmt.Sprintf("chunk %q is held by %s for about %d ms more (token %d); try again after it expires", chunk, l.Primary, l.ExpiresInMs, l.Token)}
	}
	s := &Session{c: c, chunk: chunk, server: server, opts: opts, variant: v, lease: l, token: l.Token,
		rand: newRand(opts.Seed), closing: make(chan struct{}), stopped: make(chan struct{})}
	if err := s.resolve(l); err != nil {
		c.releaseQuietly(chunk, server, l.Token)
		return nil, err
	}
	s.b.what = "chunk " + strconv.Quote(chunk) + " for " + server
	s.b.safety, s.b.late, s.b.stalled = s.opts.SafetyMargin, v == lossAfterEnd, v == stalledWatchdog
	ctx, stop := context.WithCancel(context.Background())
	s.ctx = ctx
	if !s.b.start(s.believedUntil(l), stop) {
		stop()
		c.releaseQuietly(chunk, server, l.Token)
		return nil, &Error{Request: grant, Code: -1, kind: ErrUnavailable,
			Text: fmt.Sprintf("the grant (%d ms) came back too late to hold safely; given back; retry, or ask for a longer lease", l.ExpiresInMs)}
	}
	go s.run()
	return s, nil
}

// resolve fills the default margins from the lease length, and refuses
// margins that leave no time to renew.
func (s *Session) resolve(first Lease) error {
	length := time.Duration(s.opts.LeaseMs) * time.Millisecond
	if length == 0 {
		length = time.Duration(first.ExpiresInMs) * time.Millisecond
	}
	if s.opts.DriftMargin == 0 {
		s.opts.DriftMargin = length/100 + time.Millisecond
	}
	if s.opts.SafetyMargin == 0 {
		s.opts.SafetyMargin = length / 10
	}
	if m := s.opts.DriftMargin + s.opts.SafetyMargin; 3*m >= 2*length {
		return fmt.Errorf("session options: the drift margin (%v) and the safety margin (%v) leave no time to renew a %v lease; keep them together below two thirds of it", s.opts.DriftMargin, s.opts.SafetyMargin, length)
	}
	return nil
}

// Done is closed when the Session stops holding the lease: lost (Err
// wraps ErrLost), or closed (ErrClosed). It is a notification for
// stopping work, not a check to act on: a timer closes it at the believed
// expiry less the safety margin, and a timer cannot fire in a paused
// process, so after a pause Done can still be open when the lease has
// ended. Before acting, ask Current (or act through Act).
func (s *Session) Done() <-chan struct{} { return s.b.done }

// Err is nil while the lease is held, then why Done closed.
func (s *Session) Err() error { return s.b.getErr() }

// Until is the believed expiry of the lease (see the package
// documentation). It describes the lease; Current is the check.
func (s *Session) Until() time.Time { return s.b.getUntil() }

// Token is the fencing token of the latest instance. It describes the
// lease; to act, take the token from Current or Act, which first check
// that the lease still holds.
func (s *Session) Token() int64 {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.token
}

// Lease is the latest grant's or renew's answer.
func (s *Session) Lease() Lease {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.lease
}

// Close stops renewing and gives the lease back with the latest token,
// which ends every earlier instance too (rule 6 of package lease). A renewal in
// flight is awaited until ctx ends, so that its token is the one given
// back; give ctx time for one renewal and one release (e.g. 2 s). The
// error is the release's; Close may be called again to retry it.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closing) })
	select {
	case <-s.stopped:
	case <-ctx.Done():
		s.b.end(ErrClosed) // ends the renewal in flight
		<-s.stopped
	}
	s.b.end(ErrClosed)
	return s.c.Release(ctx, s.chunk, s.server, s.Token())
}

// run renews at a third of the lease, jittered by 10%, counted from when
// the latest renewal was sent, until the Session stops.
func (s *Session) run() {
	defer close(s.stopped)
	for {
		l := s.Lease()
		told := time.Duration(l.ExpiresInMs) * time.Millisecond
		if !s.b.waitFor(l.Sent.Add(s.jittered(told/3, 0.1)), s.closing) || !s.renew() {
			return
		}
	}
}

// renew tries until a renewal succeeds (true), or the lease is lost or
// the Session closing (false). A definite refusal other than "unavailable"
// (409 held by another server, 400, 401, 404) is a loss at once; an
// unavailable or unknown outcome is retried, through any member, after a
// pause of about a twentieth of the lease, until the loss deadline.
func (s *Session) renew() bool {
	for {
		lossAt, held := s.b.lossAt()
		if !held {
			return false
		}
		ctx, cancel := context.WithDeadline(s.ctx, lossAt)
		l, err := s.c.Renew(ctx, s.chunk, s.server, s.opts.LeaseMs)
		cancel()
		if err == nil {
			return s.renewed(l)
		}
		if fatal(err) {
			s.b.lost(err)
			return false
		}
		s.b.failed(err)
		told := time.Duration(s.Lease().ExpiresInMs) * time.Millisecond
		if !s.b.waitFor(time.Now().Add(s.jittered(told/20, 0.5)), s.closing) {
			return false
		}
	}
}

// renewed records a successful renewal, unless the lease is lost already.
func (s *Session) renewed(l Lease) bool {
	ok := s.b.extend(s.believedUntil(l), func() {
		s.lease, s.token = l, max(s.token, l.Token)
	})
	if ok && s.opts.OnRenew != nil {
		s.opts.OnRenew(l)
	}
	return ok
}

func (s *Session) believedUntil(l Lease) time.Time {
	if s.variant == expiryFromReceipt {
		l.Sent = time.Now()
	}
	return l.Until(s.opts.DriftMargin)
}

// jittered is d scaled by a factor drawn from [1-f, 1+f].
func (s *Session) jittered(d time.Duration, f float64) time.Duration {
	return time.Duration(float64(d) * (1 - f + 2*f*s.rand.Float64()))
}

// releaseQuietly gives a lease back, best effort, for a Session that
// could not start.
func (c *Client) releaseQuietly(chunk, server string, token int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.Release(ctx, chunk, server, token)
}
