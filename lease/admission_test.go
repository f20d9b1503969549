package lease

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// admissionCluster is three cores n1..n3 where n1 allows maxInFlight
// requests in flight; messages wait in held until deliver or drop.
type admissionCluster struct {
	t       *testing.T
	nodes   map[string]*Node
	held    []Msg
	replies map[uint64]Reply
}

func newAdmissionCluster(t *testing.T, maxInFlight int) *admissionCluster {
	ids := []string{"n1", "n2", "n3"}
	c := &admissionCluster{t: t, nodes: map[string]*Node{}, replies: map[uint64]Reply{}}
	for i, id := range ids {
		cfg := Config{ID: id, Acceptors: ids, Incarnation: 1, Nonce: uint64(i + 1), MaxLeaseMs: 1000,
			QuorumTimeoutMs: 1000, Rand: rand.New(rand.NewPCG(1, uint64(i)))}
		if id == "n1" {
			cfg.MaxInFlight = maxInFlight
		}
		n, err := NewNode(cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		c.nodes[id] = n
	}
	return c
}

// take records what one call produced.
func (c *admissionCluster) take(out *Output) {
	c.held = append(c.held, out.Msgs...)
	for _, r := range out.Replies {
		c.replies[r.ID] = r
	}
}

// deliver hands every held message to its node, and what they send in
// turn, until none is left.
func (c *admissionCluster) deliver(now time.Duration) {
	for len(c.held) > 0 {
		m := c.held[0]
		c.held = c.held[1:]
		c.take(c.nodes[m.To].Receive(now, m))
	}
}

// chunksSent is the set of chunks the held messages name.
func (c *admissionCluster) chunksSent() map[string]bool {
	out := map[string]bool{}
	for _, m := range c.held {
		out[m.Chunk] = true
	}
	return out
}

// tickSilent runs n's timers from from until until or until nothing is
// pending, and drops everything it sends (the peers are silent); check,
// if set, sees the held messages first.
func (c *admissionCluster) tickSilent(n *Node, from, until time.Duration, check func(now time.Duration)) {
	for now := from; now < until && n.Pending() > 0; {
		out := n.Tick(now)
		c.take(out)
		if check != nil {
			check(now)
		}
		c.held = nil
		now = max(out.Wake, now+time.Millisecond)
	}
}

// grants is count grant requests for cs1 of chunks prefix0, prefix1, ...
func grants(prefix string, count int) []Request {
	reqs := make([]Request, count)
	for i := range reqs {
		reqs[i] = Request{Op: OpGrant, Chunk: fmt.Sprintf("%s%d", prefix, i), Server: "cs1", LeaseMs: 1000}
	}
	return reqs
}

func (c *admissionCluster) burst(now time.Duration, reqs ...Request) {
	for i, r := range reqs {
		r.ID = uint64(i + 1)
		c.take(c.nodes["n1"].Request(now, r))
	}
}

// TestAdmissionWaitsForASlot: with two slots, the third and fourth
// requests send nothing until the first two are answered, and then run
// to completion within the same deliveries.
func TestAdmissionWaitsForASlot(t *testing.T) {
	c := newAdmissionCluster(t, 2)
	c.burst(0,
		Request{Op: OpGrant, Chunk: "c1", Server: "cs1", LeaseMs: 1000},
		Request{Op: OpGrant, Chunk: "c2", Server: "cs1", LeaseMs: 1000},
		Request{Op: OpCheck, Chunk: "c1"},
		Request{Op: OpRelease, Chunk: "c2", Server: "cs1", Token: 1 << 60 >> 8})
	if sent := c.chunksSent(); len(sent) != 2 || !sent["c1"] || !sent["c2"] {
		t.Fatalf("before any answer n1 sent messages about %v, want c1 and c2 only (two slots)", sent)
	}
	c.deliver(time.Millisecond)
	for id := uint64(1); id <= 4; id++ {
		r, ok := c.replies[id]
		if !ok || r.Err != nil {
			t.Fatalf("request %d: answered %v, reply %+v; want an answer without error", id, ok, r)
		}
	}
	if held := c.replies[3].Body.(CheckOK); held.Primary == nil || *held.Primary != "cs1" {
		t.Errorf("the check admitted after the grants read %+v, want cs1 holding c1", held)
	}
	if n := c.nodes["n1"]; n.inFlight != 0 || len(n.waiting) != 0 || n.Pending() != 0 {
		t.Errorf("after every answer n1 has %d slots taken, %d waiting, %d pending; want none", n.inFlight, len(n.waiting), n.Pending())
	}
}

// TestAdmissionTimesOutDefinitely: with the peers silent, the request
// that never got a slot fails at its quorum timeout with a definite
// error 11 that says the node was overloaded, and no message ever named
// its chunk.
func TestAdmissionTimesOutDefinitely(t *testing.T) {
	c := newAdmissionCluster(t, 2)
	c.burst(0,
		Request{Op: OpGrant, Chunk: "c1", Server: "cs1", LeaseMs: 1000},
		Request{Op: OpGrant, Chunk: "c2", Server: "cs1", LeaseMs: 1000},
		Request{Op: OpGrant, Chunk: "c3", Server: "cs1", LeaseMs: 1000})
	n1 := c.nodes["n1"]
	c.tickSilent(n1, 0, 2*time.Second, func(now time.Duration) {
		if c.chunksSent()["c3"] {
			t.Fatalf("at %v n1 sent a message about c3, which never had a slot", now)
		}
	})
	r, ok := c.replies[3]
	if !ok || r.Err == nil || r.Err.Code != CodeTemporarilyUnavailable || !strings.Contains(r.Err.Text, "overloaded") {
		t.Fatalf("the request without a slot got %+v (answered %v), want error 11 naming the overload", r, ok)
	}
	for id := uint64(1); id <= 2; id++ {
		if r := c.replies[id]; r.Err == nil || r.Err.Code != CodeTemporarilyUnavailable || strings.Contains(r.Err.Text, "overloaded") {
			t.Errorf("request %d, which had a slot, got %+v; want error 11 for a silent majority", id, r)
		}
	}
	if n1.inFlight != 0 || len(n1.waiting) != 0 {
		t.Errorf("after every answer n1 has %d slots taken and %d waiting", n1.inFlight, len(n1.waiting))
	}
}

// TestAdmissionLimitAdapts: a node opens slowStart slots at first; every
// request answered in time widens the limit by one, up to MaxInFlight;
// when the requests holding the slots time out together (here the peers
// are silent) the limit halves exactly once for the whole wave, from
// wherever it had grown to, and once more for a wave a quorum timeout
// later.
func TestAdmissionLimitAdapts(t *testing.T) {
	c := newAdmissionCluster(t, 40)
	n1 := c.nodes["n1"]
	wave := grants("w", slowStart+4)
	c.burst(0, wave...)
	if sent := len(c.chunksSent()); sent != slowStart {
		t.Fatalf("a fresh node started %d of %d requests at once, want slowStart = %d", sent, len(wave), slowStart)
	}
	c.deliver(time.Millisecond)
	for id := uint64(1); id <= uint64(len(wave)); id++ {
		if r, ok := c.replies[id]; !ok || r.Err != nil {
			t.Fatalf("request %d with the peers answering: answered %v, %+v", id, ok, r)
		}
	}
	grown := min(slowStart+len(wave), n1.cfg.MaxInFlight)
	if n1.limit != grown {
		t.Fatalf("after %d answers in time the limit is %d, want %d", len(wave), n1.limit, grown)
	}
	// A wave that fills every slot and times out: one halving.
	c.replies = map[uint64]Reply{}
	c.burst(time.Second, grants("v", grown)...)
	if sent := len(c.chunksSent()); sent != grown {
		t.Fatalf("%d requests started at once, want all %d", sent, grown)
	}
	c.tickSilent(n1, time.Second, 3*time.Second, nil)
	if n1.limit != grown/2 {
		t.Fatalf("after a wave of %d timeouts the limit is %d, want %d halved once: %d", grown, n1.limit, grown, grown/2)
	}
	// The next wave, a quorum timeout later, halves it once more, to no
	// less than minLimit.
	c.burst(4*time.Second, grants("u", n1.limit)...)
	c.tickSilent(n1, 4*time.Second, 6*time.Second, nil)
	if want := max(grown/4, minLimit); n1.limit != want {
		t.Fatalf("after a second wave of timeouts the limit is %d, want %d", n1.limit, want)
	}
	c.replies = map[uint64]Reply{}
	c.burst(7*time.Second, grants("x", 2*n1.cfg.MaxInFlight)...)
	c.deliver(7*time.Second + time.Millisecond)
	if n1.limit != n1.cfg.MaxInFlight {
		t.Fatalf("the limit grew to %d, want it held at MaxInFlight = %d", n1.limit, n1.cfg.MaxInFlight)
	}
}

// TestAdmissionNeverStartsALateRequest: n1's two slots are taken at 0;
// c3's grant waits from 500 ms (quorum timeout 1000 ms). When the
// answers that free the slots arrive at 800 ms (700 ms left) c3 starts
// and is granted; when they arrive at 1600 ms, past its quorum timeout
// and before any timer fired (a loop running late), or at 1100 ms (less
// than half left), c3 is answered overloaded and no message names it.
func TestAdmissionNeverStartsALateRequest(t *testing.T) {
	for _, tc := range []struct {
		answersAt time.Duration
		starts    bool
	}{{800 * time.Millisecond, true}, {1100 * time.Millisecond, false}, {1600 * time.Millisecond, false}} {
		c := newAdmissionCluster(t, 2)
		n1 := c.nodes["n1"]
		c.burst(0,
			Request{Op: OpGrant, Chunk: "c1", Server: "cs1", LeaseMs: 1000},
			Request{Op: OpGrant, Chunk: "c2", Server: "cs1", LeaseMs: 1000})
		c.take(n1.Request(500*time.Millisecond, Request{ID: 3, Op: OpGrant, Chunk: "c3", Server: "cs1", LeaseMs: 1000}))
		c.take(n1.Tick(499 * time.Millisecond))
		sentC3 := false
		for len(c.held) > 0 {
			m := c.held[0]
			c.held = c.held[1:]
			sentC3 = sentC3 || m.Chunk == "c3"
			c.take(c.nodes[m.To].Receive(tc.answersAt, m))
		}
		r, ok := c.replies[3]
		switch {
		case tc.starts && (!sentC3 || !ok || r.Err != nil):
			t.Errorf("slots freed at %v: c3 sent messages %v, answered %v %+v; want it started and granted", tc.answersAt, sentC3, ok, r)
		case !tc.starts && (sentC3 || !ok || r.Err == nil || r.Err.Code != CodeTemporarilyUnavailable || !strings.Contains(r.Err.Text, "overloaded")):
			t.Errorf("slots freed at %v: c3 sent messages %v, answered %v %+v; want error 11 naming the overload and nothing sent", tc.answersAt, sentC3, ok, r)
		}
	}
}

// TestAdmissionRefusesANegativeCap: MaxInFlight below zero is a setting
// error, not a node that never admits anything.
func TestAdmissionRefusesANegativeCap(t *testing.T) {
	_, err := NewNode(Config{ID: "n1", Acceptors: []string{"n1"}, Incarnation: 1, Nonce: 1, MaxLeaseMs: 1000, MaxInFlight: -1}, 0)
	if err == nil || !strings.Contains(err.Error(), "MaxInFlight") {
		t.Fatalf("MaxInFlight -1 gave %v, want an error naming MaxInFlight", err)
	}
}
