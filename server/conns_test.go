package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// limiterRig is a connLimiter on a loopback listener with a clock the
// test moves; each dial returns the client's end and the accepted end
// (nil when the limiter did not admit the new connection).
type limiterRig struct {
	t   *testing.T
	l   *connLimiter
	mu  sync.Mutex
	now time.Time
}

func newLimiterRig(t *testing.T, limit, perSource int) *limiterRig {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &limiterRig{t: t, now: time.Unix(1000, 0)}
	r.l = newConnLimiter(ln, limit, perSource, nil, "overloaded")
	r.l.now = func() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }
	t.Cleanup(func() { ln.Close() })
	return r
}

func (r *limiterRig) advance(d time.Duration) { r.mu.Lock(); r.now = r.now.Add(d); r.mu.Unlock() }

// poll waits for ok, something the kernel does (5 s at most).
func (r *limiterRig) poll(ok func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			r.t.Fatal("the kernel did not get there within 5 s")
		}
		time.Sleep(time.Millisecond) // polling the kernel's state, with a deadline
	}
}

// dial connects from 127.0.0.1 and admits the connection as Accept would.
func (r *limiterRig) dial() (client net.Conn, server *limitedConn) { return r.dialFrom("127.0.0.1") }

// dialFrom connects from the loopback address from.
func (r *limiterRig) dialFrom(from string) (client net.Conn, server *limitedConn) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	client, err := d.Dial("tcp", r.l.Addr().String())
	if err != nil {
		r.t.Fatal(err)
	}
	raw, err := r.l.Listener.Accept()
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { client.Close(); raw.Close() })
	return client, r.l.admit(raw)
}

// request makes s's connection serve one complete request: busy, then
// idle again (what ServeHTTP's begin and the ConnState hook do).
func (r *limiterRig) request(s *limitedConn) {
	r.t.Helper()
	if !r.l.begin(requestOn(s)) {
		r.t.Fatal("a live connection refused its request")
	}
	r.l.connState(s, http.StateIdle)
}

// requestOn is a request read from connection s.
func requestOn(s *limitedConn) *http.Request {
	return (&http.Request{}).WithContext(context.WithValue(context.Background(), connKey{}, s))
}

// closedByServer reports whether the server closed the client's end
// with a reset, as the limiter closes (abort): a write after it fails.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, syscall.ECONNRESET)
}

// stillOpen reports whether the client's end sees nothing for a moment.
func stillOpen(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// overloaded sends a request on a connection the limiter did not admit
// and reads the answer: it must be 503 with Retry-After and Connection:
// close, and the connection must then end without a reset.
func overloaded(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "POST /v1/lease_check HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n{\"chunk_handle\":\"a\"}"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer on a connection beyond the limit: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !resp.Close ||
		!strings.Contains(string(body), `"code":11`) {
		t.Fatalf("the answer beyond the limit: %d %v %s; want 503, Retry-After: 1, Connection: close, code 11", resp.StatusCode, resp.Header, body)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the 503 the connection ended with %v, want EOF (no reset)", err)
	}
}

// TestLimiterShedsByLastCompleteRequest: at the limit a new connection
// takes the place of the quiet one whose last complete request is
// oldest: a connection that trickled bytes but never completed a request
// (slowloris) goes before one that served a request since, however many
// bytes it read; and none younger than freshGrace goes.
func TestLimiterShedsByLastCompleteRequest(t *testing.T) {
	r := newLimiterRig(t, 2, 2)
	trickler, ts := r.dial()
	_, ws := r.dial()
	for range 3 { // a header byte at a time, never a whole request
		trickler.Write([]byte("G"))
		if n, err := ts.Read(make([]byte, 8)); n != 1 || err != nil {
			t.Fatalf("reading the trickle: %d %v", n, err)
		}
		r.advance(100 * time.Millisecond)
	}
	r.request(ws) // the other one completes a request now
	r.advance(freshGrace)
	c3, s3 := r.dial()
	if s3 == nil {
		t.Fatal("a new connection was not admitted with a trickling one to shed")
	}
	if !closedByServer(trickler) {
		t.Fatal("the trickling connection was not the one shed")
	}
	if n, err := ts.Read(make([]byte, 8)); n != 0 || err == nil {
		t.Fatalf("the shed connection still delivers bytes: %d %v", n, err)
	}
	// The two left: one idle for freshGrace (< idleGrace), one fresh
	// and younger than freshGrace: no room; the newcomer is answered 503.
	c4, s4 := r.dial()
	if s4 != nil {
		t.Fatal("a connection was admitted although every quiet one is within its grace")
	}
	overloaded(t, c4)
	if !stillOpen(c3) {
		t.Fatal("the young connection was shed")
	}
	if open, shed, over, refused := r.l.counts(); open != 2 || shed != 1 || over != 1 || refused != 0 {
		t.Fatalf("counts: open %d shed %d overloaded %d refused %d, want 2 1 1 0", open, shed, over, refused)
	}
}

// TestLimiterNeverShedsABusyConnection: a connection whose complete
// request is being answered is never shed, however old; when every
// connection is busy a new one is answered 503, and a connection shed
// before its request was complete never has it served.
func TestLimiterNeverShedsABusyConnection(t *testing.T) {
	r := newLimiterRig(t, 1, 1)
	_, s := r.dial()
	if !r.l.begin(requestOn(s)) {
		t.Fatal("the request was refused")
	}
	r.advance(time.Hour)
	c2, s2 := r.dial()
	if s2 != nil {
		t.Fatal("a busy connection was shed for a new one")
	}
	overloaded(t, c2)
	r.l.connState(s, http.StateIdle)
	r.advance(idleGrace)
	if _, s3 := r.dial(); s3 == nil {
		t.Fatal("the idle connection was not shed for a new one")
	}
	if r.l.begin(requestOn(s)) {
		t.Fatal("a shed connection's request was let through")
	}
}

// TestLimiterPerAddress: one address at its limit cannot take another's
// slots: its new connection takes the place of one of its own quiet
// ones, or is answered 503, while another address is admitted.
func TestLimiterPerAddress(t *testing.T) {
	r := newLimiterRig(t, 8, 2)
	var greedy []*limitedConn
	for range 2 {
		_, s := r.dialFrom("127.0.0.2")
		if !r.l.begin(requestOn(s)) {
			t.Fatal("refused")
		}
		greedy = append(greedy, s)
	}
	c, s := r.dialFrom("127.0.0.2")
	if s != nil {
		t.Fatal("a third connection of one address was admitted beyond its limit of 2")
	}
	overloaded(t, c)
	if _, s := r.dialFrom("127.0.0.3"); s == nil {
		t.Fatal("another address was refused while the node has room")
	}
	r.l.connState(greedy[0], http.StateIdle)
	r.advance(idleGrace)
	if _, s := r.dialFrom("127.0.0.2"); s == nil {
		t.Fatal("the address's own idle connection was not shed for its new one")
	}
}

// TestLimiterDrainClosesQuietConnectionsFirst: closeQuiet closes the
// connections quiet for the grace that read nothing since; a busy one,
// one that began to send its next request (read, or waiting unread in
// its socket), and one quiet for less than the grace stay, and each is
// counted as left.
func TestLimiterDrainClosesQuietConnectionsFirst(t *testing.T) {
	const quietGrace = 100 * time.Millisecond
	r := newLimiterRig(t, 8, 8)
	idle, is := r.dial()
	r.request(is)
	_, bs := r.dial()
	r.l.begin(requestOn(bs))
	sending, ss := r.dial()
	r.request(ss)
	arriving, as := r.dial()
	r.request(as)
	r.advance(quietGrace)
	arriving.Write([]byte("POST")) // never read by the server
	r.poll(func() bool { return waiting(as.Conn) })
	sending.Write([]byte("POST"))
	if n, _ := ss.Read(make([]byte, 8)); n == 0 {
		t.Fatal("reading the next request")
	}
	young, _ := r.dial()
	if left := r.l.closeQuiet(quietGrace); left != 4 {
		t.Fatalf("closeQuiet left %d connections, want 4 (busy, sending, arriving, young)", left)
	}
	if !closedByServer(idle) {
		t.Fatal("the idle connection was not closed")
	}
	if !stillOpen(sending) || !stillOpen(arriving) || !stillOpen(young) {
		t.Fatal("a connection sending its request, or one younger than the grace, was closed")
	}
}
