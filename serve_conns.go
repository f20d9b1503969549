package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimiter bounds the client connections open at once (-max-client-
// conns), so that one client's idle keep-alive connections cannot use up
// the node's file descriptors and memory. At the limit, a new connection
// takes the place of the connection that has been idle longest (closed
// between requests, as IdleTimeout would close it later: a client
// reconnects); when none is idle, every one is in a request, and the new
// connection is closed at once (accept-and-close: the client learns at
// once, and the descriptor is freed at once, where not accepting would
// leave it waiting in the kernel's backlog with no answer).
//
// It wraps the listener below TLS and sees each connection's state
// through http.Server.ConnState.
type connLimiter struct {
	net.Listener
	max int

	mu    sync.Mutex
	open  int
	idle  map[*limitedConn]time.Time // idle keep-alive connections, since when
	shed  atomic.Int64               // idle connections closed to make room
	refus atomic.Int64               // new connections closed at once
}

func newConnLimiter(ln net.Listener, limit int) *connLimiter {
	return &connLimiter{Listener: ln, max: limit, idle: map[*limitedConn]time.Time{}}
}

// limitedConn gives its slot back once, when closed by whoever closes it.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(c.l.release(c))
	return c.Conn.Close()
}

func (l *connLimiter) release(c *limitedConn) func() {
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.open--
		delete(l.idle, c)
	}
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

// admit takes a slot for c, shedding the longest-idle connection at the
// limit; nil when every connection is in a request.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	l.mu.Lock()
	var victim *limitedConn
	if l.open >= l.max {
		var since time.Time
		for ic, t := range l.idle {
			if victim == nil || t.Before(since) {
				victim, since = ic, t
			}
		}
		if victim == nil {
			l.mu.Unlock()
			return nil
		}
		delete(l.idle, victim)
	}
	l.open++
	l.mu.Unlock()
	if victim != nil {
		l.shed.Add(1)
		victim.Close() // gives its slot back: open returns to the limit
	}
	return &limitedConn{Conn: c, l: l}
}

// connState is the http.Server's ConnState hook: it keeps the set of idle
// connections.
func (l *connLimiter) connState(c net.Conn, s http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateIdle:
		l.idle[lc] = time.Now()
	default:
		delete(l.idle, lc)
	}
}

// counts reports the connections open now, and how many were shed and
// refused since start.
func (l *connLimiter) counts() (open int, shed, refused int64) {
	l.mu.Lock()
	open = l.open
	l.mu.Unlock()
	return open, l.shed.Load(), l.refus.Load()
}
