package peer

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSilentMemberIsNotReachable: a member whose connections are up both
// ways (TLS, hello) but which never answers a ping is not reachable, and
// its connection is closed as dead and dialled again; a member that
// answers is reachable (the control, with the same transport settings).
func TestSilentMemberIsNotReachable(t *testing.T) {
	c := newTestCluster(t, 2)
	n1 := c.startWith("n1", Config{PingInterval: 10 * time.Millisecond})
	silent := c.silentMember(t, "n2", "h")
	defer silent.Close()
	eventually(t, "n1 connected to the silent n2, saw no answer and dialled again", func() bool {
		l := c.log("n1")
		return strings.Contains(l, "peer n2 at "+c.members[1].Addr+": connected") && strings.Contains(l, "no answer to pings for")
	})
	if n1.Reachable("n2") {
		t.Fatal("n2 counts as reachable although it never answered a ping")
	}
	silent.Close()
	c.startWith("n2", Config{PingInterval: 10 * time.Millisecond})
	eventually(t, "n1 and a real n2 reachable both ways", c.allReachable("n1", "n2"))
}

// TestBootingMemberIsReachableButNotServing: a member in its boot wait
// answers pings, so it is reachable and its connections stay up, but it
// is not serving until the wait ends; then it is, without a reconnect.
// The control: n1, never booting, is serving to n2 throughout.
func TestBootingMemberIsReachableButNotServing(t *testing.T) {
	c := newTestCluster(t, 2)
	var booting atomic.Bool
	booting.Store(true)
	n1 := c.startWith("n1", Config{PingInterval: 10 * time.Millisecond})
	n2 := c.startWith("n2", Config{PingInterval: 10 * time.Millisecond, Booting: booting.Load})
	eventually(t, "n1 and n2 reachable both ways", c.allReachable("n1", "n2"))
	if n1.Serving("n2") {
		t.Fatal("n2 counts as serving while its pongs say it is in its boot wait")
	}
	if !n2.Serving("n1") || !n1.Serving("n1") {
		t.Fatal("a member that is not booting (or this node itself) does not count as serving")
	}
	booting.Store(false)
	eventually(t, "n2 serving once its boot wait is over", func() bool { return n1.Serving("n2") })
	if strings.Contains(c.log("n1"), "dialling again") {
		t.Fatalf("n1 dropped its connection to the booting n2:\n%s", c.log("n1"))
	}
}

// TestHandshakesAreCapped: connections that never finish their handshake
// take at most MaxHandshakes slots; more are closed at once (the slots'
// holders are younger than minEvictAge), counted and logged. A member
// still connects while a flood holds every slot (each silent connection
// redialled as soon as it is closed): once the holders have aged, its
// dial takes the oldest one's slot, and the flood's redials cannot push
// out a handshake younger than minEvictAge.
func TestHandshakesAreCapped(t *testing.T) {
	const limit, extra = 4, 6
	c := newTestCluster(t, 2)
	n1 := c.startWith("n1", Config{MaxHandshakes: limit})
	var first []net.Conn
	for range limit + extra {
		conn, err := net.Dial("tcp", c.members[0].Addr)
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, conn)
	}
	eventually(t, "the connections beyond the cap counted", func() bool { return n1.Stats().Refused >= extra })
	closed := 0
	for _, conn := range first {
		// A refused one reads EOF at once; one holding a slot waits out
		// this deadline (far below the 5 s handshake deadline).
		conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := conn.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
		conn.SetReadDeadline(time.Time{})
	}
	if closed != extra {
		t.Fatalf("%d of %d silent connections closed at once, want the %d beyond the cap of %d", closed, len(first), extra, limit)
	}
	if !strings.Contains(c.log("n1"), "too many peer connections in their handshake") {
		t.Fatalf("the refusal is not logged:\n%s", c.log("n1"))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	for _, conn := range first {
		wg.Add(1)
		go holdSlot(&wg, stop, c.members[0].Addr, conn)
	}
	c.startWith("n2", Config{})
	eventually(t, "n1 and n2 reachable both ways under the flood", c.allReachable("n1", "n2"))
}

// holdSlot keeps one silent connection to addr open, dialling a new one
// as soon as the member closes it, until stop (at most 1000 dials).
func holdSlot(wg *sync.WaitGroup, stop chan struct{}, addr string, conn net.Conn) {
	defer wg.Done()
	for k := 0; k < 1000; k++ {
		done := make(chan struct{})
		go func(conn net.Conn) {
			select {
			case <-stop:
			case <-done:
			}
			conn.Close()
		}(conn)
		conn.Read(make([]byte, 1)) // until the member (or stop) closes it
		close(done)
		select {
		case <-stop:
			return
		default:
		}
		var err error
		if conn, err = net.Dial("tcp", addr); err != nil {
			return
		}
	}
}

// TestRefusedDiallerBacksOff: a member that refuses n1 after the TLS
// handshake (other cluster settings) is redialled with the backoff of a
// failed dial, and the repeated refusal is logged once with its reason.
func TestRefusedDiallerBacksOff(t *testing.T) {
	c := newTestCluster(t, 2)
	c.start("n2", "other settings", 0)
	started := time.Now()
	c.startWith("n1", Config{})
	// Six refused dials wait at least five backoffs, each at least half
	// of 50, 100, 200, 400, 800 ms: 775 ms. A lower bound, so a slow
	// machine cannot make it fail; without backoff they take milliseconds.
	eventually(t, "n2 refusing n1 six times", func() bool { return c.ts["n2"].Stats().Refused >= 6 })
	if took := time.Since(started); took < 775*time.Millisecond {
		t.Fatalf("n2 refused 6 connections of n1 within %v: n1 redials a refusing member without backoff", took)
	}
	eventually(t, "n1 logging the reason", func() bool {
		return strings.Contains(c.log("n1"), "refused before it answered a ping: the member closed it: member n1 runs with cluster settings")
	})
	if n := strings.Count(c.log("n1"), "refused before it answered a ping"); n != 1 {
		t.Fatalf("n1 logged the same refusal %d times:\n%s", n, c.log("n1"))
	}
}

// startWith runs member id's transport with hello "h" and the liveness,
// handshake and inbox settings of extra.
func (c *testCluster) startWith(id string, extra Config) *Transport {
	c.mu.Lock()
	c.logs[id] = &strings.Builder{}
	c.mu.Unlock()
	tr := New(Config{Self: id, Members: c.members, Cert: c.cert(id), CAs: c.pool, Hello: "h",
		PingInterval: extra.PingInterval, MaxHandshakes: extra.MaxHandshakes, Booting: extra.Booting,
		Inboxes: extra.Inboxes, Route: extra.Route, Logf: c.logf(id), redialMin: extra.redialMin, redialMax: extra.redialMax})
	if err := tr.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.ts[id] = tr
	return tr
}

// silentMember plays member id: it accepts the others' connections and
// dials them with the hello, then reads and discards everything and never
// writes a frame (no pong). Closing the listener stops it.
func (c *testCluster) silentMember(t *testing.T, id, hello string) net.Listener {
	var addr string
	for _, m := range c.members {
		if m.ID == id {
			addr = m.Addr
		}
	}
	cfg := Config{Self: id, Members: c.members, Cert: c.cert(id), CAs: c.pool}
	ln, err := tls.Listen("tcp", addr, serverTLS(&cfg, cfg.memberIDs()))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, conn); conn.Close() }()
		}
	}()
	for _, m := range c.members {
		if m.ID == id {
			continue
		}
		conn, err := tls.Dial("tcp", m.Addr, clientTLS(&cfg, m.ID, cfg.memberIDs()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(appendHello(nil, hello)); err != nil {
			t.Fatal(err)
		}
		go func() { io.Copy(io.Discard, conn); conn.Close() }()
		t.Cleanup(func() { conn.Close() })
	}
	return ln
}
