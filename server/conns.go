package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimiter bounds the client connections open at once (-max-client-
// conns), so that one client's connections cannot use up the node's file
// descriptors and memory. At the limit a new connection takes the place
// of a quiet one: the one idle (between requests) longest, if idle for at
// least minShedAge; else the oldest that has sent nothing since it was
// accepted, if open for at least minShedAge (a silent connection holds a
// slot as surely as an idle one, until ReadHeaderTimeout); else the new
// connection is closed at once (accept-and-close: the client learns at
// once, and the descriptor is freed at once, where not accepting would
// leave it waiting in the kernel's backlog with no answer).
//
// A request is never cut by shedding: the first bytes a quiet connection
// reads make it busy, under the same lock that picks whom to shed, and a
// connection picked before its bytes were read refuses them (its Read
// fails), so no handler ever sees a request from a shed connection. What
// remains is the client's view: a request sent on a connection as it is
// shed finds it closed, an unknown outcome to the client although the
// node never carried it out. minShedAge makes that rare (a keep-alive
// client that sends again within a second is never shed).
//
// It wraps the listener below TLS and sees each connection's state
// through http.Server.ConnState.
type connLimiter struct {
	net.Listener
	max int
	now func() time.Time // time.Now; a test's clock

	mu    sync.Mutex
	open  int
	quiet map[*limitedConn]struct{} // connections that may be shed
	shed  atomic.Int64              // quiet connections closed to make room
	refus atomic.Int64              // new connections closed at once
}

// minShedAge is how long a connection must have been quiet before a new
// one may take its place.
const minShedAge = time.Second

func newConnLimiter(ln net.Listener, limit int) *connLimiter {
	return &connLimiter{Listener: ln, max: limit, now: time.Now, quiet: map[*limitedConn]struct{}{}}
}

// limitedConn gives its slot back once, when closed by whoever closes it.
// The fields after once are guarded by the limiter's mu.
type limitedConn struct {
	net.Conn
	l       *connLimiter
	once    sync.Once
	isQuiet atomic.Bool // in the quiet set: a Read must take the lock
	fresh   bool        // accepted, nothing read yet
	since   time.Time   // quiet since
	cut     bool        // shed: reads fail
}

func (c *limitedConn) Close() error {
	c.once.Do(c.l.release(c))
	return c.Conn.Close()
}

// Read marks the connection busy at its first bytes after a quiet spell,
// or fails if the limiter shed it first.
func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.isQuiet.Load() && !c.l.wake(c) {
		return 0, net.ErrClosed
	}
	return n, err
}

func (l *connLimiter) release(c *limitedConn) func() {
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.open--
		l.setBusy(c)
	}
}

// wake makes c busy; false if it was shed.
func (l *connLimiter) wake(c *limitedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.cut {
		return false
	}
	l.setBusy(c)
	return true
}

func (l *connLimiter) setBusy(c *limitedConn) {
	delete(l.quiet, c)
	c.isQuiet.Store(false)
	c.fresh = false
}

func (l *connLimiter) setQuiet(c *limitedConn, fresh bool) {
	l.quiet[c] = struct{}{}
	c.isQuiet.Store(true)
	c.fresh, c.since = fresh, l.now()
}

// Accept returns the next connection within the limit.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
		l.refus.Add(1)
		c.Close()
	}
}

// admit takes a slot for c, shedding a quiet connection at the limit;
// nil when none has been quiet for minShedAge.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	l.mu.Lock()
	var victim *limitedConn
	if l.open >= l.max {
		if victim = l.victim(); victim == nil {
			l.mu.Unlock()
			return nil
		}
		victim.cut = true
		l.setBusy(victim)
	}
	l.open++
	lc := &limitedConn{Conn: c, l: l}
	l.setQuiet(lc, true)
	l.mu.Unlock()
	if victim != nil {
		l.shed.Add(1)
		victim.Close() // gives its slot back: open returns to the limit
	}
	return lc
}

// victim is the connection to shed: the longest idle, then the oldest
// fresh one, each only if quiet for minShedAge; nil if none.
func (l *connLimiter) victim() *limitedConn {
	cutoff := l.now().Add(-minShedAge)
	var idle, fresh *limitedConn
	for c := range l.quiet {
		if c.since.After(cutoff) {
			continue
		}
		best := &idle
		if c.fresh {
			best = &fresh
		}
		if *best == nil || c.since.Before((*best).since) {
			*best = c
		}
	}
	if idle != nil {
		return idle
	}
	return fresh
}

// connState is the http.Server's ConnState hook: an idle connection is
// quiet from now on; any other state but new is busy (a new one was made
// quiet at admit).
func (l *connLimiter) connState(c net.Conn, s http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok || s == http.StateNew {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s == http.StateIdle && !lc.cut {
		l.setQuiet(lc, false)
		return
	}
	l.setBusy(lc)
}

// counts reports the connections open now, and how many were shed and
// refused since start.
func (l *connLimiter) counts() (open int, shed, refused int64) {
	l.mu.Lock()
	open = l.open
	l.mu.Unlock()
	return open, l.shed.Load(), l.refus.Load()
}
