package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/fakelease"
)

// grantAll grants chunk ch_k to cs_k for k < n, all at once, and returns
// each call's lease and error.
func grantAll(ctx context.Context, c *Client, n int) ([]Lease, []error) {
	leases, errs := make([]Lease, n), make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			leases[k], errs[k] = c.Grant(ctx, fmt.Sprintf("ch_%d", k), fmt.Sprintf("cs%d", k), 5000)
		})
	}
	wg.Wait()
	return leases, errs
}

// batchesOf lists the batch requests member node received and the calls
// it received alone.
func batchesOf(f *fakelease.Cluster, node string) (batches []fakelease.Call, alone int) {
	for _, call := range f.Calls() {
		switch {
		case call.Node != node:
		case call.Op == "batch":
			batches = append(batches, call)
		case !call.Batched:
			alone++
		}
	}
	return batches, alone
}

// TestBatchingQueuesBehindBusyRequests: with a member slow to answer, the
// first batchesInFlight calls go alone and the 38 that find them busy go
// together in one batch as soon as one comes back; each call gets its
// own chunk's answer (its server, the token the member gave it).
func TestBatchingQueuesBehindBusyRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		leases, errs := grantAll(context.Background(), c, 40)
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() || l.Token != f.Holder(l.Chunk).Token || l.Primary != fmt.Sprintf("cs%d", k) {
				t.Fatalf("grant %d: %+v %v; the member holds %+v", k, l, errs[k], f.Holder(l.Chunk))
			}
		}
		batches, alone := batchesOf(f, "n1")
		if alone != batchesInFlight || len(batches) != 1 || batches[0].Calls != 40-batchesInFlight || batches[0].Status != 200 {
			t.Fatalf("n1 got %d calls alone and batches %+v; want %d alone and one batch of %d", alone, batches, batchesInFlight, 40-batchesInFlight)
		}
	})
}

// TestBatchingWithoutTheEndpoint: a member without /v1/batch (404) gets
// the queued calls alone, and every later call alone too.
func TestBatchingWithoutTheEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		for round := range 2 {
			leases, errs := grantAll(context.Background(), c, 20)
			for k, l := range leases {
				if errs[k] != nil || !l.Granted() {
					t.Fatalf("round %d, grant %d: %+v %v", round, k, l, errs[k])
				}
			}
		}
		batches, alone := batchesOf(f, "n1")
		if len(batches) != 1 || batches[0].Status != 404 || alone != 40 {
			t.Fatalf("n1 got batches %+v and %d calls alone; want one 404, then all 40 calls alone", batches, alone)
		}
	})
}

// TestBatchCutOffFailsOverEachCall: a batch the member performed and then
// cut off is unknown for each of its calls, which fail over to the next
// member as they would alone; every grant ends granted to its own server
// with the token of the member that answered.
func TestBatchCutOffFailsOverEachCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		f.Node(0).Inject(fakelease.Fault{Op: "batch", Reset: true, Apply: true})
		leases, errs := grantAll(context.Background(), c, 12)
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() || l.Token != f.Holder(l.Chunk).Token {
				t.Fatalf("grant %d: %+v %v; the member holds %+v", k, l, errs[k], f.Holder(l.Chunk))
			}
		}
		batches, _ := batchesOf(f, "n1")
		if len(batches) != 1 || batches[0].Status != 0 {
			t.Fatalf("n1's batches %+v, want one, cut off", batches)
		}
		moved := map[string]bool{}
		for _, call := range f.CallsOf("lease_grant") {
			if call.Node != "n1" {
				moved[call.Chunk] = true
			}
		}
		if len(moved) != 12-batchesInFlight {
			t.Fatalf("%d chunks were granted again at another member, want the %d of the cut batch", len(moved), 12-batchesInFlight)
		}
	})
}

// TestQueuedPastItsDeadlineWasNotSent: a call whose attempt ends while it
// waits in the queue never reached a member: with one attempt it fails
// as unavailable, "not sent", never unknown, and no member saw it; the
// calls that went out and met the same deadline are unknown.
func TestQueuedPastItsDeadlineWasNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true, MaxAttempts: 1})
		f.Node(0).SetLatency(200*time.Millisecond, 0)
		// The first calls go out with 100 ms (attempts of 50 ms); the last
		// queues behind them with 20 ms (an attempt of 10 ms), so it is
		// still waiting when its attempt ends.
		slow, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		errs := make([]error, batchesInFlight+1)
		var wg sync.WaitGroup
		for k := range batchesInFlight {
			wg.Go(func() { _, errs[k] = c.Grant(slow, fmt.Sprintf("ch_%d", k), "cs1", 5000) })
		}
		synctest.Wait()
		quick, cancelQuick := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancelQuick()
		_, errs[batchesInFlight] = c.Grant(quick, "ch_queued", "cs1", 5000)
		wg.Wait()
		unknown, notSent := 0, 0
		for _, err := range errs {
			switch {
			case errors.Is(err, ErrUnknown):
				unknown++
			case errors.Is(err, ErrUnavailable) && IsRefused(err):
				notSent++
			default:
				t.Fatalf("error %v, want unknown or not sent", err)
			}
		}
		if !errors.Is(errs[batchesInFlight], ErrUnavailable) {
			t.Fatalf("the queued call: %v, want not sent", errs[batchesInFlight])
		}
		time.Sleep(time.Second) // the member finishes what it received
		if unknown != batchesInFlight || notSent != 1 || len(f.CallsOf("lease_grant")) != batchesInFlight || len(f.CallsOf("batch")) != 0 {
			t.Fatalf("%d unknown, %d not sent, members saw %d grants and %d batches; want %d, 1, %d, 0",
				unknown, notSent, len(f.CallsOf("lease_grant")), len(f.CallsOf("batch")), batchesInFlight, batchesInFlight)
		}
	})
}

// TestImpatientCallLeavesItsBatch: a call whose attempt ends after its
// batch went out leaves it alone, unknown, and its mates wait on for
// their answers from the same batch instead of being cut short.
func TestImpatientCallLeavesItsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true, MaxAttempts: 1})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		var wg sync.WaitGroup
		for k := range batchesInFlight {
			wg.Go(func() { c.Grant(ctxFor(t, time.Second), fmt.Sprintf("ch_alone_%d", k), "cs1", 5000) })
		}
		synctest.Wait()
		// The batch goes out at 20 ms and is answered at 40 ms; the
		// impatient call's attempt (half of its 50 ms) ends at 25 ms.
		const mates = 5
		leases, errs := make([]Lease, mates), make([]error, mates)
		for k := range mates {
			wg.Go(func() { leases[k], errs[k] = c.Grant(ctxFor(t, time.Second), fmt.Sprintf("ch_%d", k), "cs1", 5000) })
		}
		var impatient error
		wg.Go(func() { _, impatient = c.Grant(ctxFor(t, 50*time.Millisecond), "ch_impatient", "cs1", 5000) })
		wg.Wait()
		if !errors.Is(impatient, ErrUnknown) {
			t.Fatalf("the impatient call: %v, want unknown (its batch had gone out)", impatient)
		}
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() || l.Token != f.Holder(l.Chunk).Token {
				t.Fatalf("mate %d: %+v %v; the member holds %+v", k, l, errs[k], f.Holder(l.Chunk))
			}
		}
		batches, _ := batchesOf(f, "n1")
		if len(batches) != 1 || batches[0].Status != 200 || batches[0].Calls != mates+1 {
			t.Fatalf("n1's batches %+v, want one of %d calls, answered", batches, mates+1)
		}
		for _, call := range f.CallsOf("lease_grant") {
			if call.Node != "n1" {
				t.Fatalf("%s was granted again at %s: its batch was cut short", call.Chunk, call.Node)
			}
		}
	})
}

// TestBatchesStayWithinTheBodyLimit: calls with long chunk names go in
// batches of at most maxBatchBytes of bodies, so no batch meets the
// member's 64 KiB limit (a 413 would refuse calls that alone succeed).
func TestBatchesStayWithinTheBodyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		long := strings.Repeat("x", 2000)
		var wg sync.WaitGroup
		errs := make([]error, 60)
		for k := range errs {
			wg.Go(func() { _, errs[k] = c.Check(context.Background(), fmt.Sprintf("%s_%d", long, k)) })
		}
		wg.Wait()
		for k, err := range errs {
			if err != nil {
				t.Fatalf("check %d: %v", k, err)
			}
		}
		batches, alone := batchesOf(f, "n1")
		calls := alone
		for _, b := range batches {
			calls += b.Calls
			if b.Status != 200 || b.Calls > maxBatchBytes/2000 {
				t.Fatalf("batch %+v: more than %d calls of 2 KB", b, maxBatchBytes/2000)
			}
		}
		if calls != len(errs) || len(batches) < 2 {
			t.Fatalf("%d calls reached n1 in %d batches, want all %d in several", calls, len(batches), len(errs))
		}
	})
}

// TestBatchThatNeverWentOutWasNotSent: a member whose dial hangs (a
// black-holed address) never receives anything. The calls sent alone end
// "not sent" at their deadline, and so does the call taken into a batch
// whose dial hangs too: the batch ends with its call's attempt, and the
// call learns from it that nothing went out.
func TestBatchThatNeverWentOutWasNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakelease.Start(t, fakelease.Options{Network: fakelease.Pipe, Batch: true, Nodes: 1})
		hang := func(ctx context.Context, _, _ string) (net.Conn, error) {
			select { // no answer until the connect times out
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Second):
				return nil, errors.New("connect: timed out")
			}
		}
		c, err := New(Config{Endpoints: f.Endpoints(), DialContext: hang, Batching: true, MaxAttempts: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, batchesInFlight+1)
		var wg sync.WaitGroup
		for k := range batchesInFlight {
			wg.Go(func() { _, errs[k] = c.Grant(ctxFor(t, 100*time.Millisecond), "ch_alone", "cs1", 5000) })
		}
		synctest.Wait()
		wg.Go(func() { _, errs[batchesInFlight] = c.Grant(ctxFor(t, time.Second), "ch_batched", "cs1", 5000) })
		wg.Wait()
		for k, err := range errs {
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not sent") {
				t.Errorf("call %d never reached the member: %v, want unavailable, not sent", k, err)
			}
		}
		if n := len(f.Calls()); n != 0 {
			t.Fatalf("the member logged %d requests", n)
		}
		// The transport's dials outlive the calls that started them; the
		// bubble ends only after their connects have timed out.
		time.Sleep(5 * time.Second)
	})
}

// TestBatchCutAfterItWentOutIsUnknown: a batch that reached its member
// and then lost its answer (the connection cut before or after the member
// acted, or the answer broken off halfway) may have taken effect for
// every one of its calls: each is unknown, never "not sent", exactly as
// a call sent alone whose answer was lost. With one attempt each, the
// calls of the cut batch end unknown and the others succeed.
func TestBatchCutAfterItWentOutIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fakelease.Fault
	}{
		{"cut before the member acted", fakelease.Fault{Op: "batch", Reset: true}},
		{"cut after the member acted", fakelease.Fault{Op: "batch", Reset: true, Apply: true}},
		{"answer broken off", fakelease.Fault{Op: "batch", BreakOff: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true, Nodes: 1},
					Config{Batching: true, MaxAttempts: 1})
				f.Node(0).SetLatency(20*time.Millisecond, 0)
				f.Node(0).Inject(tc.fault)
				_, errs := grantAll(context.Background(), c, 20)
				unknown := 0
				for k, err := range errs {
					switch {
					case err == nil:
					case IsUnknown(err) && !strings.Contains(err.Error(), "not sent"):
						unknown++
					default:
						t.Errorf("grant %d: %v; want granted, or unknown (its batch went out)", k, err)
					}
				}
				batches, _ := batchesOf(f, "n1")
				if len(batches) == 0 || unknown != batches[0].Calls {
					t.Fatalf("%d calls unknown; the member's batches %+v: want every call of the first (cut) batch unknown", unknown, batches)
				}
			})
		})
	}
}
