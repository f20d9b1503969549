package lease

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMasterStopKeepsEveryAnnouncedMastership: a stopped master gives its
// lease back no earlier than every mastership a master_status answer
// announced, stretched by the drift factor (rule 5): a client told "r ms
// more" at t believes it until t + r of its own clock, up to r/(1-rho) of
// true time, while the node's clock may run fast by rho; so the lease
// stays protected until t + r*(1+rho)/(1-rho) of the node's clock. (The
// master simulation found two masters, seed 4748934735356847259, while
// the release went out after r of the node's clock.)
func TestMasterStopKeepsEveryAnnouncedMastership(t *testing.T) {
	announced := 0
	err := propRounds(propSeed(t), 0x3a57, 300, func(rng *rand.Rand) error {
		leaseMs, ppm := 100+rng.Int64N(2000), rng.Int64N(100_000)
		n, err := NewNode(Config{ID: "n1", Acceptors: []string{"n1"}, MaxLeaseMs: leaseMs, DefaultLeaseMs: leaseMs, DriftPPM: ppm,
			Incarnation: 1, Nonce: 1, Rand: rand.New(rand.NewPCG(1, 2))}, 0)
		if err != nil {
			return err
		}
		n.Request(0, Request{ID: 1, Op: OpMasterStart})
		at := time.Duration(rng.Int64N(int64(ms(leaseMs) / 2)))
		var st MasterStatusOK
		for _, r := range n.Request(at, Request{ID: 2, Op: OpMasterStatus}).Replies {
			st, _ = r.Body.(MasterStatusOK)
		}
		if !st.IsMaster {
			return nil
		}
		announced++
		now := at + time.Duration(rng.Int64N(int64(time.Millisecond)))
		n.Request(now, Request{ID: 3, Op: OpMasterStop})
		end := at + stretch(ms(st.RemainingMs), ppm)
		for now < end {
			out := n.Tick(now)
			if a, ok := n.chunks.get(masterChunk); !ok || !a.live(now) {
				return fmt.Errorf("lease %d ms, %d ppm: master_status at %v announced %d ms; stopped, the node gave the lease back by %v, before %v",
					leaseMs, ppm, at, st.RemainingMs, now, end)
			}
			now = min(max(out.Wake, now+time.Nanosecond), max(end-time.Nanosecond, now+time.Nanosecond))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if announced < 100 {
		t.Fatalf("only %d of 300 rounds announced a mastership", announced)
	}
}
