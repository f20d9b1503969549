package netsim

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// newNet returns a network with nodes n1..n3 and client c0 registered.
func newNet(t *testing.T, lat Latency) *Net {
	t.Helper()
	n, err := New(lat, testSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"n1", "n2", "n3", "c0"} {
		n.Register(name)
	}
	return n
}

func body(s string) json.RawMessage { return json.RawMessage(`{"type":"` + s + `"}`) }

func mustSend(t *testing.T, n *Net, src, dest, typ string) Message {
	t.Helper()
	m, err := n.Send(src, dest, body(typ))
	if err != nil {
		t.Fatalf("send %s->%s: %v", src, dest, err)
	}
	return m
}

// delivery is one message a receiver got, and when (since the start).
type delivery struct {
	msg Message
	at  time.Duration
}

// collect runs name's delivery loop in the background until ctx ends and
// returns a function that waits for the bubble to settle and returns what
// was delivered so far.
func collect(ctx context.Context, n *Net, name string, start time.Time) func() []delivery {
	ch := make(chan delivery, 100)
	go func() {
		for {
			m, err := n.Recv(ctx, name)
			if err != nil {
				return
			}
			ch <- delivery{m, time.Since(start)}
		}
	}()
	var got []delivery
	return func() []delivery {
		synctest.Wait()
		for {
			select {
			case d := <-ch:
				got = append(got, d)
			default:
				return got
			}
		}
	}
}

func TestIDsAreGlobalAndIncreasing(t *testing.T) {
	n := newNet(t, Latency{Dist: Constant})
	pairs := [][2]string{{"c0", "n1"}, {"n1", "n2"}, {"n2", "n3"}, {"n1", "c0"}}
	for i, p := range pairs {
		if m := mustSend(t, n, p[0], p[1], "x"); m.ID != int64(i) {
			t.Errorf("message %d got id %d", i, m.ID)
		}
	}
}

func TestLineFormat(t *testing.T) {
	m := Message{ID: 26, Src: "n4", Dest: "n1", Body: json.RawMessage(`{"type":"x","msg_id":1}`)}
	want := `{"id":26,"src":"n4","dest":"n1","body":{"type":"x","msg_id":1}}` + "\n"
	if got := string(m.Line()); got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	// Names are written as encoding/json writes them, escapes included.
	for _, name := range []string{"n1", `q"uote`, `back\slash`, "tab\t", "<&>", "café", "\x7f"} {
		quoted, _ := json.Marshal(name)
		line := Message{ID: 1, Src: name, Dest: "n1", Body: json.RawMessage(`{}`)}.Line()
		if want := `{"id":1,"src":` + string(quoted) + `,"dest":"n1","body":{}}` + "\n"; string(line) != want {
			t.Errorf("name %q written %s, want %s", name, line, want)
		}
	}
}

func TestSendValidatesEndpoints(t *testing.T) {
	n := newNet(t, Latency{Dist: Constant})
	if _, err := n.Send("n1", "n9", body("x")); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown dest: %v", err)
	}
	if _, err := n.Send("c9", "n1", body("x")); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown src: %v", err)
	}
	n.Close("c0")
	if _, err := n.Send("n1", "c0", body("x")); !errors.Is(err, ErrClosedClient) {
		t.Errorf("closed client: %v", err)
	}
	if got := n.Stats().All.SendCount; got != 0 {
		t.Errorf("refused sends counted: %d", got)
	}
	if m := mustSend(t, n, "n1", "n2", "x"); m.ID != 0 {
		t.Errorf("refused sends consumed ids: first accepted id %d", m.ID)
	}
}

func TestClientTrafficHasZeroLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 100, Dist: Constant})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		start := time.Now()
		atN1 := collect(ctx, n, "n1", start)
		atC0 := collect(ctx, n, "c0", start)
		mustSend(t, n, "c0", "n1", "request")
		mustSend(t, n, "n1", "c0", "reply")
		mustSend(t, n, "n2", "n1", "peer")
		time.Sleep(time.Second) // virtual time: lets the peer message arrive
		got := append(atN1(), atC0()...)
		want := map[string]time.Duration{"request": 0, "reply": 0, "peer": 100 * time.Millisecond}
		if len(got) != len(want) {
			t.Fatalf("got %d deliveries, want %d: %+v", len(got), len(want), got)
		}
		for _, d := range got {
			var b struct{ Type string }
			json.Unmarshal(d.msg.Body, &b)
			if d.at != want[b.Type] {
				t.Errorf("%s delivered after %v, want %v", b.Type, d.at, want[b.Type])
			}
		}
	})
}

func TestHeadOfLineBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 500, Dist: Constant})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		start := time.Now()
		atN1 := collect(ctx, n, "n1", start)
		mustSend(t, n, "n2", "n1", "slow-peer")
		time.Sleep(time.Millisecond)
		mustSend(t, n, "c0", "n1", "client")
		time.Sleep(time.Second)
		got := atN1()
		if len(got) != 2 {
			t.Fatalf("got %d deliveries, want 2", len(got))
		}
		// The delivery loop took the peer message first and waited 500 ms
		// for it: the client request, due at 1 ms, waited behind it.
		if got[0].msg.Src != "n2" || got[0].at != 500*time.Millisecond {
			t.Errorf("first delivery %s at %v, want n2 at 500ms", got[0].msg.Src, got[0].at)
		}
		if got[1].msg.Src != "c0" || got[1].at != 500*time.Millisecond {
			t.Errorf("second delivery %s at %v, want c0 at 500ms (head-of-line)", got[1].msg.Src, got[1].at)
		}
	})
}

func TestQueueOrderedByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 500, Dist: Constant})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// Both queued before the loop starts: the client request (deadline
		// now) is taken before the peer message (deadline now+500ms).
		mustSend(t, n, "n2", "n1", "peer")
		mustSend(t, n, "c0", "n1", "client")
		start := time.Now()
		atN1 := collect(ctx, n, "n1", start)
		time.Sleep(time.Second)
		got := atN1()
		if len(got) != 2 || got[0].msg.Src != "c0" || got[0].at != 0 || got[1].msg.Src != "n2" {
			t.Fatalf("deliveries %+v, want c0 at 0 then n2", got)
		}
	})
}

func TestDropIsPerReceiverAndAtDequeue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 100, Dist: Constant})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		start := time.Now()
		atN1 := collect(ctx, n, "n1", start)
		atN2 := collect(ctx, n, "n2", start)

		// Taken from the inbox before the partition starts: delivered.
		mustSend(t, n, "n2", "n1", "before")
		synctest.Wait() // n1's loop has dequeued it and sleeps until its deadline
		n.Drop("n2", "n1")
		// Sent during the partition: dropped at dequeue, one direction only.
		mustSend(t, n, "n2", "n1", "during")
		mustSend(t, n, "n1", "n2", "other-direction")
		mustSend(t, n, "n3", "n1", "other-sender")
		time.Sleep(time.Second)
		gotN1, gotN2 := atN1(), atN2()
		if types := typesOf(gotN1); !equal(types, []string{"before", "other-sender"}) {
			t.Errorf("n1 got %v, want [before other-sender]", types)
		}
		if types := typesOf(gotN2); !equal(types, []string{"other-direction"}) {
			t.Errorf("n2 got %v, want [other-direction]", types)
		}
		if s := n.Stats(); s.Servers.DropCount != 1 || s.Servers.SendCount != 4 || s.Servers.RecvCount != 3 {
			t.Errorf("stats %+v, want 4 sent, 3 delivered, 1 dropped", s.Servers)
		}
	})
}

// TestRecvReadyTakesOnlyWhatIsDue: RecvReady never waits: it returns the
// messages whose deadline has passed, in Recv's order, skips (and
// counts) those the receiver drops, and leaves a message not yet due
// queued for Recv.
func TestRecvReadyTakesOnlyWhatIsDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 100, Dist: Constant})
		mustSend(t, n, "n2", "n1", "peer-later")
		time.Sleep(100 * time.Millisecond) // peer-later is due now
		mustSend(t, n, "n3", "n1", "peer-not-due")
		mustSend(t, n, "c0", "n1", "client-first")
		mustSend(t, n, "c0", "n1", "client-second")
		n.Drop("c0", "n1")
		mustSend(t, n, "n2", "n1", "peer-not-due-2")
		n.Heal()
		var got []string
		for {
			m, ok := n.RecvReady("n1")
			if !ok {
				break
			}
			got = append(got, typesOf([]delivery{{msg: m}})...)
		}
		if !equal(got, []string{"peer-later", "client-first", "client-second"}) {
			t.Fatalf("RecvReady gave %v, want the three due messages in deadline order", got)
		}
		n.Drop("n3", "n1")
		time.Sleep(100 * time.Millisecond)
		m, ok := n.RecvReady("n1")
		if types := typesOf([]delivery{{msg: m}}); !ok || !equal(types, []string{"peer-not-due-2"}) {
			t.Fatalf("after 100 ms RecvReady gave %v (%v), want peer-not-due-2 with n3's message dropped", types, ok)
		}
		if _, ok := n.RecvReady("n1"); ok {
			t.Fatal("RecvReady on an empty inbox returned a message")
		}
		if s := n.Stats(); s.Servers.RecvCount != 2 || s.Servers.DropCount != 1 || s.Clients.RecvCount != 2 {
			t.Errorf("stats %+v, want 2 peer deliveries, 1 drop, 2 client deliveries", s)
		}
	})
}

func TestDropAppliesAtDequeueNotAtSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 100, Dist: Constant})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// Queued while healthy, dequeued during a partition: dropped.
		mustSend(t, n, "n2", "n1", "queued-then-partitioned")
		n.Drop("n2", "n1")
		// Queued during a partition, dequeued after the heal: delivered.
		mustSend(t, n, "n3", "n2", "queued-then-healed")
		n.Drop("n3", "n2")
		n.Heal()
		n.Drop("n2", "n1") // keep n1's partition, heal only n2's by re-adding
		start := time.Now()
		atN1 := collect(ctx, n, "n1", start)
		atN2 := collect(ctx, n, "n2", start)
		time.Sleep(time.Second)
		if got := typesOf(atN1()); len(got) != 0 {
			t.Errorf("n1 got %v, want nothing", got)
		}
		if got := typesOf(atN2()); !equal(got, []string{"queued-then-healed"}) {
			t.Errorf("n2 got %v", got)
		}
	})
}

func TestHealClearsAll(t *testing.T) {
	n := newNet(t, Latency{Dist: Constant})
	n.Partition(map[string][]string{"n1": {"n2", "n3"}, "n2": {"n1"}, "n3": {}})
	if d := n.Drops(); len(d["n1"]) != 2 || len(d["n2"]) != 1 {
		t.Fatalf("drops %v", d)
	}
	n.Heal()
	if d := n.Drops(); len(d) != 0 {
		t.Errorf("after heal, drops %v", d)
	}
}

func TestCloseWakesReceiverAndDiscards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{Dist: Constant})
		errc := make(chan error, 1)
		go func() {
			_, err := n.Recv(t.Context(), "c0")
			errc <- err
		}()
		synctest.Wait()
		n.Close("c0")
		if err := <-errc; !errors.Is(err, ErrClosedClient) {
			t.Errorf("Recv on a closed client: %v", err)
		}
	})
}

func TestStatsGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 5, Dist: Constant})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		start := time.Now()
		for _, name := range []string{"n1", "n2", "c0"} {
			collect(ctx, n, name, start)
		}
		mustSend(t, n, "c0", "n1", "a")
		mustSend(t, n, "n1", "n2", "b")
		mustSend(t, n, "n2", "n1", "c")
		mustSend(t, n, "n1", "c0", "d")
		time.Sleep(time.Second)
		s := n.Stats()
		want := Stats{
			All:     Counts{SendCount: 4, RecvCount: 4, MsgCount: 4},
			Clients: Counts{SendCount: 2, RecvCount: 2, MsgCount: 2},
			Servers: Counts{SendCount: 2, RecvCount: 2, MsgCount: 2},
		}
		if s != want {
			t.Errorf("stats %+v, want %+v", s, want)
		}
	})
}

func typesOf(ds []delivery) []string {
	var out []string
	for _, d := range ds {
		var b struct{ Type string }
		json.Unmarshal(d.msg.Body, &b)
		out = append(out, b.Type)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
