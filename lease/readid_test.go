package lease_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"chunklease/lease"
)

// TestCheckIgnoresAnswersToEarlierIncarnation is a deterministic witness
// found by the simulation's "sites" profile (a remote node restarts while
// its read answers wait on a slow link). A read answer names its read only
// by ReadID, so ids must never repeat across restarts of a node: if they
// do, a restarted node takes an answer its previous incarnation asked for,
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
			"(for example, start the read counter at Config.Incarnation).", *got.Primary, got.RemainingMs)
	}
}

// witnessNode starts a node of the witness cluster (acceptors a1, a2, a3)
// at now; only a first start skips the boot wait.
func witnessNode(t *testing.T, id string, incarnation int64, now time.Duration) *lease.Node {
	t.Helper()
	bootWaitMs := int64(1000)
	if now == 0 {
		bootWaitMs = 0
	}
	n, err := lease.NewNode(lease.Config{ID: id, Acceptors: []string{"a1", "a2", "a3"}, Nodes: []string{"a1", "a2", "a3", "p"}, Incarnation: incarnation,
		MaxLeaseMs: 1000, BootWaitMs: bootWaitMs, Rand: rand.New(rand.NewPCG(1, uint64(incarnation)))}, now)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

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
