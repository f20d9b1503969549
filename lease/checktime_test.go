package lease

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestCheckReportsTheProvenTimeLessTheMargin: a check's remaining time is
// never more than what its read proves less the drift margin: the
// (n-q+1)-th largest remaining time the answers so far reported for the
// holder, counted from when the read was sent, less DriftMarginMs, in
// whole milliseconds at the reply (doc.go "Check is a majority read").
// Reads of three and five acceptors, answered in any order, at any pace,
// with holders, other servers and no lease mixed.
func TestCheckReportsTheProvenTimeLessTheMargin(t *testing.T) {
	if err := checkTimeRounds(propSeed(t), strong, 1000); err != nil {
		t.Fatal(err)
	}
}

func checkTimeRounds(seed uint64, w weakening, rounds int) error {
	named := 0
	if err := propRounds(seed, 0xc4ec, rounds, func(rng *rand.Rand) error { return checkTimeRound(rng, w, &named) }); err != nil {
		return err
	}
	if named < rounds/4 {
		return fmt.Errorf("seed %d: only %d of %d checks named a holder: the rounds no longer exercise the remaining time", seed, named, rounds)
	}
	return nil
}

// checkTimeRound reads one chunk once; named counts the checks that
// named a live holder.
func checkTimeRound(rng *rand.Rand, w weakening, named *int) error {
	acc := []string{"a1", "a2", "a3", "a4", "a5"}[:3+2*rng.IntN(2)]
	q := len(acc)/2 + 1
	marginMs := rng.Int64N(200)
	n, err := NewNode(Config{ID: "p", Acceptors: acc, Nodes: append(slices.Clone(acc), "p"), MaxLeaseMs: 1000, DefaultLeaseMs: 1000,
		DriftMarginMs: marginMs, DriftPPM: rng.Int64N(20_000), RoundTimeoutMs: 200, Incarnation: 1 + rng.Int64N(1<<40),
		Nonce: 1 + rng.Uint64N(1<<52), Rand: rand.New(rand.NewPCG(1, 2)), weaken: w}, 0)
	if err != nil {
		return err
	}
	sentAt := time.Duration(rng.Int64N(int64(time.Second)))
	var reads []Msg
	for _, m := range n.Request(sentAt, Request{ID: 1, Op: OpCheck, Chunk: "c"}).Msgs {
		if m.Type == MsgRead {
			reads = append(reads, m)
		}
	}
	reported := map[string][]int64{} // each server's remaining times reported so far
	// proven is the oracle: the (n-q+1)-th largest time reported for server.
	proven := func(server string) int64 {
		rem := slices.Sorted(slices.Values(reported[server]))
		if k := len(acc) - q + 1; len(rem) >= k {
			return rem[len(rem)-k]
		}
		return 0
	}
	judge := func(now time.Duration, out *Output) error {
		for _, r := range out.Replies {
			body, ok := r.Body.(CheckOK)
			if !ok || body.Primary == nil || body.Expired {
				continue
			}
			*named++
			most := floorMs(sentAt + ms(proven(*body.Primary)) - now - ms(marginMs))
			if body.RemainingMs > most {
				return fmt.Errorf("%d acceptors, margin %d ms: the check read at %v and answered at %v reports %s for %d ms; the answers %v prove %d ms from the read, so at most %d ms",
					len(acc), marginMs, sentAt, now, *body.Primary, body.RemainingMs, reported, proven(*body.Primary), most)
			}
		}
		return nil
	}
	now := sentAt
	for _, i := range rng.Perm(len(reads)) {
		now += time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
		var rec *Record
		switch k := rng.IntN(6); {
		case k == 0:
		case k == 1:
			rec = &Record{Server: "t", Token: 2, RemainingMs: 1 + rng.Int64N(1000)}
		default:
			rec = &Record{Server: "s", Token: 1, RemainingMs: 1 + rng.Int64N(1000)}
		}
		if rec != nil {
			reported[rec.Server] = append(reported[rec.Server], rec.RemainingMs)
		}
		m := reads[i]
		out := n.Receive(now, Msg{Type: MsgReadResp, From: m.To, To: "p", Chunk: "c", ReqID: m.ReqID, Nonce: m.Nonce, Lease: rec})
		if err := judge(now, out); err != nil {
			return err
		}
	}
	now += 200 * time.Millisecond // a weakly decided check answers at the round's end
	return judge(now, n.Tick(now))
}
