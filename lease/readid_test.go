package lease_test

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"chunklease/lease"
)

// TestCheckIgnoresAnswersToEarlierIncarnation is a deterministic witness
// found by the simulation's "sites" profile (a remote node restarts while
// its read answers wait on a slow link). A read answer names its read only
// by its request id and the asking incarnation's nonce, so that pair must
// never repeat across restarts of a node: if it does, a restarted node takes an answer its previous incarnation asked for,
// long ago, as an answer to its own new read, and reports a lease that
// ended seconds before (read-wrong-holder, or read-no-holder the other way
// round). Ballots carry the incarnation for the same reason.
//
// Here s1 is granted at 0 for 1000 ms through the proposer-only node p.
// p checks at 10 ms; the answers are delayed. p restarts at 5000 ms and
// checks again; the old answers arrive first. The check must not name s1
// as the live holder: its lease ended at 1000 ms.
func TestCheckIgnoresAnswersToEarlierIncarnation(t *testing.T) {
	const ms = time.Millisecond
	acc := map[string]*lease.Node{}
	for _, id := range []string{"a1", "a2", "a3"} {
		acc[id] = witnessNode(t, id, 1, 0)
	}
	p := witnessNode(t, "p", 1, 0)
	out := p.Request(0, lease.Request{ID: 1, Op: lease.OpGrant, Chunk: "c", Server: "s1", LeaseMs: 1000})
	if replies := exchange(acc, p, out.Msgs, ms); len(replies) != 1 || replies[0].Err != nil {
		t.Fatalf("grant of s1: %+v", replies)
	}

	var late []lease.Msg // p's first read answers, delayed past its restart
	for _, m := range p.Request(10*ms, lease.Request{ID: 2, Op: lease.OpCheck, Chunk: "c"}).Msgs {
		late = append(late, acc[m.To].Receive(11*ms, m).Msgs...)
	}
	p = witnessNode(t, "p", 2, 5000*ms)
	fresh := p.Request(5000*ms, lease.Request{ID: 3, Op: lease.OpCheck, Chunk: "c"}).Msgs
	fresh = append([]lease.Msg(nil), fresh...)
	var replies []lease.Reply
	for _, m := range late {
		replies = append(replies, p.Receive(5001*ms, m).Replies...)
	}
	replies = append(replies, exchange(acc, p, fresh, 5002*ms)...)
	if len(replies) == 0 {
		t.Fatal("the check after the restart got no answer")
	}
	got, ok := replies[0].Body.(lease.CheckOK)
	if !ok {
		t.Fatalf("check after the restart: %+v", replies[0])
	}
	if !got.Expired {
		t.Fatalf("check at 5000 ms reports %s live for %d ms more, from answers to a read of p's previous "+
			"incarnation at 10 ms; s1's lease ended at 1000 ms. Read ids must be unique across restarts "+
			"(Config.Nonce, echoed in every answer).", *got.Primary, got.RemainingMs)
	}
}

// witnessNode starts a node of the witness cluster (acceptors a1, a2, a3)
// at now; only a first start skips the boot wait. Each start gets its own
// nonce, as the shells draw one at random at each start.
func witnessNode(t *testing.T, id string, incarnation int64, now time.Duration) *lease.Node {
	t.Helper()
	return witnessNodeNonce(t, id, incarnation, now, witnessNonces.Add(1)+1000)
}

// witnessNodeNonce is witnessNode with the start's nonce given.
func witnessNodeNonce(t *testing.T, id string, incarnation int64, now time.Duration, nonce uint64) *lease.Node {
	t.Helper()
	bootWaitMs := int64(1000)
	if now == 0 {
		bootWaitMs = 0
	}
	n, err := lease.NewNode(lease.Config{ID: id, Acceptors: []string{"a1", "a2", "a3"}, Nodes: []string{"a1", "a2", "a3", "p"}, Incarnation: incarnation,
		Nonce: nonce, MaxLeaseMs: 1000, BootWaitMs: bootWaitMs, Rand: rand.New(rand.NewPCG(1, uint64(incarnation)))}, now)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// witnessNonces numbers the witness nodes' starts.
var witnessNonces atomic.Uint64

// exchange delivers msgs and everything they cause, at now, between p and
// the acceptors, and returns p's replies.
func exchange(acc map[string]*lease.Node, p *lease.Node, msgs []lease.Msg, now time.Duration) []lease.Reply {
	var replies []lease.Reply
	queue := append([]lease.Msg(nil), msgs...)
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		var out *lease.Output
		if m.To == "p" {
			out = p.Receive(now, m)
			replies = append(replies, out.Replies...)
		} else {
			out = acc[m.To].Receive(now, m)
		}
		queue = append(queue, out.Msgs...)
	}
	return replies
}

// TestCheckIgnoresAnswersAfterAClockStepBack: request ids start at the
// incarnation, the wall clock at start in microseconds (main.go, server/serve.go),
// so after a restart that follows a step back of the system clock (NTP
// step, a VM or host whose clock was set, a clockfault offset change; well
// inside the tokens' clock bound) the new incarnation's ids can fall in the
// range the old one used. Were answers matched by id alone, an answer to
// an old read would be taken for an answer to a new one, and the check
// would report a lease that ended long ago (the checker's
// read-wrong-holder). The incarnation's nonce, echoed in every answer,
// keeps them apart (doc.go, "Restarts and memory").
//
// Same cluster as TestCheckIgnoresAnswersToEarlierIncarnation: s1 is
// granted at 0 for 1000 ms through p (incarnation 5 000 000 µs); p checks
// at 10 ms and the answers are held back. p restarts at 5000 ms, its wall
// clock having been stepped back by just over the time since its first
// start: incarnation 4 999 999. Its second check reuses id 5 000 001.
func TestCheckIgnoresAnswersAfterAClockStepBack(t *testing.T) {
	got := checkAfterClockStepBack(t, 101, 102)
	if got.Primary == nil || *got.Primary != "s2" || got.Expired {
		t.Fatalf("check at 5000-5002 ms reports primary %v (expired %v, %d ms left) while s2 holds c from 4990 to "+
			"5990 ms: the answers to the read p's previous incarnation sent at 10 ms were taken for this one "+
			"(same request id, incarnations 5000000 and 4999999, different nonces); s1's lease ended at 1000 ms",
			deref(got.Primary), got.Expired, got.RemainingMs)
	}
}

// TestClockStepBackControl is the witness's negative control: were the
// nonce the same in both incarnations (a shell that does not draw a fresh
// one), the check takes the old answers and names s1, whose lease ended
// at 1000 ms. It shows that the scenario above does reuse the request id.
func TestClockStepBackControl(t *testing.T) {
	got := checkAfterClockStepBack(t, 101, 101)
	if got.Primary == nil || *got.Primary != "s1" {
		t.Fatalf("with one nonce for both incarnations the check reports primary %v (expired %v): the witness no "+
			"longer makes the restarted node reuse the held-back read's id", deref(got.Primary), got.Expired)
	}
}

// checkAfterClockStepBack runs the witness with nonces n1 (p's first
// start) and n2 (its restart) and returns the answer to the check after
// the restart.
func checkAfterClockStepBack(t *testing.T, n1, n2 uint64) lease.CheckOK {
	const ms = time.Millisecond
	const inc1 = 5_000_000
	acc := map[string]*lease.Node{}
	for i, id := range []string{"a1", "a2", "a3"} {
		acc[id] = witnessNodeNonce(t, id, 1, 0, uint64(i+1))
	}
	p := witnessNodeNonce(t, "p", inc1, 0, n1)
	out := p.Request(0, lease.Request{ID: 1, Op: lease.OpGrant, Chunk: "c", Server: "s1", LeaseMs: 1000})
	if replies := exchange(acc, p, out.Msgs, ms); len(replies) != 1 || replies[0].Err != nil {
		t.Fatalf("grant of s1: %+v", replies)
	}
	var late []lease.Msg // p's first read answers, delayed past its restart
	for _, m := range p.Request(10*ms, lease.Request{ID: 2, Op: lease.OpCheck, Chunk: "c"}).Msgs {
		late = append(late, acc[m.To].Receive(11*ms, m).Msgs...)
	}
	// s1's lease ended at 1000 ms; s2 is granted at 4990 ms for 1000 ms.
	out = p.Request(4990*ms, lease.Request{ID: 5, Op: lease.OpGrant, Chunk: "c", Server: "s2", LeaseMs: 1000})
	if replies := exchange(acc, p, out.Msgs, 4990*ms); len(replies) != 1 || replies[0].Err != nil {
		t.Fatalf("grant of s2: %+v", replies)
	} else if g := replies[0].Body.(lease.GrantOK); g.Primary != "s2" {
		t.Fatalf("grant of s2 at 4990 ms: %+v", g)
	}
	p = witnessNodeNonce(t, "p", inc1-1, 5000*ms, n2) // the wall clock went back across the restart
	// A first check of another chunk uses id inc1; the second one, of c,
	// uses inc1+1, the id of the held-back read.
	_ = exchange(acc, p, p.Request(5000*ms, lease.Request{ID: 3, Op: lease.OpCheck, Chunk: "other"}).Msgs, 5000*ms)
	fresh := append([]lease.Msg(nil), p.Request(5000*ms, lease.Request{ID: 4, Op: lease.OpCheck, Chunk: "c"}).Msgs...)
	var replies []lease.Reply
	for _, m := range late {
		replies = append(replies, p.Receive(5001*ms, m).Replies...)
	}
	replies = append(replies, exchange(acc, p, fresh, 5002*ms)...)
	for _, r := range replies {
		if r.ID != 4 {
			continue
		}
		got, ok := r.Body.(lease.CheckOK)
		if !ok {
			t.Fatalf("check after the restart: %+v", r)
		}
		return got
	}
	t.Fatalf("the check after the restart got no answer: %+v", replies)
	return lease.CheckOK{}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
