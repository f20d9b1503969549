package lease

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestKeptRequestsAndAttemptsAreUnreferenced: requests and attempts kept
// for reuse are ones the node no longer points to, through every path a
// grant, renew, check and release takes with two silent acceptors (their
// quorum timeouts) and with answers; and the check that the simulation
// runs after every step (SpareReachable) finds one that is planted while
// still in use (its negative control), and an outgoing answer planted
// with a record of the buffer the node reuses (attachRecord).
func TestKeptRequestsAndAttemptsAreUnreferenced(t *testing.T) {
	n, err := NewNode(Config{ID: "n1", Acceptors: []string{"n1", "n2", "n3"}, Incarnation: 1, Nonce: 1, MaxLeaseMs: 60000,
		QuorumTimeoutMs: 100, BootWaitMs: 1, Rand: rand.New(rand.NewPCG(1, 1))}, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := 10 * time.Millisecond
	step := func(what string, out *Output) *Output {
		t.Helper()
		if s := n.SpareReachable(); s != "" {
			t.Fatalf("after %s: %s", what, s)
		}
		return out
	}
	id := uint64(0)
	ask := func(op Op, server string, token int64) *Output {
		id++
		return step(op.String(), n.Request(now, Request{ID: id, Op: op, Chunk: "c", Server: server, Token: token}))
	}
	// Silent peers: every request times out.
	for _, op := range []Op{OpGrant, OpRenew, OpCheck} {
		ask(op, "s", 0)
	}
	ask(OpRelease, "s", 1)
	now += time.Second
	step("the quorum timeouts", n.Tick(now))
	if len(n.spareRequests) == 0 {
		t.Fatal("no request was kept after the quorum timeouts")
	}
	// Answering peers: n2 and n3 answer each message as acceptors that
	// agree with everything, reporting the lease a propose proposed.
	answer := func(out *Output) {
		msgs := append([]Msg(nil), out.Msgs...)
		for len(msgs) > 0 {
			m := msgs[0]
			msgs = msgs[1:]
			r := Msg{Type: m.Type.Answer(), From: m.To, To: "n1", Chunk: m.Chunk, Ballot: m.Ballot, ReqID: m.ReqID, Nonce: m.Nonce,
				OK: true, Promised: m.Ballot, Server: m.Server, LeaseMs: m.LeaseMs, Token: m.Token}
			if m.Type == MsgPropose || m.Type == MsgRead {
				r.Lease = &Record{Server: "s", Token: 1, RemainingMs: 5000}
			}
			msgs = append(msgs, step("an answer", n.Receive(now, r)).Msgs...)
		}
	}
	for range 3 {
		answer(ask(OpGrant, "s", 0))
		answer(ask(OpRenew, "s", 0))
		answer(ask(OpCheck, "", 0))
	}
	if len(n.spareAttempts) == 0 || len(n.spareReads) == 0 {
		t.Fatalf("%d attempts and %d read rounds kept after answered grants, renews and checks", len(n.spareAttempts), len(n.spareReads))
	}

	// The negative control: a pending request, and its attempt, planted
	// among the kept ones.
	ask(OpGrant, "s2", 0)
	var r *request
	for _, p := range n.pending {
		if p.att != nil {
			r = p
		}
	}
	if r == nil {
		t.Fatal("no grant with a running attempt is pending")
	}
	n.spareAttempts = append(n.spareAttempts, r.att)
	if n.SpareReachable() == "" {
		t.Error("SpareReachable did not find an attempt kept while its request runs it")
	}
	n.spareAttempts = n.spareAttempts[:len(n.spareAttempts)-1]
	n.spareRequests = append(n.spareRequests, r)
	if n.SpareReachable() == "" {
		t.Error("SpareReachable did not find a pending request among the kept ones")
	}
	n.spareRequests = n.spareRequests[:len(n.spareRequests)-1]
	ask(OpCheck, "", 0)
	for _, p := range n.pending {
		if p.rd != nil {
			n.spareReads = append(n.spareReads, p.rd)
		}
	}
	if len(n.spareReads) == 0 || n.SpareReachable() == "" {
		t.Error("SpareReachable did not find the read round of a pending check among the kept ones")
	}
	n.spareReads = n.spareReads[:0]

	// An answer that leaves the node with a Record of the reused buffer
	// (the answers to its own proposer take one, attachRecord): found.
	if cap(n.selfRecords) == 0 {
		t.Fatal("the node's own acceptor answered without a reused record")
	}
	out := ask(OpCheck, "", 0)
	if len(out.Msgs) == 0 {
		t.Fatal("a check sent nothing")
	}
	if s := n.SpareReachable(); s != "" {
		t.Fatalf("before the plant: %s", s)
	}
	out.Msgs[0].Lease = &n.selfRecords[:1][0]
	if n.SpareReachable() == "" {
		t.Error("SpareReachable did not find a message leaving the node with a record the node reuses")
	}
}
