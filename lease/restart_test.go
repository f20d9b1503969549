package lease

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRestartFloorAboveEveryEarlierToken is the restart floor's property
// (doc.go "Fencing tokens"): with the nodes' wall clocks within the bound
// (any two within BootWaitMs - L) and every counter paced (within L of
// its issuer's wall clock), a restarted acceptor, once its boot wait is
// over, refuses every ballot issued before its restart, however late it
// arrives and whatever it heard from its peers (here: nothing).
func TestRestartFloorAboveEveryEarlierToken(t *testing.T) {
	if err := restartFloorRounds(propSeed(t), strong, 300); err != nil {
		t.Fatal(err)
	}
}

func restartFloorRounds(seed uint64, w weakening, rounds int) error {
	rng := rand.New(rand.NewPCG(seed, 0xf100))
	for round := range rounds {
		if err := restartFloorRound(rng, w); err != nil {
			return fmt.Errorf("seed %d round %d: %v", seed, round, err)
		}
	}
	return nil
}

func restartFloorRound(rng *rand.Rand, w weakening) error {
	const wall0 = 1_763_856_000_000
	nodes := []string{"n1", "n2", "n3"}
	maxMs := 200 + rng.Int64N(1800)
	spread := maxMs - maxMs/4 - 1 // just within the bound
	offset := func() int64 { return rng.Int64N(spread+1) - spread/2 }
	cfg := func(id string, wallMs int64) Config {
		return Config{ID: id, Acceptors: nodes, MaxLeaseMs: maxMs, BootWaitMs: maxMs, Incarnation: 1 + rng.Int64N(1<<40), Nonce: 1,
			WallMs: wallMs, Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}
	}
	// Before the restart: every node issues ballots, in bursts up to its
	// lead bound, at random times in [0, restartAt].
	restartAt := time.Duration(rng.Int64N(2*maxMs)) * time.Millisecond
	var issued []Ballot
	for _, id := range nodes {
		src := newBallotSource(cfg(id, wall0+offset()), 0)
		for range 1 + rng.IntN(4) {
			at := time.Duration(rng.Int64N(int64(restartAt) + 1))
			for range rng.IntN(20000) {
				b, ready := src.next(at, 0)
				if ready > at {
					break
				}
				issued = append(issued, b)
			}
		}
	}
	x, err := NewNode(cfg("n1", wall0+int64(restartAt/time.Millisecond)+offset()), restartAt)
	if err != nil {
		return err
	}
	serveAt := x.bootUntil
	for _, b := range issued {
		m := Msg{Type: MsgPrepare, From: "n2", To: "n1", Chunk: "c", Ballot: b, Server: "s"}
		for _, out := range x.Receive(serveAt, m).Msgs {
			if out.Type == MsgPrepareResp && out.OK {
				return fmt.Errorf("after its restart at %v (M = %d ms) n1 promised ballot %v, issued before the restart; floor %d",
					restartAt, maxMs, b, x.floor)
			}
		}
	}
	return nil
}

// TestRecoveryFloorIsTheLargestAnswer is the recovery guard's property: a
// restarted acceptor's floor is, after every sync answer, at least every
// high-water mark it heard, and it never falls, in whatever order (and
// however often) the answers arrive.
func TestRecoveryFloorIsTheLargestAnswer(t *testing.T) {
	if err := recoveryRounds(propSeed(t), strong, 500); err != nil {
		t.Fatal(err)
	}
}

func recoveryRounds(seed uint64, w weakening, rounds int) error {
	rng := rand.New(rand.NewPCG(seed, 0x5c))
	acc := []string{"n1", "n2", "n3", "n4", "n5"}
	for round := range rounds {
		n, err := NewNode(Config{ID: "n1", Acceptors: acc, MaxLeaseMs: 1000, BootWaitMs: 1000, Incarnation: 7, Nonce: 7,
			Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}, 0)
		if err != nil {
			return err
		}
		first := map[string]uint64{} // each acceptor's first answer while recovering
		for step := range 1 + rng.IntN(8) {
			c := uint64(rng.Int64N(1 << 30))
			from := acc[1+rng.IntN(len(acc)-1)]
			before, counted := n.floor, n.recovering
			n.Receive(time.Duration(step)*time.Millisecond, Msg{Type: MsgSyncResp, From: from, To: "n1", ReqID: 7, Nonce: 7, Counter: c,
				Recovering: rng.IntN(4) == 0})
			if _, seen := first[from]; counted && !seen {
				first[from] = c
			}
			for who, high := range first {
				if n.floor < high || n.floor < before {
					return fmt.Errorf("seed %d round %d: %s answered %d, the last answer was %d from %s; the floor is %d (was %d)",
						seed, round, who, high, c, from, n.floor, before)
				}
			}
		}
	}
	return nil
}

// TestAnswersToEarlierIncarnationsNeverMatch: however a node's
// incarnation moves across restarts (forward, or back after a step of the
// wall clock, so that request ids repeat), an answer to a read or release
// of an earlier incarnation never answers a request of a later one: it
// echoes the earlier incarnation's nonce (doc.go, "Restarts and memory").
func TestAnswersToEarlierIncarnationsNeverMatch(t *testing.T) {
	if err := requestIDRounds(propSeed(t), strong, 200); err != nil {
		t.Fatal(err)
	}
}

func requestIDRounds(seed uint64, w weakening, rounds int) error {
	rng := rand.New(rand.NewPCG(seed, 0x1d))
	for round := range rounds {
		var old []Msg // acceptors' answers to every earlier incarnation's requests
		inc := 1 + rng.Int64N(1<<40)
		for range 2 + rng.IntN(3) {
			n, err := NewNode(Config{ID: "p", Acceptors: []string{"a1", "a2", "a3"}, Nodes: []string{"a1", "a2", "a3", "p"},
				MaxLeaseMs: 1000, Incarnation: inc, Nonce: 1 + rng.Uint64N(maxWire-1), Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}, 0)
			if err != nil {
				return err
			}
			count := 1 + rng.IntN(50)
			var sent []Msg
			for k := range count {
				op := []Op{OpCheck, OpRelease}[rng.IntN(2)]
				out := n.Request(0, Request{ID: uint64(k + 1), Op: op, Chunk: fmt.Sprintf("c%d", k), Server: "s", Token: 1})
				sent = append(sent, out.Msgs...)
			}
			for _, a := range old {
				if out := n.Receive(time.Millisecond, a); len(out.Replies) > 0 {
					return fmt.Errorf("seed %d round %d: incarnation %d answered request %d with %s from answers meant for an "+
						"earlier incarnation (request id %d)", seed, round, inc, out.Replies[0].ID, out.Replies[0].Type, a.ReqID)
				}
			}
			for _, m := range sent {
				old = append(old, Msg{Type: respType(m.Type), From: m.To, To: m.From, Chunk: m.Chunk, Server: m.Server,
					Token: m.Token, ReqID: m.ReqID, Nonce: m.Nonce, OK: true})
			}
			inc = max(inc+rng.Int64N(2000)-1000, 0) // the wall clock may have stepped back
		}
	}
	return nil
}
