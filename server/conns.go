package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// connLimiter is the client connections' budget: one that no client and
// no attacker can use up. At most max connections are open at once
// (-max-client-conns), at most perSource from one address
// (-max-client-conns-per-addr), so one client's connections can neither
// exhaust the node's descriptors and memory nor lock other clients out.
//
// What a connection is worth is what it does: a connection is busy from
// the moment a complete request was read (headers, and the body of a
// POST) until its answer is written; otherwise it is quiet, keyed by the
// time of its last complete request (its accept, if it has made none).
// Bytes alone do not count: a connection that trickles a header or body
// byte a second (slowloris) stays quiet, keyed by its last complete
// request, however many bytes it sends. At a limit, a new connection
// takes the place of the quiet connection with the oldest key, of its
// own address when that address is at its limit, else of any: first the
// ones that never completed a request (silent or trickling, once
// freshGrace old), then idle keep-alive connections (once idle for
// idleGrace, so a client that reuses its connection within a second is
// never cut). When none qualifies (every connection busy, or all too
// young: the node is overloaded), the new connection is answered "503
// Service Unavailable" with Retry-After: 1 and Connection: close once
// its request head arrives (answerOverloaded), not closed unanswered;
// at most overflowMax such answers run at once (a quarter of them for one
// address), and only beyond that is a new connection closed at once.
//
// A request is never cut by shedding: a busy connection is never shed,
// and the connection of a complete request is made busy under the same
// lock that picks whom to shed; a connection picked first refuses the
// bytes it reads later (its Read fails), so no handler serves a request
// from a shed connection. What remains is the client's view: a request
// sent on a connection as it is shed finds it closed, an unknown outcome
// to the client although the node never carried it out; the graces make
// that rare.
//
// Drain (closeQuiet): connections that are quiet, have read nothing since
// their last answer and have no bytes waiting in their socket are closed
// once quiet for a grace, so idle keep-alive connections go first and a
// client that sends at once still gets its answer (503 with Connection:
// close while draining). The limiter closes with a reset (abort), so a
// client that sends on a connection just closed fails to write, knowing
// nothing was sent, instead of waiting for an answer that cannot come.
//
// It wraps the listener below TLS, sees each connection's state through
// http.Server.ConnState and each request through begin (http.go).
type connLimiter struct {
	net.Listener
	max, perSource int
	overflowMax    int
	tls            *tls.Config // client TLS, for the overload answers; nil: plain HTTP
	answer         []byte      // the whole overload answer (overload.go)
	now            func() time.Time

	mu      sync.Mutex
	open    int
	fresh   connList // quiet, never completed a request, by accept time
	idle    connList // quiet, completed one, by the end of the last
	sources map[netip.Addr]*source
	over    int // overload answers running

	shed, overloaded, refused atomic.Int64
}

// The graces: how long a quiet connection is kept before a new one may
// take its place. freshGrace is far more than a client on any network
// needs to send its first request after connecting; idleGrace keeps a
// keep-alive connection that is reused within a second.
const (
	freshGrace = 250 * time.Millisecond
	idleGrace  = time.Second
	// overloadHeadTimeout bounds the wait for the request head of a
	// connection answered 503, and overloadLinger the reading of what
	// follows it before the close (a lingering close, so that the client
	// reads the answer instead of a reset).
	overloadHeadTimeout = time.Second
	overloadLinger      = 500 * time.Millisecond
)

// source is one client address's share.
type source struct {
	addr        netip.Addr
	open, over  int
	fresh, idle connList
}

// newConnLimiter limits ln's connections to limit, perSource from one
// address; an overloaded connection's answer says text (code 11).
func newConnLimiter(ln net.Listener, limit, perSource int, tlsCfg *tls.Config, text string) *connLimiter {
	return &connLimiter{Listener: ln, max: limit, perSource: min(perSource, limit), overflowMax: overflowFor(limit), tls: tlsCfg,
		answer: overloadAnswer(text), now: time.Now, sources: map[netip.Addr]*source{}}
}

// overflowFor is how many overload answers may run at once for a limit.
func overflowFor(limit int) int { return max(16, limit/4) }

// limitedConn is one admitted connection. It gives its slot back once,
// when closed by whoever closes it. The fields after once are guarded by
// the limiter's mu.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	src  *source
	once sync.Once
	// watch: quiet and nothing read since; a Read must take the lock.
	watch   atomic.Bool
	list    *connList // the quiet list it is in; nil while busy or closed
	g, s    link      // its places in the limiter's list and its source's
	since   time.Time // the key: accept, or the end of its last request
	reading bool      // read bytes since it became quiet
	cut     bool      // shed or closed by the limiter: reads fail
	gone    bool      // its slot was given back
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.release(c) })
	return c.Conn.Close()
}

// Read notes the first bytes after a quiet spell (the connection is no
// longer one a drain may close), or fails if the limiter cut it first.
func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.watch.Load() && !c.l.sawBytes(c) {
		return 0, net.ErrClosed
	}
	return n, err
}

// sourceOf is the address a connection counts against.
func sourceOf(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// Accept returns the next connection within the limits; the others are
// answered 503 (or, beyond overflowMax, closed) on the side.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
	}
}

// admit takes a slot for c, shedding a quiet connection at a limit; nil
// when c is answered as overloaded or closed instead.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	now := l.now()
	l.mu.Lock()
	s := l.source(sourceOf(c))
	var victim *limitedConn
	switch {
	case s.open >= l.perSource:
		victim = pick(now, &s.fresh, &s.idle)
	case l.open >= l.max:
		victim = pick(now, &l.fresh, &l.idle)
	}
	if victim == nil && (s.open >= l.perSource || l.open >= l.max) {
		overflow := l.over < l.overflowMax && s.over < max(1, l.overflowMax/4)
		if overflow {
			l.over++
			s.over++
		}
		l.forget(s)
		l.mu.Unlock()
		if !overflow {
			l.refused.Add(1)
			c.Close()
			return nil
		}
		l.overloaded.Add(1)
		go l.answerOverloaded(c, s)
		return nil
	}
	if victim != nil {
		l.cut(victim)
	}
	lc := &limitedConn{Conn: c, l: l, src: s}
	l.open++
	s.open++
	l.quiet(lc, &l.fresh, &s.fresh, now)
	l.mu.Unlock()
	if victim != nil {
		l.shed.Add(1)
		abort(victim.Conn)
	}
	return lc
}

// pick is the quiet connection to shed: the head of fresh (the oldest
// that never completed a request) once freshGrace old, else the head of
// idle once idleGrace idle; nil if neither.
func pick(now time.Time, fresh, idle *connList) *limitedConn {
	if h := fresh.head(); h != nil && now.Sub(h.since) >= freshGrace {
		return h
	}
	if h := idle.head(); h != nil && now.Sub(h.since) >= idleGrace {
		return h
	}
	return nil
}

// cut takes c out of every list and gives its slot back now, so that a
// new connection can have it; its Reads fail from now on.
func (l *connLimiter) cut(c *limitedConn) {
	c.cut = true
	l.unquiet(c)
	l.giveBack(c)
}

func (l *connLimiter) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.cut = true
	l.unquiet(c)
	l.giveBack(c)
}

func (l *connLimiter) giveBack(c *limitedConn) {
	if c.gone {
		return
	}
	c.gone = true
	l.open--
	c.src.open--
	l.forget(c.src)
}

// source returns the share of addr, made on first use.
func (l *connLimiter) source(addr netip.Addr) *source {
	s := l.sources[addr]
	if s == nil {
		s = &source{addr: addr}
		l.sources[addr] = s
	}
	return s
}

// forget drops a share that holds nothing.
func (l *connLimiter) forget(s *source) {
	if s.open == 0 && s.over == 0 {
		delete(l.sources, s.addr)
	}
}

// quiet puts c at the tail of a global and a source list, keyed now.
func (l *connLimiter) quiet(c *limitedConn, global, own *connList, now time.Time) {
	c.since, c.reading, c.list = now, false, global
	global.push(c, (*limitedConn).gLink)
	own.push(c, (*limitedConn).sLink)
	c.watch.Store(true)
}

// unquiet takes c out of its quiet lists, if it is in any.
func (l *connLimiter) unquiet(c *limitedConn) {
	c.watch.Store(false)
	if c.list == nil {
		return
	}
	own := &c.src.fresh
	if c.list == &l.idle {
		own = &c.src.idle
	}
	c.list.remove(c, (*limitedConn).gLink)
	own.remove(c, (*limitedConn).sLink)
	c.list = nil
}

// sawBytes notes that c read bytes since it became quiet; false if it
// was cut.
func (l *connLimiter) sawBytes(c *limitedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.watch.Store(false)
	c.reading = true
	return !c.cut
}

// begin makes the connection of r busy: a complete request was read and
// will be answered. False if the limiter cut it first: then nothing is
// answered (the connection is closed).
func (l *connLimiter) begin(r *http.Request) bool {
	c, ok := r.Context().Value(connKey{}).(*limitedConn)
	if !ok {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.cut {
		return false
	}
	l.unquiet(c)
	return true
}

// connKey is the request context's key of its *limitedConn
// (http.Server.ConnContext).
type connKey struct{}

// connContext is the http.Server's ConnContext hook: requests find their
// connection in their context.
func (l *connLimiter) connContext(ctx context.Context, c net.Conn) context.Context {
	if lc := limitedOf(c); lc != nil {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

func limitedOf(c net.Conn) *limitedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, _ := c.(*limitedConn)
	return lc
}

// connState is the http.Server's ConnState hook: a connection that
// answered its request and waits for the next is quiet from now on,
// keyed by now (the end of its last complete request).
func (l *connLimiter) connState(c net.Conn, s http.ConnState) {
	lc := limitedOf(c)
	if lc == nil || s != http.StateIdle {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.cut {
		return
	}
	l.unquiet(lc)
	l.quiet(lc, &l.idle, &lc.src.idle, now)
}

// closeQuiet closes every quiet connection that has read nothing since it
// became quiet and has been quiet for grace (a drain), and reports how
// many connections are left, open or being answered as overloaded.
func (l *connLimiter) closeQuiet(grace time.Duration) (left int) {
	now := l.now()
	var victims []*limitedConn
	l.mu.Lock()
	for _, list := range []*connList{&l.fresh, &l.idle} {
		for c := list.head(); c != nil; {
			next := c.g.next
			if !c.reading && now.Sub(c.since) >= grace && !waiting(c.Conn) {
				l.cut(c)
				victims = append(victims, c)
			}
			c = next
		}
	}
	left = l.open + l.over
	l.mu.Unlock()
	for _, c := range victims {
		abort(c.Conn)
	}
	return left
}

// abort closes c with a reset (SO_LINGER 0) rather than a FIN. A client
// that then sends on it fails to write at once, so it knows nothing was
// sent: Go's transport sends the request again on a new connection, and
// any client can tell "not sent" from "sent, no answer". After a FIN its
// write would succeed and only its read would fail, an unknown outcome.
func abort(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// waiting reports whether bytes wait unread in c's socket: a request on
// its way, which a drain answers rather than cuts.
func waiting(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return n > 0
}

// counts reports the connections open now, and how many were shed,
// answered as overloaded and closed at once since start.
func (l *connLimiter) counts() (open int, shed, overloaded, refused int64) {
	l.mu.Lock()
	open = l.open
	l.mu.Unlock()
	return open, l.shed.Load(), l.overloaded.Load(), l.refused.Load()
}

// link is a connection's place in one list.
type link struct{ prev, next *limitedConn }

func (c *limitedConn) gLink() *link { return &c.g }
func (c *limitedConn) sLink() *link { return &c.s }

// connList is an intrusive list of connections in the order they became
// quiet, so its head has the oldest key: shedding is O(1).
type connList struct{ first, last *limitedConn }

func (q *connList) head() *limitedConn { return q.first }

func (q *connList) push(c *limitedConn, at func(*limitedConn) *link) {
	*at(c) = link{prev: q.last}
	if q.last != nil {
		at(q.last).next = c
	} else {
		q.first = c
	}
	q.last = c
}

func (q *connList) remove(c *limitedConn, at func(*limitedConn) *link) {
	l := at(c)
	if l.prev != nil {
		at(l.prev).next = l.next
	} else {
		q.first = l.next
	}
	if l.next != nil {
		at(l.next).prev = l.prev
	} else {
		q.last = l.prev
	}
	*l = link{}
}
