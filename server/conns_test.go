package server

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// limiterRig is a connLimiter on a loopback listener with a clock the
// test moves; each dial returns the client's end and the accepted end
// (nil when the limiter closed the new connection at once).
type limiterRig struct {
	t   *testing.T
	l   *connLimiter
	mu  sync.Mutex
	now time.Time
}

func newLimiterRig(t *testing.T, limit int) *limiterRig {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &limiterRig{t: t, now: time.Unix(1000, 0)}
	r.l = newConnLimiter(ln, limit)
	r.l.now = func() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.now }
	t.Cleanup(func() { ln.Close() })
	return r
}

func (r *limiterRig) advance(d time.Duration) { r.mu.Lock(); r.now = r.now.Add(d); r.mu.Unlock() }

// dial connects and admits the connection as Accept would.
func (r *limiterRig) dial() (client net.Conn, server *limitedConn) {
	client, err := net.Dial("tcp", r.l.Addr().String())
	if err != nil {
		r.t.Fatal(err)
	}
	raw, err := r.l.Listener.Accept()
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { client.Close(); raw.Close() })
	server = r.l.admit(raw)
	if server != nil {
		r.l.connState(server, http.StateNew)
	}
	return client, server
}

// closedByServer reports whether the server closed the client's end.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return err == io.EOF
}

// TestLimiterShedsSilentConnections: connections that never sent a byte
// hold their slots no longer than minShedAge once a new one comes: the
// oldest is shed; younger than minShedAge, none is, and the new one is
// refused.
func TestLimiterShedsSilentConnections(t *testing.T) {
	r := newLimiterRig(t, 2)
	c1, _ := r.dial()
	r.advance(100 * time.Millisecond)
	c2, _ := r.dial()
	if _, s := r.dial(); s != nil {
		t.Fatal("a third connection was admitted although both silent ones are younger than minShedAge")
	}
	r.advance(minShedAge)
	if _, s := r.dial(); s == nil {
		t.Fatalf("a new connection was refused while two silent ones held the slots for %v", minShedAge)
	}
	if !closedByServer(c1) {
		t.Fatal("the oldest silent connection was not the one shed")
	}
	c2.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c2.Read(make([]byte, 1)); err == io.EOF {
		t.Fatal("the younger silent connection was shed too")
	}
	if open, shed, refused := r.l.counts(); open != 2 || shed != 1 || refused != 0 {
		t.Fatalf("counts: open %d shed %d refused %d, want 2 1 0 (the refusal is counted by Accept)", open, shed, refused)
	}
}

// TestLimiterPrefersIdleToSilent: an idle keep-alive connection (quiet
// for minShedAge) is shed before an older silent one.
func TestLimiterPrefersIdleToSilent(t *testing.T) {
	r := newLimiterRig(t, 2)
	silent, _ := r.dial()
	idle, s := r.dial()
	r.l.connState(s, http.StateActive)
	r.l.connState(s, http.StateIdle)
	r.advance(minShedAge)
	if _, s := r.dial(); s == nil {
		t.Fatal("a new connection was refused with an idle one to shed")
	}
	if !closedByServer(idle) {
		t.Fatal("the idle connection was not shed")
	}
	silent.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := silent.Read(make([]byte, 1)); err == io.EOF {
		t.Fatal("the silent connection was shed although an idle one was there")
	}
}

// TestLimiterNeverCutsARequestItRead: bytes read from an idle connection
// make it busy at once (before ConnState says active): it is not shed.
// And a connection shed before its bytes were read never delivers them.
func TestLimiterNeverCutsARequestItRead(t *testing.T) {
	r := newLimiterRig(t, 1)
	c, s := r.dial()
	r.l.connState(s, http.StateActive)
	r.l.connState(s, http.StateIdle)
	r.advance(minShedAge)
	c.Write([]byte("GET / HTTP/1.1\r\n"))
	if n, err := s.Read(make([]byte, 64)); n == 0 || err != nil {
		t.Fatalf("reading the request: %d %v", n, err)
	}
	// The server holds a request now; ConnState has not said so yet.
	if _, s2 := r.dial(); s2 != nil {
		t.Fatal("a connection whose request the server had read was shed for a new one")
	}

	// Shed first, then the bytes come: the server never sees them.
	r.l.connState(s, http.StateIdle)
	r.advance(minShedAge)
	if _, s2 := r.dial(); s2 == nil {
		t.Fatal("the idle connection was not shed")
	}
	c.Write([]byte("GET / HTTP/1.1\r\n"))
	if n, err := s.Read(make([]byte, 64)); n != 0 || err == nil {
		t.Fatalf("a shed connection delivered %d bytes of a request (err %v)", n, err)
	}
}
