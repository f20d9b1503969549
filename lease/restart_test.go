package lease

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
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
	return propRounds(seed, 0xf100, rounds, func(rng *rand.Rand) error { return restartFloorRound(rng, w) })
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

// TestRecoveryFloorIsTheLargestAnswer is the recovery guard's property,
// held to a model of what recovery counts: a restarted acceptor's floor
// is, after every sync answer, at least every high-water mark it heard
// from its own incarnation's sync rounds, in whatever order (and however
// often) the answers arrive, and never more than the largest of them:
// answers meant for an earlier incarnation (another request id, or
// another nonce, as after a clock step back) neither raise the floor nor
// count. Recovery is complete exactly when n-q+1 acceptors that are not
// restarting, or q-1 that are restarting too, answered (doc.go
// "Fencing tokens"); until then a later, higher mark still raises the
// floor. Three and five acceptors.
func TestRecoveryFloorIsTheLargestAnswer(t *testing.T) {
	if err := recoveryRounds(propSeed(t), strong, 500); err != nil {
		t.Fatal(err)
	}
}

func recoveryRounds(seed uint64, w weakening, rounds int) error {
	return propRounds(seed, 0x5c, rounds, func(rng *rand.Rand) error { return recoveryRound(rng, w) })
}

func recoveryRound(rng *rand.Rand, w weakening) error {
	acc := []string{"n1", "n2", "n3", "n4", "n5"}[:3+2*rng.IntN(2)]
	inc, nonce := 1+rng.Int64N(1<<40), 1+rng.Uint64N(1<<52)
	n, err := NewNode(Config{ID: "n1", Acceptors: acc, MaxLeaseMs: 1000, BootWaitMs: 1000, Incarnation: inc, Nonce: nonce,
		Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}, 0)
	if err != nil {
		return err
	}
	q := len(acc)/2 + 1
	ready, restarting := map[string]bool{}, map[string]bool{} // distinct acceptors counted, by kind
	var low, high uint64                                      // the largest first answer; the largest answer of this incarnation
	recovering := true
	for step := range 1 + rng.IntN(12) {
		m := Msg{Type: MsgSyncResp, From: acc[1+rng.IntN(len(acc)-1)], To: "n1", ReqID: uint64(inc), Nonce: nonce,
			Counter: uint64(rng.Int64N(1 << 30)), Recovering: rng.IntN(3) == 0}
		foreign := rng.IntN(3) == 0
		if foreign {
			// An earlier incarnation's answer: its request id (the
			// earlier incarnation), its nonce, or both differ; its mark
			// is above every genuine one, so counting it shows.
			m.Counter += 1 << 31
			otherID := uint64(max(inc+rng.Int64N(2000)-1000, 0))
			if otherID == uint64(inc) {
				otherID++
			}
			otherNonce := nonce ^ (1 + rng.Uint64N(1<<20))
			switch rng.IntN(3) {
			case 0:
				m.ReqID = otherID
			case 1:
				m.Nonce = otherNonce // the same id: the wall clock stepped back
			default:
				m.ReqID, m.Nonce = otherID, otherNonce
			}
		}
		n.Receive(time.Duration(step)*time.Millisecond, m)
		if recovering && !foreign {
			high = max(high, m.Counter)
			kind := ready
			if m.Recovering {
				kind = restarting
			}
			if !kind[m.From] {
				kind[m.From], low = true, max(low, m.Counter)
			}
			recovering = len(ready) < len(acc)-q+1 && len(restarting) < q-1
		}
		what := fmt.Sprintf("after %s's answer %d (recovering %v, earlier incarnation %v; counted: %d ready, %d restarting, of %d acceptors)",
			m.From, m.Counter, m.Recovering, foreign, len(ready), len(restarting), len(acc))
		switch {
		case n.floor < low:
			return fmt.Errorf("%s the floor is %d, below the mark %d it heard", what, n.floor, low)
		case n.floor > high:
			return fmt.Errorf("%s the floor is %d, above every mark of this incarnation (largest %d)", what, n.floor, high)
		case n.recovering != recovering:
			return fmt.Errorf("%s the node is recovering: %v, want %v", what, n.recovering, recovering)
		}
	}
	return nil
}

// TestSyncAnswerCoversEveryPromise: an acceptor tells a recovering peer a
// high-water mark at least every ballot it promised or accepted, also
// one far ahead of its own wall clock (a proposer whose clock runs
// ahead), which its ballot counter does not follow beyond the lead
// bound (ballot.go observe).
func TestSyncAnswerCoversEveryPromise(t *testing.T) {
	if err := syncAnswerRounds(propSeed(t), strong, 300); err != nil {
		t.Fatal(err)
	}
}

func syncAnswerRounds(seed uint64, w weakening, rounds int) error {
	return propRounds(seed, 0x5a2, rounds, func(rng *rand.Rand) error { return syncAnswerRound(rng, w) })
}

func syncAnswerRound(rng *rand.Rand, w weakening) error {
	const wall0 = 1_763_856_000_000
	maxMs := 200 + rng.Int64N(1800)
	n, err := NewNode(Config{ID: "n2", Acceptors: []string{"n1", "n2", "n3"}, MaxLeaseMs: maxMs, Incarnation: 1 + rng.Int64N(1<<40),
		Nonce: 1, WallMs: wall0, Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}, 0)
	if err != nil {
		return err
	}
	wallUnits := uint64(ms(wall0-CounterEpochMs) / BallotUnit)
	var promised uint64
	now := time.Duration(0)
	for step := range 1 + rng.IntN(20) {
		now += time.Duration(rng.Int64N(50)) * time.Millisecond
		// A ballot near this node's wall clock, or up to a minute ahead
		// of it.
		aheadMs := rng.Int64N(maxMs / 2)
		if rng.IntN(3) == 0 {
			aheadMs = rng.Int64N(60_000)
		}
		units := wallUnits + uint64(ms(aheadMs)/BallotUnit) + uint64(now/BallotUnit)
		b := Ballot{Counter: units<<LaneBits | 2, Incarnation: 9}
		m := Msg{Type: MsgPrepare, From: "n3", To: "n2", Chunk: fmt.Sprintf("c%d", rng.IntN(4)), Ballot: b, Server: "s"}
		if rng.IntN(2) == 0 {
			m.Type, m.LeaseMs = MsgPropose, 1+rng.Int64N(maxMs)
		}
		for _, out := range n.Receive(now, m).Msgs {
			if out.Type == m.Type.Answer() && out.OK {
				promised = max(promised, b.Counter)
			}
		}
		if rng.IntN(3) > 0 && step > 0 {
			continue
		}
		var answer *Msg
		for _, out := range n.Receive(now, Msg{Type: MsgSync, From: "n1", To: "n2", ReqID: 5, Nonce: 5}).Msgs {
			if out.Type == MsgSyncResp {
				answer = &out
			}
		}
		if answer == nil || answer.Counter < promised {
			return fmt.Errorf("step %d: the acceptor promised counter %d (lead bound %d ms), its sync answer is %+v", step, promised, maxMs/4, answer)
		}
	}
	return nil
}

// TestBootWaitEndsAtItsStretchedEnd: a restarted acceptor answers
// prepare, propose, read and release with "booting" until exactly
// BootWaitMs*(1+rho)/(1-rho) of its own clock after its start (rule 7,
// rounded up to the nanosecond), a nanosecond before included, and
// serves from that instant on.
func TestBootWaitEndsAtItsStretchedEnd(t *testing.T) {
	if err := bootEdgeRounds(propSeed(t), strong, 200); err != nil {
		t.Fatal(err)
	}
}

func bootEdgeRounds(seed uint64, w weakening, rounds int) error {
	return propRounds(seed, 0xb007, rounds, func(rng *rand.Rand) error { return bootEdgeRound(rng, w) })
}

func bootEdgeRound(rng *rand.Rand, w weakening) error {
	bootMs, ppm := 1+rng.Int64N(120_000), []int64{0, 1 + rng.Int64N(100_000)}[rng.IntN(2)]
	start := time.Duration(rng.Int64N(int64(time.Hour)))
	// end = start + ceil(bootMs * 1e6 ns * (1e6 + ppm) / (1e6 - ppm))
	num := new(big.Int).Mul(big.NewInt(int64(ms(bootMs))), big.NewInt(1_000_000+ppm))
	den := big.NewInt(1_000_000 - ppm)
	num.Add(num, new(big.Int).Sub(den, big.NewInt(1)))
	end := start + time.Duration(num.Div(num, den).Int64())
	for _, typ := range []MsgType{MsgPrepare, MsgPropose, MsgRead, MsgRelease} {
		n, err := NewNode(Config{ID: "n1", Acceptors: []string{"n1", "n2", "n3"}, MaxLeaseMs: bootMs, BootWaitMs: bootMs, DriftPPM: ppm,
			Incarnation: 1, Nonce: 1, Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}, start)
		if err != nil {
			return err
		}
		m := Msg{Type: typ, From: "n2", To: "n1", Chunk: "c", Ballot: Ballot{Counter: 1 << 20, Incarnation: 2}, Server: "s",
			LeaseMs: bootMs, Token: 1, ReqID: 3, Nonce: 3}
		for _, at := range []time.Duration{end - 1, end} {
			var got []MsgType
			for _, out := range n.Receive(at, m).Msgs {
				if out.To == "n2" && out.Type != MsgSync {
					got = append(got, out.Type)
				}
			}
			want := typ.Answer()
			if at < end {
				want = MsgBooting
			}
			if len(got) != 1 || got[0] != want {
				return fmt.Errorf("boot wait %d ms at %d ppm from %v ends at %v; %s at %v was answered %v, want %s",
					bootMs, ppm, start, end, typ, at, got, want)
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
				old = append(old, Msg{Type: m.Type.Answer(), From: m.To, To: m.From, Chunk: m.Chunk, Server: m.Server,
					Token: m.Token, ReqID: m.ReqID, Nonce: m.Nonce, OK: true})
			}
			inc = max(inc+rng.Int64N(2000)-1000, 0) // the wall clock may have stepped back
		}
	}
	return nil
}

// TestReadinessWaitsForNoUnreachableAcceptor is what readiness waits for
// of recovery (AwaitingRecovery, doc.go "What readiness waits for"): a
// restarted acceptor among n (3 to 7) whose peers in a random set R
// answer every sync round at once, some of them restarting too, and the
// others never. It awaits an incomplete recovery throughout its boot
// wait (readiness waits for the boot wait anyway); after the
// boot wait and a round past its first sync round it does not, whenever
// R holds q-1 or more (with this node, a majority: it must not stay out
// of service for an acceptor it cannot reach); with fewer it still does.
// The same holds for each core of a member that runs two.
func TestReadinessWaitsForNoUnreachableAcceptor(t *testing.T) {
	if err := readinessRounds(propSeed(t), 300); err != nil {
		t.Fatal(err)
	}
}

func readinessRounds(seed uint64, rounds int) error {
	rng := rand.New(rand.NewPCG(seed, 0x4ead))
	for round := range rounds {
		size := 3 + rng.IntN(5)
		var acc []string
		for i := range size {
			acc = append(acc, fmt.Sprintf("n%d", i+1))
		}
		reach := map[string]bool{}
		for _, a := range acc[1:] {
			reach[a] = rng.IntN(2) == 0
		}
		bootMs := 200 + rng.Int64N(2000)
		cfg := Config{ID: "n1", Acceptors: acc, MaxLeaseMs: bootMs, BootWaitMs: bootMs, QuorumTimeoutMs: 200 + rng.Int64N(1800),
			Incarnation: 9, Nonce: 9, Rand: rand.New(rand.NewPCG(1, 2))}
		// Half the rounds, the member runs two cores: the lead sends the
		// rounds, the other only counts the answers (Route hands it every
		// one) and is called only at its own wake-ups and for them.
		var other *Node
		if rng.IntN(2) == 0 {
			cfg.Cores = 2
			oc := cfg
			oc.Core, oc.Rand = 1, rand.New(rand.NewPCG(1, 3))
			var err error
			if other, err = NewNode(oc, 0); err != nil {
				return err
			}
		}
		n, err := NewNode(cfg, 0)
		if err != nil {
			return err
		}
		cores := []*Node{n}
		otherWake := Never
		if other != nil {
			cores = append(cores, other)
			otherWake = other.Tick(0).Wake
		}
		settleBy := max(n.bootUntil, ms(n.cfg.RoundTimeoutMs))
		out, now := n.Tick(0), time.Duration(0)
		for now < settleBy+time.Millisecond {
			for _, m := range slices.Clone(out.Msgs) {
				if m.Type == MsgSync && reach[m.To] {
					resp := Msg{Type: MsgSyncResp, From: m.To, To: "n1", ReqID: m.ReqID, Nonce: m.Nonce,
						Counter: uint64(rng.Int64N(1 << 40)), Recovering: rng.IntN(3) == 0}
					n.Receive(now, resp)
					if other != nil {
						otherWake = other.Receive(now, resp).Wake
					}
				}
			}
			for _, c := range cores {
				if now < c.bootUntil && !c.AwaitingRecovery() && c.Recovering() {
					return fmt.Errorf("seed %d round %d: core %d no longer awaiting an incomplete recovery %v into a boot wait of %v", seed, round, c.cfg.Core, now, c.bootUntil)
				}
			}
			now = min(max(out.Wake, now+time.Millisecond), settleBy+time.Millisecond)
			out = n.Tick(now)
			if other != nil && now >= otherWake {
				otherWake = other.Tick(now).Wake
			}
		}
		answering := 0
		for _, r := range reach {
			if r {
				answering++
			}
		}
		for _, c := range cores {
			if want := answering < n.quorum-1; c.AwaitingRecovery() != want {
				return fmt.Errorf("seed %d round %d: %d acceptors, %d of the others answering, quorum %d, core %d of %d: awaiting recovery %v at %v (boot wait until %v, round %v), want %v",
					seed, round, size, answering, n.quorum, c.cfg.Core, len(cores), c.AwaitingRecovery(), now, n.bootUntil, ms(n.cfg.RoundTimeoutMs), want)
			}
		}
	}
	return nil
}
