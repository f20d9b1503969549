package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSystem counts what the runner asks of it; op i of a client fails
// when fail(i) says so, and blocks until its context ends when block(i).
type fakeSystem struct {
	mu        sync.Mutex
	setups    map[string]int // release leases prepared, by run id
	done      atomic.Int64
	teardowns atomic.Int64
	setupErr  error
	fail      func(i int) bool
	block     func(i int) bool
}

func (f *fakeSystem) Name() string    { return "fake" }
func (f *fakeSystem) Version() string { return "0" }
func (f *fakeSystem) Servers() []int  { return nil }
func (f *fakeSystem) Worker(id, op string, k, clients int) worker {
	return &fakeWorker{f: f, id: id, op: op}
}

type fakeWorker struct {
	f      *fakeSystem
	id, op string
	pool   int
}

func (w *fakeWorker) Setup(ctx context.Context, pool int) error {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	if w.f.setups == nil {
		w.f.setups = map[string]int{}
	}
	w.f.setups[w.id] += pool
	w.pool = pool
	return w.f.setupErr
}

// Do takes fakeOpTime, as a service's answer takes a while.
func (w *fakeWorker) Do(ctx context.Context, i int) (string, error) {
	if w.op == "release" && i >= w.pool {
		return w.op, errPoolEmpty
	}
	w.f.done.Add(1)
	time.Sleep(fakeOpTime)
	kind := w.op
	if w.op == "mixed" {
		kind = kinds[i%4]
	}
	switch {
	case w.f.block != nil && w.f.block(i):
		<-ctx.Done()
		return kind, ctx.Err()
	case w.f.fail != nil && w.f.fail(i):
		return kind, errors.New("refused")
	}
	return kind, nil
}

func (w *fakeWorker) Teardown(ctx context.Context) { w.f.teardowns.Add(1) }

const fakeOpTime = time.Millisecond

func TestRunMeasuresItsDurationAndLeavesWarmUpOut(t *testing.T) {
	f := &fakeSystem{}
	r, err := runOnce(context.Background(), f, runSpec{Op: "renew", Clients: 16, Duration: 300 * time.Millisecond, Warm: 100 * time.Millisecond}, "t")
	if err != nil {
		t.Fatal(err)
	}
	all := r.Kinds["all"]
	if r.Done == 0 || all.OK != r.Done || r.Kinds["renew"].OK != r.Done || !r.complete() {
		t.Errorf("result %+v: want every op done ok", r)
	}
	if r.ElapsedS < 0.3 || r.DurationS != 0.3 {
		t.Errorf("the run measured %.3f s, want at least its 0.3 s", r.ElapsedS)
	}
	// Each client did an op at a time for 0.3 s, at most one per
	// fakeOpTime; the warm-up's ops are done but not counted.
	if most := 16 * 300; r.Done > most {
		t.Errorf("%d ops counted, more than %d in 0.3 s", r.Done, most)
	}
	if warm := int(f.done.Load()) - r.Done; warm <= 0 || f.teardowns.Load() != 2*16 {
		t.Errorf("%d warm-up ops, %d teardowns: want some, and every client of both runs torn down", warm, f.teardowns.Load())
	}
	if got := all.OpsPerS; got < float64(r.Done)/0.4 || got > float64(r.Done)/0.3 {
		t.Errorf("ops/s %.0f is not the %d ops over the elapsed %.3f s", got, r.Done, r.ElapsedS)
	}
}

func TestRunCountsFailuresApartFromOK(t *testing.T) {
	f := &fakeSystem{fail: func(i int) bool { return i%4 == 3 }}
	r, err := runOnce(context.Background(), f, runSpec{Op: "mixed", Clients: 2, Duration: 100 * time.Millisecond}, "t")
	if err != nil {
		t.Fatal(err)
	}
	all, rel, gr := r.Kinds["all"], r.Kinds["release"], r.Kinds["grant"]
	if rel.OK != 0 || rel.Failed == 0 || all.Failed != rel.Failed || all.OK != r.Done-rel.Failed || gr.OK < rel.Failed || r.complete() {
		t.Errorf("kinds %+v: want every release failed, the rest ok, the run not complete", r.Kinds)
	}
	if all.FirstErr != "release: refused" {
		t.Errorf("first error %q", all.FirstErr)
	}
}

func TestRunStopsWhenInterrupted(t *testing.T) {
	f := &fakeSystem{block: func(i int) bool { return i == 10 }}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	r, err := runOnce(ctx, f, runSpec{Op: "check", Clients: 4, Duration: time.Minute}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %v, interrupted after 200 ms", took)
	}
	if r.Done != 40 || r.Kinds["all"].OK != 40 || r.Kinds["all"].Failed != 0 {
		t.Errorf("result %+v: want the 10 ops each client did before its blocked one, the cut-off ones neither ok nor failed", r)
	}
}

// A release client that has given back its whole pool stops, and the
// run is incomplete: it did not measure its duration at full strength.
func TestReleasePoolUsedUpIsIncomplete(t *testing.T) {
	f := &fakeSystem{}
	r, err := runOnce(context.Background(), f, runSpec{Op: "release", Clients: 3, Duration: time.Minute, Pool: 10}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != 30 || r.Exhausted != 3 || r.complete() || f.setups["t"] != 30 {
		t.Errorf("result %+v, setups %v: want 10 releases a client, all three used up, the run incomplete", r, f.setups)
	}
}

func TestRunSetupErrorTearsDown(t *testing.T) {
	f := &fakeSystem{setupErr: errors.New("no leader")}
	if _, err := runOnce(context.Background(), f, runSpec{Op: "renew", Clients: 3, Duration: time.Second}, "t"); err == nil {
		t.Fatal("a failed setup made a run")
	}
	if f.done.Load() != 0 || f.teardowns.Load() != 3 {
		t.Errorf("ops %d, teardowns %d: want none done, every client torn down", f.done.Load(), f.teardowns.Load())
	}
}

func TestKeysPerClient(t *testing.T) {
	for _, c := range []struct{ keys, clients, want int }{{0, 1, 1000}, {0, 16, 62}, {0, 64, 15}, {0, 2000, 1}, {64, 1, 64}, {64, 16, 4}} {
		if got := keysPerClient(c.keys, c.clients); got != c.want {
			t.Errorf("keysPerClient(%d, %d) = %d, want %d", c.keys, c.clients, got, c.want)
		}
	}
}
