package peer

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
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

// TestHandshakesAreCapped: connections that never finish their handshake
// take at most MaxHandshakes slots; more are closed at once and counted.
// A member still connects once they are gone.
func TestHandshakesAreCapped(t *testing.T) {
	const limit = 4
	c := newTestCluster(t, 2)
	n1 := c.startWith("n1", Config{MaxHandshakes: limit})
	var idle []net.Conn
	defer func() {
		for _, conn := range idle {
			conn.Close()
		}
	}()
	for range limit + 6 {
		conn, err := net.Dial("tcp", c.members[0].Addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, conn)
	}
	eventually(t, "6 connections beyond the cap refused", func() bool { return n1.Stats().Refused >= 6 })
	closed := 0
	for _, conn := range idle {
		// A refused one reads EOF at once; one holding a slot waits out
		// this deadline.
		conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := conn.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 6 {
		t.Fatalf("%d of %d silent connections closed at once, want at least 6 beyond the cap of %d", closed, len(idle), limit)
	}
	if !strings.Contains(c.log("n1"), "too many peer connections in their handshake") {
		t.Fatalf("the refusal is not logged:\n%s", c.log("n1"))
	}
	for _, conn := range idle {
		conn.Close()
	}
	idle = nil
	c.startWith("n2", Config{})
	eventually(t, "n1 and n2 reachable both ways", c.allReachable("n1", "n2"))
}

// startWith runs member id's transport with hello "h" and the liveness
// and handshake settings of extra.
func (c *testCluster) startWith(id string, extra Config) *Transport {
	c.mu.Lock()
	c.logs[id] = &strings.Builder{}
	c.mu.Unlock()
	tr := New(Config{Self: id, Members: c.members, Cert: c.cert(id), CAs: c.pool, Hello: "h",
		PingInterval: extra.PingInterval, MaxHandshakes: extra.MaxHandshakes, Logf: c.logf(id)})
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
	ln, err := tls.Listen("tcp", addr, serverTLS(&cfg))
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
		conn, err := tls.Dial("tcp", m.Addr, clientTLS(&cfg, m.ID))
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
