package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
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

// writeGate stalls a call between taking a connection and writing its
// request, as a client short of CPU stalls there: calls made meanwhile
// queue behind the one being written (batch.go). The stall is a hook of
// the call's own context (httptrace's GotConn), which the client's
// transport calls on the call's goroutine before it writes.
type writeGate struct{ opened chan struct{} }

// stall returns ctx with the stalling hook, and shuts the gate.
func (g *writeGate) stall(ctx context.Context) context.Context {
	g.opened = make(chan struct{})
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { <-g.opened }})
}

func (g *writeGate) open() { close(g.opened) }

// warmClient is fakeClient with one connection to member n1 open and
// idle (a check of chunk "warm"), so that the next call takes it without
// a dial.
func warmClient(t *testing.T, opts fakelease.Options, cfg Config) (*fakelease.Cluster, *Client) {
	t.Helper()
	f, c := fakeClient(t, opts, cfg)
	if _, err := c.Check(context.Background(), "warm"); err != nil {
		t.Fatal(err)
	}
	synctest.Wait() // the transport has put the connection back, idle
	return f, c
}

// whileWriting makes the call first with a context that stalls it before
// its request is written, starts the others once it is stuck, waits
// until they are all blocked, and lets first go on. It returns when
// every call has returned.
func whileWriting(first func(ctx context.Context), others ...func(ctx context.Context)) {
	var wg sync.WaitGroup
	var g writeGate
	ctx := g.stall(context.Background())
	wg.Go(func() { first(ctx) })
	synctest.Wait()
	for _, o := range others {
		wg.Go(func() { o(context.Background()) })
	}
	synctest.Wait()
	g.open()
	wg.Wait()
}

// grants are n calls granting ch_<from+k> to cs<from+k> within their
// context, each storing its lease and error.
func grants(from, n int, c *Client, leases []Lease, errs []error) []func(ctx context.Context) {
	var fs []func(ctx context.Context)
	for k := from; k < from+n; k++ {
		fs = append(fs, func(ctx context.Context) {
			leases[k], errs[k] = c.Grant(ctx, fmt.Sprintf("ch_%d", k), fmt.Sprintf("cs%d", k), 5000)
		})
	}
	return fs
}

// TestBatchingQueuesWhileARequestIsWritten: the 39 calls made while
// another call's request to the member is being written queue, and go
// together in one batch once it is written; each call gets its own
// chunk's answer (its server, the token the member gave it).
func TestBatchingQueuesWhileARequestIsWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := warmClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		leases, errs := make([]Lease, 40), make([]error, 40)
		calls := grants(0, 40, c, leases, errs)
		whileWriting(calls[0], calls[1:]...)
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() || l.Token != f.Holder(l.Chunk).Token || l.Primary != fmt.Sprintf("cs%d", k) {
				t.Fatalf("grant %d: %+v %v; the member holds %+v", k, l, errs[k], f.Holder(l.Chunk))
			}
		}
		batches, alone := batchesOf(f, "n1")
		if alone != 2 || len(batches) != 1 || batches[0].Calls != 39 || batches[0].Status != 200 {
			t.Fatalf("n1 got %d calls alone and batches %+v; want 2 alone (the warm check, the first grant) and one batch of 39", alone, batches)
		}
	})
}

// TestBatchingHasNoCapInFlight: calls made while no request is being
// written go out at once, alone, however many are in flight: 40 calls
// made one after another, each while the member still holds all the
// earlier ones (it answers after 20 ms), reach it as 40 requests.
func TestBatchingHasNoCapInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		leases, errs := make([]Lease, 40), make([]error, 40)
		var wg sync.WaitGroup
		start := time.Now()
		for _, call := range grants(0, 40, c, leases, errs) {
			wg.Go(func() { call(context.Background()) })
			synctest.Wait() // its request is written and waits for the member
		}
		wg.Wait()
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() {
				t.Fatalf("grant %d: %+v %v", k, l, errs[k])
			}
		}
		batches, alone := batchesOf(f, "n1")
		if alone != 40 || len(batches) != 0 {
			t.Fatalf("n1 got %d calls alone and batches %+v; want all 40 alone", alone, batches)
		}
		if took := time.Since(start); took != 20*time.Millisecond {
			t.Fatalf("the 40 grants took %v, want the member's 20 ms: none waited for another", took)
		}
	})
}

// TestBatchingWithoutTheEndpoint: a member without /v1/batch (404) gets
// the queued calls alone, and every later call alone too.
func TestBatchingWithoutTheEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := warmClient(t, fakelease.Options{Network: fakelease.Pipe}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		leases, errs := make([]Lease, 40), make([]error, 40)
		calls := grants(0, 20, c, leases, errs)
		whileWriting(calls[0], calls[1:]...)
		calls = grants(20, 20, c, leases, errs)
		whileWriting(calls[0], calls[1:]...)
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() {
				t.Fatalf("grant %d: %+v %v", k, l, errs[k])
			}
		}
		batches, alone := batchesOf(f, "n1")
		if len(batches) != 1 || batches[0].Status != 404 || alone != 41 {
			t.Fatalf("n1 got batches %+v and %d calls alone; want one 404, then all 40 grants and the warm check alone", batches, alone)
		}
	})
}

// TestBatchCutOffFailsOverEachCall: a batch the member performed and then
// cut off is unknown for each of its calls, which fail over to the next
// member as they would alone; every grant ends granted to its own server
// with the token of the member that answered.
func TestBatchCutOffFailsOverEachCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := warmClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		f.Node(0).Inject(fakelease.Fault{Op: "batch", Reset: true, Apply: true})
		leases, errs := make([]Lease, 12), make([]error, 12)
		calls := grants(0, 12, c, leases, errs)
		whileWriting(calls[0], calls[1:]...)
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() || l.Token != f.Holder(l.Chunk).Token {
				t.Fatalf("grant %d: %+v %v; the member holds %+v", k, l, errs[k], f.Holder(l.Chunk))
			}
		}
		batches, _ := batchesOf(f, "n1")
		if len(batches) != 1 || batches[0].Status != 0 || batches[0].Calls != 11 {
			t.Fatalf("n1's batches %+v, want one of 11 calls, cut off", batches)
		}
		moved := map[string]bool{}
		for _, call := range f.CallsOf("lease_grant") {
			if call.Node != "n1" {
				moved[call.Chunk] = true
			}
		}
		if len(moved) != 11 {
			t.Fatalf("%d chunks were granted again at another member, want the 11 of the cut batch", len(moved))
		}
	})
}

// TestQueuedPastItsDeadlineWasNotSent: a call whose attempt ends while it
// waits in the queue never reached a member: with one attempt it fails
// as unavailable, "not sent", never unknown, and no member saw it; the
// call that went out and met its deadline is unknown.
func TestQueuedPastItsDeadlineWasNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := warmClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true, MaxAttempts: 1})
		f.Node(0).SetLatency(200*time.Millisecond, 0)
		// The first call goes out with 100 ms (an attempt of 50 ms); the
		// second queues behind its write with 20 ms (an attempt of 10 ms),
		// and its attempt ends before the gate opens.
		var first, queued error
		var wg sync.WaitGroup
		var g writeGate
		stalled := g.stall(ctxFor(t, 100*time.Millisecond))
		wg.Go(func() { _, first = c.Grant(stalled, "ch_first", "cs1", 5000) })
		synctest.Wait()
		_, queued = c.Grant(ctxFor(t, 20*time.Millisecond), "ch_queued", "cs1", 5000)
		g.open()
		wg.Wait()
		if !errors.Is(first, ErrUnknown) {
			t.Fatalf("the call that went out: %v, want unknown", first)
		}
		if !errors.Is(queued, ErrUnavailable) || !IsRefused(queued) || !strings.Contains(queued.Error(), "not sent") {
			t.Fatalf("the queued call: %v, want not sent", queued)
		}
		time.Sleep(time.Second) // the member finishes what it received
		// (The member logs ch_first without its fields: the client left
		// before the member read them.)
		if grants := f.CallsOf("lease_grant"); len(grants) != 1 || len(f.CallsOf("batch")) != 0 {
			t.Fatalf("members saw grants %+v and %d batches; want ch_first's alone", grants, len(f.CallsOf("batch")))
		}
	})
}

// TestImpatientCallLeavesItsBatch: a call whose attempt ends after its
// batch went out leaves it alone, unknown, and its mates wait on for
// their answers from the same batch instead of being cut short.
func TestImpatientCallLeavesItsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := warmClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true, MaxAttempts: 1})
		f.Node(0).SetLatency(40*time.Millisecond, 0)
		// The batch goes out at once when the first call goes on and is
		// answered at 40 ms; the impatient call's attempt (half of its 50
		// ms) ends at 25 ms.
		const mates = 5
		leases, errs := make([]Lease, mates), make([]error, mates)
		var impatient error
		others := grants(0, mates, c, leases, errs)
		others = append(others, func(context.Context) {
			_, impatient = c.Grant(ctxFor(t, 50*time.Millisecond), "ch_impatient", "cs1", 5000)
		})
		whileWriting(func(ctx context.Context) { c.Grant(ctx, "ch_alone", "cs1", 5000) }, others...)
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
		f, c := warmClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		f.Node(0).SetLatency(20*time.Millisecond, 0)
		long := strings.Repeat("x", 2000)
		errs := make([]error, 60)
		var calls []func(context.Context)
		for k := range errs {
			calls = append(calls, func(ctx context.Context) { _, errs[k] = c.Check(ctx, fmt.Sprintf("%s_%d", long, k)) })
		}
		whileWriting(calls[0], calls[1:]...)
		for k, err := range errs {
			if err != nil {
				t.Fatalf("check %d: %v", k, err)
			}
		}
		batches, alone := batchesOf(f, "n1")
		calls2 := alone
		for _, b := range batches {
			calls2 += b.Calls
			if b.Status != 200 || b.Calls > maxBatchBytes/2000 {
				t.Fatalf("batch %+v: more than %d calls of 2 KB", b, maxBatchBytes/2000)
			}
		}
		if calls2 != len(errs)+1 || len(batches) < 2 {
			t.Fatalf("%d calls reached n1 in %d batches, want all %d and the warm check, in several", calls2, len(batches), len(errs))
		}
	})
}

// TestBatchThatNeverWentOutWasNotSent: a member whose dials hang after
// the first connection (a black-holed address) receives nothing more.
// The call that stalls in writing on the one connection goes out and is
// unknown at its deadline; the call queued behind it goes in a batch
// whose dial hangs: the batch ends with its call's attempt, and the call
// learns from it that nothing went out; a later call alone whose dial
// hangs is not sent either. And the queue is not held while a dial
// hangs: that later call's dial does not keep a fourth call from going.
func TestBatchThatNeverWentOutWasNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakelease.Start(t, fakelease.Options{Network: fakelease.Pipe, Batch: true, Nodes: 1})
		f.Node(0).SetLatency(time.Second, 0)
		var dials atomic.Int32
		hang := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				return f.DialContext()(ctx, network, addr)
			}
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
		defer c.Close()
		if _, err := c.Check(ctxFor(t, 5*time.Second), "warm"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		var first, batched error
		whileWriting(func(ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			_, first = c.Grant(ctx, "ch_first", "cs1", 5000)
		}, func(context.Context) { _, batched = c.Grant(ctxFor(t, time.Second), "ch_batched", "cs1", 5000) })
		if !errors.Is(first, ErrUnknown) {
			t.Errorf("the call written on the one connection: %v, want unknown", first)
		}
		if !errors.Is(batched, ErrUnavailable) || !strings.Contains(batched.Error(), "not sent") {
			t.Errorf("the batched call never reached the member: %v, want unavailable, not sent", batched)
		}
		var lone, next error
		var wg sync.WaitGroup
		wg.Go(func() { _, lone = c.Grant(ctxFor(t, 100*time.Millisecond), "ch_lone", "cs1", 5000) })
		synctest.Wait() // its dial hangs
		wg.Go(func() { _, next = c.Check(ctxFor(t, 100*time.Millisecond), "ch_next") })
		wg.Wait()
		if !errors.Is(lone, ErrUnavailable) || !strings.Contains(lone.Error(), "not sent") {
			t.Errorf("the lone call never reached the member: %v, want unavailable, not sent", lone)
		}
		if !errors.Is(next, ErrUnavailable) || !strings.Contains(next.Error(), "not sent") {
			t.Errorf("the call after it: %v, want unavailable, not sent (its own dial hangs)", next)
		}
		if got := dials.Load(); got != 4 {
			t.Errorf("%d dials, want 4 (the warm connection, the batch's, the lone call's, and the next call's: it did not queue behind a dial)", got)
		}
		time.Sleep(5 * time.Second) // the member answers; the hung dials time out
		if grants := f.CallsOf("lease_grant"); len(grants) != 1 || len(f.CallsOf("batch")) != 0 {
			t.Fatalf("the member logged grants %+v and %d batches; want ch_first's alone", grants, len(f.CallsOf("batch")))
		}
	})
}

// TestBatchingQueuesWhenTheMemberQueues: once the member's answers take
// far longer than its quickest (it is busy: requests wait there behind
// each other), the client keeps few requests in flight (inflight.go) and
// the calls beyond them go together in one batch when one comes back.
func TestBatchingQueuesWhenTheMemberQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true}, Config{Batching: true})
		memberQueueing(t, f, c)
		before, aloneBefore := batchesOf(f, "n1")
		leases, errs := make([]Lease, 20), make([]error, 20)
		oneByOne(grants(0, 20, c, leases, errs)...)
		for k, l := range leases {
			if errs[k] != nil || !l.Granted() {
				t.Fatalf("grant %d: %+v %v", k, l, errs[k])
			}
		}
		batches, alone := batchesOf(f, "n1")
		if len(before) != 0 || alone-aloneBefore != minInFlight || len(batches) != 1 || batches[0].Calls != 20-minInFlight {
			t.Fatalf("n1 got %d of the 20 grants alone and batches %+v; want %d alone and one batch of the other %d", alone-aloneBefore, batches, minInFlight, 20-minInFlight)
		}
	})
}

// memberQueueing has member n1 answer this client quickly (1 ms), then
// far slower (10 ms): requests wait there, so the client keeps only
// minInFlight in flight (inflight.go) and queues the calls beyond them.
func memberQueueing(t *testing.T, f *fakelease.Cluster, c *Client) {
	t.Helper()
	f.Node(0).SetLatency(time.Millisecond, 0)
	for k := range 10 { // the member's quickest answers: 1 ms
		if _, err := c.Check(context.Background(), fmt.Sprint("quick_", k)); err != nil {
			t.Fatal(err)
		}
	}
	f.Node(0).SetLatency(10*time.Millisecond, 0)
	if _, err := c.Check(context.Background(), "slow"); err != nil { // 10x the quickest
		t.Fatal(err)
	}
}

// oneByOne makes the calls one after another, each once the earlier ones
// are written or queued, and returns when every call has returned.
func oneByOne(calls ...func(ctx context.Context)) {
	var wg sync.WaitGroup
	for _, call := range calls {
		wg.Go(func() { call(context.Background()) })
		synctest.Wait() // written, or queued
	}
	wg.Wait()
}

// TestBatchCutAfterItWentOutIsUnknown: a batch that reached its member
// and then lost its answer (the connection cut before or after the member
// acted, or the answer broken off halfway) may have taken effect for
// every one of its calls: each is unknown, never "not sent", exactly as
// a call sent alone whose answer was lost. With one attempt each, the
// calls of the cut batch (the member's record names its chunks) end
// unknown and every other call succeeds, whether the calls queued while
// the client was busy writing another request or while the member
// queued.
func TestBatchCutAfterItWentOutIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fakelease.Fault
	}{
		{"cut before the member acted", fakelease.Fault{Op: "batch", Reset: true}},
		{"cut after the member acted", fakelease.Fault{Op: "batch", Reset: true, Apply: true}},
		{"answer broken off", fakelease.Fault{Op: "batch", BreakOff: true}},
	} {
		t.Run(tc.name+", busy writing", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, c := warmClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true, Nodes: 1},
					Config{Batching: true, MaxAttempts: 1})
				f.Node(0).SetLatency(20*time.Millisecond, 0)
				f.Node(0).Inject(tc.fault)
				leases, errs := make([]Lease, 20), make([]error, 20)
				calls := grants(0, 20, c, leases, errs)
				whileWriting(calls[0], calls[1:]...)
				checkCutBatch(t, f, leases, errs)
			})
		})
		t.Run(tc.name+", member queueing", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, c := fakeClient(t, fakelease.Options{Network: fakelease.Pipe, Batch: true, Nodes: 1},
					Config{Batching: true, MaxAttempts: 1})
				f.Node(0).Inject(tc.fault)
				leases, errs := make([]Lease, 20), make([]error, 20)
				memberQueueing(t, f, c)
				oneByOne(grants(0, 20, c, leases, errs)...)
				checkCutBatch(t, f, leases, errs)
			})
		})
	}
}

// checkCutBatch checks the outcome of grantAll against the member's
// record: one batch of several calls was cut, each of its calls is
// unknown (never not sent), and every other call was granted.
func checkCutBatch(t *testing.T, f *fakelease.Cluster, leases []Lease, errs []error) {
	t.Helper()
	var cut []fakelease.Call
	batches, _ := batchesOf(f, "n1")
	for _, b := range batches {
		if b.Cut {
			cut = append(cut, b)
		}
	}
	if len(cut) != 1 || cut[0].Calls < 2 {
		t.Fatalf("the member's batches %+v: want one of several calls cut", batches)
	}
	inCut := map[string]bool{}
	for _, ch := range cut[0].Chunks {
		inCut[ch] = true
	}
	for k, err := range errs {
		chunk := fmt.Sprintf("ch_%d", k)
		switch {
		case inCut[chunk] && (!IsUnknown(err) || strings.Contains(err.Error(), "not sent")):
			t.Errorf("grant of %s, in the cut batch: %v; want unknown (the batch went out)", chunk, err)
		case !inCut[chunk] && (err != nil || !leases[k].Granted()):
			t.Errorf("grant of %s, not in the cut batch: %+v %v; want granted", chunk, leases[k], err)
		}
	}
}
