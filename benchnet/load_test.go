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
	setups    map[string]int // measured ops prepared, by run id
	done      atomic.Int64
	teardowns atomic.Int64
	setupErr  error
	fail      func(i int) bool
	block     func(i int) bool
}

func (f *fakeSystem) Name() string   { return "fake" }
func (f *fakeSystem) Servers() []int { return nil }
func (f *fakeSystem) Worker(id, op string, k, clients int) worker {
	return &fakeWorker{f: f, id: id, op: op}
}

type fakeWorker struct {
	f      *fakeSystem
	id, op string
}

func (w *fakeWorker) Setup(ctx context.Context, n int) error {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	if w.f.setups == nil {
		w.f.setups = map[string]int{}
	}
	w.f.setups[w.id] += n
	return w.f.setupErr
}

func (w *fakeWorker) Do(ctx context.Context, i int) (string, error) {
	w.f.done.Add(1)
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

func TestRunSpreadsOpsAndLeavesWarmUpOut(t *testing.T) {
	f := &fakeSystem{}
	r, err := runOnce(context.Background(), f, runSpec{Op: "renew", Clients: 16, Ops: 2000, Warm: 5, Limit: time.Minute}, "t")
	if err != nil {
		t.Fatal(err)
	}
	all := r.Kinds["all"]
	if r.Measured != 2000 || r.Done != 2000 || all.OK != 2000 || r.Kinds["renew"].OK != 2000 || !r.complete() {
		t.Errorf("result %+v: want 2000 measured, done and ok", r)
	}
	if f.setups["t"] != 2000 || f.setups["tw"] != 16*5 || f.done.Load() != 2000+16*5 || f.teardowns.Load() != 2*16 {
		t.Errorf("setups %v, ops %d, teardowns %d: want 2000 measured and 80 warm-up ops prepared and done, every client torn down",
			f.setups, f.done.Load(), f.teardowns.Load())
	}
}

func TestRunCountsFailuresApartFromOK(t *testing.T) {
	f := &fakeSystem{fail: func(i int) bool { return i%4 == 3 }}
	r, err := runOnce(context.Background(), f, runSpec{Op: "mixed", Clients: 2, Ops: 400, Limit: time.Minute}, "t")
	if err != nil {
		t.Fatal(err)
	}
	all, rel := r.Kinds["all"], r.Kinds["release"]
	if all.OK != 300 || all.Failed != 100 || rel.OK != 0 || rel.Failed != 100 || r.Kinds["grant"].OK != 100 || r.complete() {
		t.Errorf("kinds %+v: want every release failed, the rest ok, the run not complete", r.Kinds)
	}
	if all.FirstErr != "release: refused" {
		t.Errorf("first error %q", all.FirstErr)
	}
}

func TestRunStopsAtItsLimit(t *testing.T) {
	f := &fakeSystem{block: func(i int) bool { return i == 10 }}
	start := time.Now()
	r, err := runOnce(context.Background(), f, runSpec{Op: "check", Clients: 4, Ops: 400, Limit: 200 * time.Millisecond}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %v with a limit of 200 ms", took)
	}
	if r.Done != 40 || r.Kinds["all"].OK != 40 || r.Kinds["all"].Failed != 0 || r.complete() {
		t.Errorf("result %+v: want the 10 ops each client did before its blocked one, the cut-off ones neither ok nor failed", r)
	}
}

func TestRunSetupErrorTearsDown(t *testing.T) {
	f := &fakeSystem{setupErr: errors.New("no leader")}
	if _, err := runOnce(context.Background(), f, runSpec{Op: "renew", Clients: 3, Ops: 30, Limit: time.Minute}, "t"); err == nil {
		t.Fatal("a failed setup made a run")
	}
	if f.done.Load() != 0 || f.teardowns.Load() != 3 {
		t.Errorf("ops %d, teardowns %d: want none done, every client torn down", f.done.Load(), f.teardowns.Load())
	}
}

func TestKeysPerClient(t *testing.T) {
	for _, c := range []struct{ clients, n, want int }{{1, 2000, 1000}, {16, 125, 62}, {64, 32, 15}, {64, 3, 3}, {2000, 1, 1}} {
		if got := keysPerClient(c.clients, c.n); got != c.want {
			t.Errorf("keysPerClient(%d, %d) = %d, want %d", c.clients, c.n, got, c.want)
		}
	}
}
