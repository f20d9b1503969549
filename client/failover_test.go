package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/fakelease"
)

// TestFailoverOrderRemembers: a dead member is skipped for the next one
// in order, and the member that answered is where the next call starts;
// over real TCP (connection refused, then a reset mid-request).
func TestFailoverOrderRemembers(t *testing.T) {
	f, c := fakeClient(t, fakelease.Options{}, Config{})
	ctx := ctxFor(t, 10*time.Second)
	f.Node(0).Kill()
	if _, err := c.Check(ctx, "ch_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Check(ctx, "ch_1"); err != nil {
		t.Fatal(err)
	}
	if got := nodesOf(f, "lease_check"); !slices.Equal(got, []string{"n2", "n2"}) {
		t.Fatalf("checks reached %v, want n2 twice (n1 refused, then n2 remembered)", got)
	}
	f.Node(1).Inject(fakelease.Fault{Reset: true})
	if _, err := c.Check(ctx, "ch_1"); err != nil {
		t.Fatal(err)
	}
	if got := nodesOf(f, "lease_check"); !slices.Equal(got, []string{"n2", "n2", "n2", "n3"}) {
		t.Fatalf("checks reached %v, want n2 (reset) then n3", got)
	}
	if err := f.Node(0).Restart(); err != nil {
		t.Fatal(err)
	}
	f.Node(2).Kill()
	if _, err := c.Check(ctx, "ch_1"); err != nil {
		t.Fatal(err)
	}
	if got := nodesOf(f, "lease_check"); got[len(got)-1] != "n1" {
		t.Fatalf("after n3 died the check reached %v, want n1 (wrapping around, n2 cooling down)", got)
	}
}

// TestNothingSentIsUnavailable: every member refusing connections is a
// definite failure ("not sent"), bounded by MaxAttempts.
func TestNothingSentIsUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe}, Config{MaxAttempts: 5})
		for i := range 3 {
			f.Node(i).Kill()
		}
		start := time.Now()
		_, err := c.Grant(context.Background(), "ch_1", "cs1", 1000)
		e := asError(t, err)
		if !errors.Is(err, ErrUnavailable) || !IsRefused(err) || e.Attempts != 5 || !strings.Contains(err.Error(), "not sent") {
			t.Fatalf("got %v (attempts %d), want unavailable after 5 attempts, not sent", err, e.Attempts)
		}
		// Three refusals, a wait for the first member back from its 50 ms
		// (+-20%) backoff, a refusal, and the next member is back already.
		if el := time.Since(start); el < 40*time.Millisecond || el > 60*time.Millisecond {
			t.Fatalf("took %v: the backoff after the first round should be about 50 ms", el)
		}
	})
}

// TestUnknownIsNeverNotGranted: a grant that met a 504 or a broken
// connection anywhere, and no success, is unknown, whatever the other
// members said; a success at another member makes it a success.
func TestUnknownIsNeverNotGranted(t *testing.T) {
	cases := []struct {
		name    string
		faults  [3][]fakelease.Fault
		unknown bool
		granted bool
	}{
		{"504 then success", [3][]fakelease.Fault{{{Status: 504}}}, false, true},
		{"applied reset then success", [3][]fakelease.Fault{{{Reset: true, Apply: true}}}, false, true},
		{"504 then 503s", [3][]fakelease.Fault{{{Status: 504}}, {{Status: 503}, {Status: 503}}, {{Status: 503}, {Status: 503}}}, true, false},
		{"503s then 504", [3][]fakelease.Fault{{{Status: 503}, {Status: 503}}, {{Status: 503}, {Status: 503}}, {{Status: 504}, {Status: 504}}}, true, false},
		{"applied 504 everywhere", [3][]fakelease.Fault{{{Status: 504, Apply: true}}, {{Status: 504}}, {{Status: 504}}}, true, true},
		{"503s only", [3][]fakelease.Fault{{{Status: 503}}, {{Status: 503}}, {{Status: 503}}}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe}, Config{MaxAttempts: 3})
				for i, fs := range tc.faults {
					for _, ft := range fs {
						ft.Op, ft.RetryAfter = "lease_grant", "0"
						f.Node(i).Inject(ft)
					}
				}
				l, err := c.Grant(context.Background(), "ch_1", "cs1", 1000)
				held := f.Holder("ch_1")
				switch {
				case tc.unknown && !IsUnknown(err):
					t.Fatalf("got %+v, %v; want an unknown outcome (never \"not granted\")", l, err)
				case !tc.unknown && tc.granted && (err != nil || !l.Granted() || l.Token != held.Token):
					t.Fatalf("got %+v, %v; want granted with the model's token %d", l, err, held.Token)
				case !tc.unknown && !tc.granted && !errors.Is(err, ErrUnavailable):
					t.Fatalf("got %+v, %v; want unavailable", l, err)
				case held.Live != tc.granted:
					t.Fatalf("the model holds %+v; granted %v expected", held, tc.granted)
				}
			})
		})
	}
}

// TestRetryAfterHonoured: a 503's Retry-After keeps calls away from that
// member; with no other member the call waits for it when the deadline
// allows, and fails at once (unavailable, one request) when it does not.
func TestRetryAfterHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Nodes: 1, Network: fakelease.Pipe}, Config{})
		f.Node(0).Inject(fakelease.Fault{Status: 503, RetryAfter: "1"})
		start := time.Now()
		if _, err := c.Check(context.Background(), "ch_1"); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el != time.Second {
			t.Fatalf("the check took %v; want exactly the Retry-After, 1 s", el)
		}
		f.Node(0).Inject(fakelease.Fault{Status: 503, RetryAfter: "1"})
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start = time.Now()
		_, err := c.Check(ctx, "ch_1")
		if !errors.Is(err, ErrUnavailable) || time.Since(start) != 0 || len(f.CallsOf("lease_check")) != 3 {
			t.Fatalf("got %v after %v, %d checks; want unavailable at once, without waiting past the deadline", err, time.Since(start), len(f.CallsOf("lease_check")))
		}
	})
}

// TestRetryAfterCapped: a Retry-After longer than MaxRetryAfter waits
// only MaxRetryAfter.
func TestRetryAfterCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Nodes: 1, Network: fakelease.Pipe}, Config{MaxRetryAfter: 300 * time.Millisecond})
		f.Node(0).Inject(fakelease.Fault{Status: 503, RetryAfter: "3600"})
		start := time.Now()
		if _, err := c.Check(context.Background(), "ch_1"); err != nil || time.Since(start) != 300*time.Millisecond {
			t.Fatalf("got %v after %v; want success after the 300 ms cap", err, time.Since(start))
		}
	})
}

// TestSlowMemberLeavesTimeForAnother: with a deadline, a member that
// does not answer gets half the time left, and the next member answers
// within the deadline; the stuck attempt counts as unknown only if
// nothing succeeds.
func TestSlowMemberLeavesTimeForAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe}, Config{})
		f.Node(0).Inject(fakelease.Fault{DelayIn: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		l, err := c.Grant(ctx, "ch_1", "cs1", 1000)
		if err != nil || !l.Granted() || time.Since(start) != 500*time.Millisecond || l.Sent != start.Add(500*time.Millisecond) {
			t.Fatalf("got %+v, %v after %v; want granted by n2 after n1's half of the second", l, err, time.Since(start))
		}
		// Every member stuck: the deadline ends the call, unknown (sent).
		for i := range 3 {
			f.Node(i).SetLatency(time.Hour, 0)
		}
		ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		start = time.Now()
		_, err = c.Grant(ctx2, "ch_1", "cs1", 1000)
		if !IsUnknown(err) || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") || time.Since(start) > time.Second {
			t.Fatalf("got %v after %v; want unknown by the deadline; %+v", err, time.Since(start), f.Calls())
		}
	})
}

// TestAttemptTimeoutWithoutDeadline: without a context deadline, a stuck
// member is given up after AttemptTimeout.
func TestAttemptTimeoutWithoutDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe}, Config{})
		f.Node(0).Inject(fakelease.Fault{DelayIn: time.Hour})
		start := time.Now()
		if _, err := c.Check(context.Background(), "ch_1"); err != nil || time.Since(start) != 3*time.Second {
			t.Fatalf("got %v after %v; want success after the 3 s attempt timeout", err, time.Since(start))
		}
	})
}

// TestCallerCancelStops: cancelling the caller's context ends the call
// at once.
func TestCallerCancelStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe}, Config{})
		for i := range 3 {
			f.Node(i).Inject(fakelease.Fault{DelayIn: time.Hour})
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Renew(ctx, "ch_1", "cs1", 1000)
		if !IsUnknown(err) || !errors.Is(err, context.Canceled) || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("got %v after %v; want unknown (sent, then cancelled) at 100 ms", err, time.Since(start))
		}
	})
}

// TestConcurrentFailuresCountOnce: calls that fail together at a member
// (five timeouts of attempts in flight at once) are one failure for its
// backoff, so the next call waits one base backoff, not the cap; failures
// one after another still count one each.
func TestConcurrentFailuresCountOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Nodes: 1}, Config{MaxAttempts: 1})
		f.Node(0).SetLatency(30*time.Millisecond, 0)
		ep := c.endpoints[0]
		// Attempts of 25 ms (half of 50) against answers after 30 ms.
		impatient := func(chunk string) {
			if _, err := c.Grant(ctxFor(t, 50*time.Millisecond), chunk, "cs1", 5000); !errors.Is(err, ErrUnknown) {
				t.Errorf("grant of %s: %v, want unknown (its attempt timed out)", chunk, err)
			}
		}
		var wg sync.WaitGroup
		for k := range 5 {
			wg.Go(func() { impatient(fmt.Sprintf("ch_%d", k)) })
		}
		wg.Wait()
		if n := ep.fails.Load(); n != 1 {
			t.Fatalf("five concurrent timeouts counted as %d failures, want 1", n)
		}
		start := time.Now()
		if _, err := c.Grant(context.Background(), "next", "cs1", 5000); err != nil {
			t.Fatal(err)
		}
		// At most the first backoff (50 ms, +20 % jitter) and a round trip.
		if took := time.Since(start); took > 60*time.Millisecond+30*time.Millisecond {
			t.Fatalf("the next call took %v: the member was cooled as if for several failures in a row", took)
		}
		for k := range 3 {
			impatient(fmt.Sprintf("seq_%d", k))
		}
		if n := ep.fails.Load(); n != 3 {
			t.Fatalf("three timeouts one after another counted as %d failures, want 3", n)
		}
	})
}

// TestBackoffDoublesWithConsecutiveFailures: a member that fails again and
// again is kept away for about 1, 2, 4, 8 times the base backoff (50 ms,
// jittered by 20%), so a call against a lone failing member (503 without
// Retry-After) comes back at doubling intervals, with batching on.
func TestBackoffDoublesWithConsecutiveFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const failures = 4
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true, Nodes: 1}, Config{Batching: true, MaxAttempts: failures + 1})
		for range failures {
			f.Node(0).Inject(fakelease.Fault{Op: "lease_grant", Status: 503, RetryAfter: "0"})
		}
		if l, err := c.Grant(context.Background(), "ch_1", "cs1", 5000); err != nil || !l.Granted() {
			t.Fatalf("grant after %d failures: %+v, %v", failures, l, err)
		}
		calls := f.CallsOf("lease_grant")
		if len(calls) != failures+1 {
			t.Fatalf("the member got %d attempts, want %d", len(calls), failures+1)
		}
		for k := 1; k < len(calls); k++ {
			gap := calls[k].Received.Sub(calls[k-1].Received)
			base := 50 * time.Millisecond << (k - 1) // the documented base, doubled per failure
			if gap < base*8/10 || gap > base*12/10 {
				t.Errorf("attempt %d came %v after the one before; after %d failures in a row the backoff is %v +-20%%", k+1, gap, k, base)
			}
		}
	})
}
