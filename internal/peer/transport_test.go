package peer

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"chunklease/internal/certs"
	"chunklease/internal/loopport"
	"chunklease/lease"
)

// testCluster is n in-process transports on loopback with certificates
// from one CA; logs are kept per member.
type testCluster struct {
	t       *testing.T
	ca      *certs.CA
	pool    *x509.CertPool
	members []Member
	ts      map[string]*Transport
	mu      sync.Mutex
	logs    map[string]*strings.Builder
}

func newTestCluster(t *testing.T, n int) *testCluster {
	ca, err := certs.NewCA("test CA", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{t: t, ca: ca, pool: x509.NewCertPool(), ts: map[string]*Transport{}, logs: map[string]*strings.Builder{}}
	c.pool.AddCert(ca.Cert)
	for i := 1; i <= n; i++ {
		c.members = append(c.members, Member{ID: fmt.Sprintf("n%d", i), Addr: freeAddr(t)})
	}
	t.Cleanup(func() {
		for _, tr := range c.ts {
			tr.Close(5 * time.Second)
		}
	})
	return c
}

// freeAddr is a free loopback address below the kernel's ephemeral
// range (internal/loopport says why: a port reserved with ":0" was taken
// by a member's own dial before it listened).
func freeAddr(t *testing.T) string {
	addr, err := testPorts.NextAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// testPorts walks from a seed of its own per process, so that test
// binaries running at once rarely meet.
var testPorts = loopport.New(rand.Uint64())

func (c *testCluster) cert(names ...string) tls.Certificate {
	crt, key, err := c.ca.Issue(names, nil, time.Now(), time.Hour)
	if err != nil {
		c.t.Fatal(err)
	}
	return mustPair(c.t, crt, key)
}

// start runs member id's transport with hello and frame limit.
func (c *testCluster) start(id, hello string, frameLimit int) *Transport {
	c.mu.Lock()
	c.logs[id] = &strings.Builder{}
	c.mu.Unlock()
	tr := New(Config{Self: id, Members: c.members, Cert: c.cert(id), CAs: c.pool, Hello: hello, FrameLimit: frameLimit,
		Logf: c.logf(id)})
	if err := tr.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.ts[id] = tr
	return tr
}

// logf keeps member id's log lines.
func (c *testCluster) logf(id string) func(format string, args ...any) {
	return func(format string, args ...any) {
		c.mu.Lock()
		defer c.mu.Unlock()
		fmt.Fprintf(c.logs[id], format+"\n", args...)
	}
}

func (c *testCluster) log(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs[id].String()
}

// eventually polls cond until it holds, within 10 s: the transports run
// on their own goroutines and sockets.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond) // sockets and goroutines: polling with a deadline
	}
}

func (c *testCluster) allReachable(ids ...string) func() bool {
	return func() bool {
		for _, a := range ids {
			for _, b := range ids {
				if !c.ts[a].Reachable(b) {
					return false
				}
			}
		}
		return true
	}
}

// TestMessagesReachTheirLoopsInbox: a member that runs two loops gets
// each chunk's messages in the inbox of the loop lease.Route names, in
// the order sent, and every sync answer in both.
func TestMessagesReachTheirLoopsInbox(t *testing.T) {
	const loops = 2
	c := newTestCluster(t, 2)
	c.start("n1", "h", 0)
	c.startWith("n2", Config{Inboxes: loops, Route: func(m *lease.Msg) (int, bool) { return lease.Route(m, loops) }})
	eventually(t, "both members reachable both ways", c.allReachable("n1", "n2"))
	want := make([][]string, loops)
	for i := range 100 {
		chunk := fmt.Sprint("c", i)
		c.ts["n1"].Send(&lease.Msg{Type: lease.MsgRead, To: "n2", Chunk: chunk, ReqID: uint64(i), Nonce: 1})
		want[lease.CoreOf(chunk, loops)] = append(want[lease.CoreOf(chunk, loops)], chunk)
		if i%25 == 0 {
			c.ts["n1"].Send(&lease.Msg{Type: lease.MsgSyncResp, To: "n2", ReqID: 7, Nonce: 7, Counter: uint64(i)})
			for l := range loops {
				want[l] = append(want[l], fmt.Sprint("sync ", i))
			}
		}
	}
	c.ts["n1"].Flush()
	for l := range loops {
		for k, w := range want[l] {
			select {
			case m := <-c.ts["n2"].Inbox(l):
				got := m.Chunk
				if m.Type == lease.MsgSyncResp {
					got = fmt.Sprint("sync ", m.Counter)
				}
				if got != w {
					t.Fatalf("inbox %d, message %d: got %q, want %q", l, k, got, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("inbox %d: message %d (%q) did not arrive", l, k, w)
			}
		}
	}
	if len(want[0]) == 4 || len(want[1]) == 4 {
		t.Fatalf("the hash put every chunk on one loop: %d and %d messages", len(want[0]), len(want[1]))
	}
}

// TestMessagesCarryTheSendersIdentity: three members connect both ways;
// a message reaches its destination with From set to the sender's
// certified id and To to the receiver, in the order sent.
func TestMessagesCarryTheSendersIdentity(t *testing.T) {
	c := newTestCluster(t, 3)
	for _, m := range c.members {
		c.start(m.ID, "same", 0)
	}
	eventually(t, "every member reachable both ways", c.allReachable("n1", "n2", "n3"))
	for i := range 100 {
		c.ts["n1"].Send(&lease.Msg{Type: lease.MsgRead, To: "n3", From: "forged", Chunk: fmt.Sprint(i), ReqID: uint64(i), Nonce: 1})
		if i%10 == 9 {
			c.ts["n1"].Flush()
		}
	}
	for i := range 100 {
		select {
		case m := <-c.ts["n3"].Inbox(0):
			if m.From != "n1" || m.To != "n3" || m.Chunk != fmt.Sprint(i) {
				t.Fatalf("message %d arrived as %+v", i, m)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d did not arrive", i)
		}
	}
	if s := c.ts["n1"].Stats().Links[1]; s.ID != "n3" || s.Sent != 100 || !s.OutUp || !s.InUp {
		t.Fatalf("n1's stats for n3: %+v", s)
	}
}

// TestOtherSettingsAreRefused: a member whose cluster settings differ is
// refused by the others, which log both settings; it logs the reason it
// was given.
func TestOtherSettingsAreRefused(t *testing.T) {
	c := newTestCluster(t, 2)
	c.start("n1", "max-lease-ms=1000", 0)
	c.start("n2", "max-lease-ms=2000", 0)
	eventually(t, "the refusal logged on both sides", func() bool {
		return strings.Contains(c.log("n1"), `member n2 runs with cluster settings "max-lease-ms=2000", this node n1 with "max-lease-ms=1000"`) &&
			strings.Contains(c.log("n2"), "the member closed it: member n2 runs with cluster settings")
	})
	if c.ts["n1"].Reachable("n2") {
		t.Fatal("a member with other settings counts as reachable")
	}
}

// TestOversizedFrameClosesTheConnection: a member that sends a frame over
// the limit loses that connection (logged); the frames before it arrive.
func TestOversizedFrameClosesTheConnection(t *testing.T) {
	c := newTestCluster(t, 2)
	c.start("n1", "h", 64)
	conn, err := tls.Dial("tcp", c.members[0].Addr, &tls.Config{Certificates: []tls.Certificate{c.cert("n2")}, RootCAs: c.pool, ServerName: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	small := lease.Msg{Type: lease.MsgRead, Chunk: "ok", ReqID: 1, Nonce: 1}
	out := AppendFrame(appendHello(nil, "h"), &small)
	out = binary.BigEndian.AppendUint32(out, 65)
	out = append(out, make([]byte, 65)...)
	if _, err := conn.Write(out); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-c.ts["n1"].Inbox(0):
		if m.Chunk != "ok" || m.From != "n2" {
			t.Fatalf("got %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the frame before the oversized one did not arrive")
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("the connection stayed open after an oversized frame")
	}
	eventually(t, "the oversized frame logged", func() bool {
		return strings.Contains(c.log("n1"), "a frame of 65 bytes is over the limit of 64; closing the connection")
	})
}

// TestReconnectAfterRestart: a member's transport closes and a new one
// starts on the same address; the others reconnect by themselves.
func TestReconnectAfterRestart(t *testing.T) {
	c := newTestCluster(t, 2)
	c.start("n1", "h", 0)
	c.start("n2", "h", 0)
	eventually(t, "connected", c.allReachable("n1", "n2"))
	c.ts["n2"].Close(5 * time.Second)
	eventually(t, "n1 notices n2 is gone", func() bool { return !c.ts["n1"].Reachable("n2") })
	c.start("n2", "h", 0)
	eventually(t, "reconnected", c.allReachable("n1", "n2"))
	c.ts["n1"].Send(&lease.Msg{Type: lease.MsgSync, To: "n2", ReqID: 7, Nonce: 1})
	c.ts["n1"].Flush()
	select {
	case m := <-c.ts["n2"].Inbox(0):
		if m.ReqID != 7 || m.From != "n1" {
			t.Fatalf("got %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no message after reconnecting")
	}
}

// TestRestartedMemberIsDialledBackAtOnce: a member that lost another
// waits out a backoff before it dials again, and while the other is down
// that backoff grows to its cap (2 s). When the other comes back and
// dials in, the wait ends at once: both directions are up within a
// handshake, not a backoff later. Here the backoff is an hour, so only
// the member dialling in can end it: n2 starts after n1's first dial
// failed, and restarts later; both times n1 must dial it back. Without
// that (the wait ended by its timer alone), a restarted member
// whose boot wait is shorter than the cap (leases of 2 s or less) turned
// ready while a survivor still could not reach it, and the next member
// of a rolling restart took the only working majority with it
// (TestServeRollingRestartAfterADowntime).
func TestRestartedMemberIsDialledBackAtOnce(t *testing.T) {
	c := newTestCluster(t, 2)
	long := Config{redialMin: time.Hour, redialMax: time.Hour}
	c.startWith("n1", long)
	c.startWith("n2", long)
	eventually(t, "n1 dialling n2 back when n2 started", c.allReachable("n1", "n2"))
	c.ts["n2"].Close(5 * time.Second)
	eventually(t, "n1's connection to n2 lost", func() bool { return !c.ts["n1"].Stats().Links[0].OutUp })
	c.startWith("n2", long)
	eventually(t, "n1 dialling the restarted n2 back", c.allReachable("n1", "n2"))
}

// TestQueueBounds: a link that is down drops and counts; a full queue
// drops the new frame and keeps the queue within its bound; an oversized
// frame is never queued.
func TestQueueBounds(t *testing.T) {
	l := newLink(Member{ID: "n2"}, 256, 1)
	m := lease.Msg{Type: lease.MsgRead, Chunk: "c", ReqID: 1, Nonce: 1}
	l.push(&m, 1<<20)
	if l.droppedDown.Load() != 1 || len(l.buf) != 0 {
		t.Fatalf("a push while down: dropped %d, queued %d bytes", l.droppedDown.Load(), len(l.buf))
	}
	l.conn = &net.TCPConn{} // up, with no writer draining the queue
	for range 100 {
		l.push(&m, 1<<20)
	}
	if len(l.buf) > 256 || l.droppedFull.Load() == 0 || l.sent.Load()+l.droppedFull.Load() != 100 {
		t.Fatalf("queue %d bytes (bound 256), sent %d, dropped %d", len(l.buf), l.sent.Load(), l.droppedFull.Load())
	}
	big := lease.Msg{Type: lease.MsgRead, Chunk: strings.Repeat("x", 100), ReqID: 1, Nonce: 1}
	before := len(l.buf)
	l.push(&big, 64)
	if l.droppedBig.Load() != 1 || len(l.buf) != before {
		t.Fatalf("an oversized frame: dropped %d, queue %d -> %d bytes", l.droppedBig.Load(), before, len(l.buf))
	}
	l.setConn(nil)
	if len(l.buf) != 0 || l.droppedDown.Load() < 2 {
		t.Fatalf("frames queued for a lost connection: %d bytes left, %d counted dropped", len(l.buf), l.droppedDown.Load())
	}
}

func mustPair(t *testing.T, crt, key []byte) tls.Certificate {
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// TestAddedMemberIsRefusedUntilAdded: n3 is not in n1's and n2's member
// list (a member added at run time, membership): n1 refuses its
// certificate until AddMember names it, then dials it, and messages flow
// both ways; n2, which was not told, still refuses it.
func TestAddedMemberIsRefusedUntilAdded(t *testing.T) {
	c := newTestCluster(t, 3)
	all := c.members
	c.members = all[:2]
	n1, n2 := c.start("n1", "same", 0), c.start("n2", "same", 0)
	c.members = all
	n3 := c.start("n3", "same", 0)
	eventually(t, "n1 refusing n3's certificate", func() bool { return strings.Contains(c.log("n1"), "names no member of the cluster n1,n2") })
	if n1.Reachable("n3") || n3.Reachable("n1") {
		t.Fatal("n1 and n3 reach each other before n3 was added")
	}
	n1.AddMember(all[2])
	eventually(t, "n1 and n3 reaching each other once n3 is added", func() bool { return n1.Reachable("n3") && n3.Reachable("n1") })
	n1.Send(&lease.Msg{Type: lease.MsgRead, To: "n3", Chunk: "c", ReqID: 1, Nonce: 1})
	n1.Flush()
	select {
	case m := <-n3.Inbox(0):
		if m.From != "n1" || m.Chunk != "c" {
			t.Fatalf("n3 got %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("n1's message to the added n3 did not arrive")
	}
	if n2.Reachable("n3") {
		t.Fatal("n2 reaches n3, which it was never told of")
	}
	n1.AddMember(all[2]) // adding it again changes nothing
	if got := len(n1.Stats().Links); got != 2 {
		t.Fatalf("n1 has %d links after adding n3 twice, want 2", got)
	}
}
