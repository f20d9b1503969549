package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/fakelease"
	"chunklease/internal/testseed"
)

// The Session's safety property, checked against the fake cluster's own
// record of the lease under random faults:
//
//	belief:   whenever the Session's believed expiry changes, it is no later
//	          than the real end of the lease the cluster records;
//	loss:     when Done closes for a loss, the lease is still live in the
//	          cluster (the loss was signalled before the lease could end);
//	held:     every 10 ms while Done is open, the cluster says the chunk is
//	          held by the Session's server;
//	current:  every 10 ms, when Current says the lease holds, the cluster
//	          says the chunk is held by the Session's server, with a token
//	          no larger than the cluster's.
//
// A run with a stalled watchdog (a process whose timers run late after a
// pause) must keep every property through Current alone: the watcher asks
// it before looking at Done, as a holder does before acting.
//
// Each property is shown to bite: a Session that signals the loss only
// after the believed expiry, one that counts the expiry from the answer's
// arrival, a cluster whose clock runs faster than the drift margin
// covers, and a holder with a stalled watchdog that watches Done alone
// must each be caught, alone and batching. With batching on, several holders renew at
// once through one client to members that queue (the client then keeps
// few requests in flight to each), so their renewals meet in batches: a
// batched call's expiry counts from when its batch was sent, as a lone
// call's from when it was sent.

// scenario is one randomized run's setting.
type scenario struct {
	seed     uint64
	variant  sessionVariant
	doneOnly bool          // the watcher never asks Current: it believes Done alone
	rate     float64       // the cluster's clock rate
	duration time.Duration // of the bubble's time
	// batching: the client batches (Config.Batching) and holders
	// sessions at once, each on its own chunk; else one holder.
	batching bool
	holders  int
	// answerDelay is how long every member takes to send an answer after
	// acting, outside the nemesis's own faults: calls overlap, and each
	// answer arrives that long after the expiry it carries was measured.
	answerDelay time.Duration
	// queueing: the members queue, as busy ones do: between the
	// nemesis's faults each member's requests wait 0 to 150 ms (drawn
	// anew every nemesis step) before it performs them, so a batching
	// client sees answers far slower than the quickest, keeps few
	// requests in flight (inflight.go), and the holders' renewals meet
	// in batches.
	queueing bool
}

// scenarioResult is what a run saw.
type scenarioResult struct {
	mu         sync.Mutex
	violations []string
	sessions   int
	renewals   int
	losses     int
	batched    int            // renewals that went in a batch
	kinds      map[string]int // violations seen of each property
}

// violate records a violation: the first five of each property (the
// text before its colon), so that many of one kind (a held: every tick of
// eight holders) never hide the first of another.
func (r *scenarioResult) violate(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := fmt.Sprintf(format, args...)
	kind, _, _ := strings.Cut(v, ":")
	if r.kinds == nil {
		r.kinds = map[string]int{}
	}
	if r.kinds[kind]++; r.kinds[kind] <= 5 {
		r.violations = append(r.violations, v)
	}
}

// count adds one to a counter of r.
func (r *scenarioResult) count(n *int) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}

// runScenario holds sessions one after another on a chunk (with
// batching, on several chunks at once) while a nemesis kills, restarts,
// slows and faults the members. It runs inside a synctest bubble. Fixed
// windows (see nemesis) make every run exercise the paths the negative
// controls need.
func runScenario(t *testing.T, sc scenario) *scenarioResult {
	res := &scenarioResult{}
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, ClockRate: sc.rate, Batch: sc.batching},
			Config{Seed: sc.seed, Batching: sc.batching})
		stop := make(chan struct{})
		nemesisDone := make(chan struct{})
		for i := range 3 {
			f.Node(i).SetLatency(0, sc.answerDelay)
		}
		go func() {
			defer close(nemesisDone)
			nemesis(f, rand.New(rand.NewPCG(sc.seed, 11)), sc.answerDelay, sc.queueing, stop)
		}()
		end := time.Now().Add(sc.duration)
		var wg sync.WaitGroup
		for k := range max(sc.holders, 1) {
			rng := rand.New(rand.NewPCG(sc.seed, 7+uint64(k)))
			wg.Go(func() {
				holdSessions(f, c, sc, fmt.Sprintf("ch_%d", k+1), fmt.Sprintf("cs%d", k+1), rng, end, res)
			})
		}
		wg.Wait()
		close(stop)
		<-nemesisDone
		for _, call := range f.CallsOf("lease_renew") {
			if call.Batched {
				res.batched++
			}
		}
	})
	return res
}

// holdSessions holds sessions on chunk for server one after another
// until end, each with a random lease length, and checks the properties
// over each one's life.
func holdSessions(f *fakelease.Cluster, c *Client, sc scenario, chunk, server string, rng *rand.Rand, end time.Time, res *scenarioResult) {
	for time.Now().Before(end) {
		leaseMs := []int64{300, 500, 1000, 2000}[rng.IntN(4)]
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s, err := c.newSession(ctx, chunk, server, SessionOptions{LeaseMs: leaseMs, Seed: rng.Uint64(), OnRenew: func(Lease) {
			res.count(&res.renewals)
		}}, sc.variant)
		cancel()
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		res.count(&res.sessions)
		watchSession(f, s, chunk, server, end, sc.doneOnly, res)
	}
}

// watchSession checks the properties over one session's life, and
// closes it at end (or after its loss). Unless doneOnly, each tick asks
// Current first, as a holder does before it acts.
func watchSession(f *fakelease.Cluster, s *Session, chunk, server string, end time.Time, doneOnly bool, res *scenarioResult) {
	checkBelief := func(when string) {
		if h := f.Holder(chunk); h.Server == server && s.Until().After(h.End) {
			res.violate("belief: at %s of %s the believed expiry %v is after the real end %v (by %v)", when, chunk, s.Until(), h.End, s.Until().Sub(h.End))
		}
	}
	checkBelief("the grant")
	lastUntil := s.Until()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.Done():
			if errors.Is(s.Err(), ErrLost) {
				res.count(&res.losses)
				if h := f.Holder(chunk); !h.Live || h.Server != server {
					res.violate("loss: %s signalled at %v, but the lease ended at %v", chunk, time.Now(), h.End)
				}
			}
			closeSoon(s)
			return
		case <-tick.C:
			if u := s.Until(); !u.Equal(lastUntil) {
				checkBelief("a renewal")
				lastUntil = u
			}
			if !doneOnly {
				if cur, err := s.Current(); err == nil {
					if h := f.Holder(chunk); !h.Live || h.Server != server || cur.Token > h.Token || cur.Until.After(h.End) {
						res.violate("current: at %v Current of %s says held with token %d until %v; the cluster: %+v", time.Now(), chunk, cur.Token, cur.Until, h)
					}
				}
			}
			if h := f.Holder(chunk); !h.Live || h.Server != server {
				select {
				case <-s.Done():
				default:
					res.violate("held: at %v the session on %s holds on, the cluster's lease ended at %v", time.Now(), chunk, h.End)
				}
			}
			if !time.Now().Before(end) {
				closeSoon(s)
				return
			}
		}
	}
}

// closeSoon closes s, giving the release a second.
func closeSoon(s *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.Close(ctx)
}

// nemesis faults the members at random every 50 to 500 ms until stop,
// with fixed windows: slow answers on every member from 2 s to 4 s, no
// fault from 6 s to 8 s (so that the lease's real end is the one the
// Session was told), every member dead from 8 s to 11 s.
func nemesis(f *fakelease.Cluster, rng *rand.Rand, answerDelay time.Duration, queueing bool, stop <-chan struct{}) {
	start := time.Now()
	for {
		t := time.NewTimer(time.Duration(50+rng.IntN(450)) * time.Millisecond)
		select {
		case <-stop:
			t.Stop()
			for i := range 3 {
				f.Node(i).Restart()
			}
			return
		case <-t.C:
		}
		el := time.Since(start)
		if queueing {
			for i := range 3 {
				f.Node(i).SetLatency(time.Duration(rng.IntN(150))*time.Millisecond, answerDelay)
			}
		}
		n := f.Node(rng.IntN(3))
		switch {
		case el >= 8*time.Second && el < 11*time.Second:
			for i := range 3 {
				f.Node(i).Kill()
			}
		case el >= 6*time.Second && el < 8*time.Second:
			for i := range 3 {
				heal(f.Node(i), answerDelay)
			}
		case el >= 2*time.Second && el < 4*time.Second:
			for i := range 3 {
				heal(f.Node(i), answerDelay)
				f.Node(i).SetLatency(time.Duration(rng.IntN(5))*time.Millisecond, time.Duration(20+rng.IntN(20))*time.Millisecond)
			}
		default:
			randomFault(n, rng, answerDelay)
		}
	}
}

// heal restarts n, sets its latency back to the scenario's answer delay
// and clears its queued faults.
func heal(n *fakelease.Node, answerDelay time.Duration) {
	n.Restart()
	n.SetLatency(0, answerDelay)
	n.ClearFaults()
}

func randomFault(n *fakelease.Node, rng *rand.Rand, answerDelay time.Duration) {
	switch rng.IntN(10) {
	case 0:
		n.Kill()
	case 1, 2, 3:
		heal(n, answerDelay)
	case 4:
		n.Inject(fakelease.Fault{Status: 503, RetryAfter: []string{"0", "0", "1"}[rng.IntN(3)]})
	case 5:
		n.Inject(fakelease.Fault{Status: 504, Apply: rng.IntN(2) == 0})
	case 6:
		n.Inject(fakelease.Fault{Reset: true, Apply: rng.IntN(2) == 0})
	case 7:
		n.SetLatency(time.Duration(rng.IntN(30))*time.Millisecond, time.Duration(rng.IntN(30))*time.Millisecond)
	case 8:
		n.Inject(fakelease.Fault{DelayIn: time.Duration(rng.IntN(200)) * time.Millisecond})
	}
}

// TestSessionSafetyUnderFaults runs the scenario with the real Session
// on clocks within the drift margin, with one holder and with eight
// holders batching through one client; it must hold every property, and
// must have exercised renewals, losses and (batching) batched renewals.
func TestSessionSafetyUnderFaults(t *testing.T) {
	seed := testseed.Get(t)
	batched := func(sc scenario) scenario {
		sc.batching, sc.holders, sc.answerDelay, sc.queueing = true, 8, 30*time.Millisecond, true
		return sc
	}
	for i, sc := range []scenario{
		{rate: 1}, {rate: 1.005}, {rate: 0.99},
		{rate: 1, variant: stalledWatchdog}, // timers late: Current alone must refuse in time
		batched(scenario{rate: 1}), batched(scenario{rate: 0.99}),
	} {
		sc.seed, sc.duration = seed+uint64(i), 20*time.Second
		res := runScenario(t, sc)
		what := fmt.Sprintf("rate %v, stalled watchdog %v, %d holders, batching %v", sc.rate, sc.variant == stalledWatchdog, max(sc.holders, 1), sc.batching)
		t.Logf("%s: %d sessions, %d renewals (%d batched), %d losses", what, res.sessions, res.renewals, res.batched, res.losses)
		if len(res.violations) > 0 {
			t.Fatalf("%s (seed %d): %d violations, first: %v", what, sc.seed, len(res.violations), res.violations)
		}
		if res.renewals < 10 || res.losses < 1 || res.sessions < 2 || sc.batching && res.batched < 10 {
			t.Fatalf("%s: %d sessions, %d renewals (%d batched), %d losses: the scenario did not exercise renewals, losses and batches",
				what, res.sessions, res.renewals, res.batched, res.losses)
		}
	}
}

// TestSessionSafetyNegativeControls: each broken variant, and a clock
// outside the drift margin, must be caught by the property it breaks,
// alone and batching.
func TestSessionSafetyNegativeControls(t *testing.T) {
	seed := testseed.Get(t)
	cases := []struct {
		name     string
		variant  sessionVariant
		rate     float64
		doneOnly bool
		prefix   string
	}{
		{"loss signalled after the end", lossAfterEnd, 1, true, "loss:"},
		{"loss signalled after the end, asked by Current", lossAfterEnd, 1, false, "current:"},
		{"expiry counted from the answer's arrival", expiryFromReceipt, 1, false, "belief:"},
		{"cluster clock 5% fast against a 1% margin", sessionCorrect, 1.05, false, "belief:"},
		{"timers late, Done alone believed", stalledWatchdog, 1, true, "held:"},
	}
	for _, tc := range cases {
		for _, batching := range []bool{false, true} {
			sc := scenario{seed: seed, variant: tc.variant, rate: tc.rate, doneOnly: tc.doneOnly, duration: 12 * time.Second}
			if batching {
				sc.batching, sc.holders, sc.answerDelay, sc.queueing = true, 8, 30*time.Millisecond, true
			}
			res := runScenario(t, sc)
			caught := 0
			for _, v := range res.violations {
				if strings.HasPrefix(v, tc.prefix) {
					caught++
				}
			}
			if caught == 0 {
				t.Errorf("%s (batching %v): not caught (%d violations: %v)", tc.name, batching, len(res.violations), res.violations)
			} else {
				t.Logf("%s (batching %v): caught, e.g. %s", tc.name, batching, res.violations[0])
			}
		}
	}
}
