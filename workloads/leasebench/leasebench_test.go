package leasebench

import (
	"fmt"
	"math"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/workloads/lease"
	"chunklease/workloads/workloadtest"
)

var benchOps = []string{BenchGrant, BenchRenew, BenchCheck, BenchRelease, BenchMixed}

func TestLeaseBenchValidate(t *testing.T) {
	good := LeaseBenchOptions{Op: BenchRenew, Ops: 10, Chunks: 4, Workers: 4, LeaseMs: 1000}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options refused: %v", err)
	}
	for name, mutate := range map[string]func(*LeaseBenchOptions){
		"unknown op":              func(o *LeaseBenchOptions) { o.Op = "write" },
		"no ops":                  func(o *LeaseBenchOptions) { o.Ops = 0 },
		"fewer chunks than users": func(o *LeaseBenchOptions) { o.Chunks = 3 },
		"no workers":              func(o *LeaseBenchOptions) { o.Workers = 0 },
		"no lease":                func(o *LeaseBenchOptions) { o.LeaseMs = 0 },
	} {
		o := good
		mutate(&o)
		if o.Validate() == nil {
			t.Errorf("%s: accepted %+v", name, o)
		}
	}
}

// Each worker's plan has its share of measured ops, on its own chunks only.
func TestLeaseBenchPlanSharesAndOwnership(t *testing.T) {
	for _, op := range benchOps {
		for _, workers := range []int{1, 3, 16} {
			b := NewLeaseBench(LeaseBenchOptions{Op: op, Ops: 2000, Chunks: 1000, Workers: workers, LeaseMs: 1000})
			measured := 0
			for w, plan := range b.plans {
				for _, s := range plan {
					if s.chunk%workers != w {
						t.Fatalf("%s/%d: worker %d planned chunk %d of worker %d", op, workers, w, s.chunk, s.chunk%workers)
					}
					if op == BenchMixed || s.f == op {
						measured++
					}
				}
			}
			if measured != 2000 {
				t.Errorf("%s/%d workers: %d measured ops planned, want 2000", op, workers, measured)
			}
		}
	}
}

// Against a correct lease service the benchmark runs every measured op
// ok, each on the state it is meant to measure, and its history is valid.
func TestLeaseBenchAgainstIdealService(t *testing.T) {
	seed := int64(testseed.Get(t))
	for _, op := range benchOps {
		for _, workers := range []int{1, 16} {
			t.Run(fmt.Sprintf("%s/workers=%d", op, workers), func(t *testing.T) {
				opts := LeaseBenchOptions{Op: op, Ops: 400, Chunks: 100, Workers: workers, LeaseMs: 600_000}
				svc := workloadtest.NewIdealLeases(seed)
				ops := workloadtest.Simulate(t, NewLeaseBench(opts), svc, workloadtest.Config{Workers: workers, Nodes: 3, Duration: time.Hour, Timeout: time.Second})
				if r := lease.CheckLease(ops); !r.Valid {
					t.Fatalf("history invalid: %+v", r)
				}
				sum := LeaseBenchSummary(ops, op)
				checkBenchRows(t, op, sum, opts.Ops)
				checkMeasuredState(t, op, ops)
			})
		}
	}
}

// checkBenchRows: every measured op ran and was ok; a grant never named
// another primary.
func checkBenchRows(t *testing.T, op string, sum BenchResult, ops int) {
	t.Helper()
	total := 0
	for _, r := range sum.Rows {
		if r.Errors != 0 || r.Op == kindGrantOther {
			t.Errorf("row %+v: errors or a contended grant in an uncontended benchmark", r)
		}
		if r.Op != kindAll {
			total += r.OK
		}
	}
	if total != ops || sum.WindowS <= 0 {
		t.Errorf("%d measured ok ops in %.3f s, want %d in a positive window: %+v", total, sum.WindowS, ops, sum)
	}
}

// checkMeasuredState: measured grants find the chunk free, checks find it
// held by its worker's server, releases carry the chunk's latest token.
func checkMeasuredState(t *testing.T, op string, ops []history.Op) {
	t.Helper()
	holder := map[string]string{} // chunk -> server that holds it (by the ok replies)
	token := map[string]int64{}
	pairs, _ := history.PairOps(ops)
	for _, p := range pairs {
		inv, _ := lease.DecodeValue(p.Invoke.Value)
		done, _ := lease.DecodeValue(p.Completion.Value)
		measured := op == BenchMixed || p.Invoke.F == op
		switch p.Invoke.F {
		case lease.FGrant:
			if measured && holder[inv.Chunk] != "" {
				t.Fatalf("grant %s by %s on a chunk held by %s", inv.Chunk, inv.Server, holder[inv.Chunk])
			}
			holder[inv.Chunk], token[inv.Chunk] = inv.Server, *done.Token
		case lease.FRenew:
			if holder[inv.Chunk] != inv.Server {
				t.Fatalf("renew %s by %s, not the holder %q", inv.Chunk, inv.Server, holder[inv.Chunk])
			}
			token[inv.Chunk] = *done.Token
		case lease.FCheck:
			if done.Primary == nil || *done.Primary != holder[inv.Chunk] {
				t.Fatalf("check %s answered %v, want holder %q", inv.Chunk, done.Primary, holder[inv.Chunk])
			}
		case lease.FRelease:
			if inv.Token == nil || *inv.Token != token[inv.Chunk] {
				t.Fatalf("release %s carried token %v, want the latest %d", inv.Chunk, inv.Token, token[inv.Chunk])
			}
			holder[inv.Chunk] = ""
		}
	}
}

// The renew benchmark starts renewing only after every warm-up grant
// completed: the measured phase is pure.
func TestLeaseBenchBarrier(t *testing.T) {
	opts := LeaseBenchOptions{Op: BenchRenew, Ops: 100, Chunks: 50, Workers: 8, LeaseMs: 600_000}
	ops := workloadtest.Simulate(t, NewLeaseBench(opts), workloadtest.NewIdealLeases(int64(testseed.Get(t))), workloadtest.Config{Workers: 8, Nodes: 3, Duration: time.Hour, Timeout: time.Second})
	lastGrant, firstRenew := int64(0), int64(math.MaxInt64)
	for _, op := range ops {
		switch {
		case op.F == lease.FGrant && op.Type != history.Invoke:
			lastGrant = max(lastGrant, op.Time)
		case op.F == lease.FRenew && op.Type == history.Invoke:
			firstRenew = min(firstRenew, op.Time)
		}
	}
	if firstRenew < lastGrant {
		t.Fatalf("a renew was invoked at %d ns, before the last warm-up grant completed at %d ns", firstRenew, lastGrant)
	}
}

// The window sums the measured phases only; rates and percentiles follow.
func TestLeaseBenchSummaryWindow(t *testing.T) {
	b := workloadtest.NewLeaseHistory(t)
	b.Grant(0, 0, 1, "ch_1", "cs1", "cs1", 1000)    // warm-up
	b.Release(0, 2, 3, "ch_1", "cs1", history.OK)   // measured phase 1: 2..3 ms
	b.Grant(0, 10, 20, "ch_1", "cs1", "cs1", 1000)  // warm-up
	b.Release(0, 30, 31, "ch_1", "cs1", history.OK) // measured phase 2: 30..33 ms
	b.Release(1, 30, 33, "ch_2", "cs2", history.Fail)
	sum := LeaseBenchSummary(b.Ops(), BenchRelease)
	if math.Abs(sum.WindowS-0.004) > 1e-9 {
		t.Errorf("window %.6f s, want 0.004 (1 ms + 3 ms)", sum.WindowS)
	}
	if len(sum.Rows) != 1 {
		t.Fatalf("rows %+v, want release only", sum.Rows)
	}
	r := sum.Rows[0]
	if r.Op != lease.FRelease || r.Invoked != 3 || r.OK != 2 || r.Errors != 1 || r.OpsPerSec != 500 || r.P50Ms != 1 || r.MaxMs != 1 {
		t.Errorf("row %+v, want release: 3 invoked, 2 ok, 1 error, 500 ops/s, p50 and max 1 ms", r)
	}
}

// A grant is "won" only when its server did not hold the chunk by its own
// earlier replies; a holder's re-grant and a grant naming another primary
// are rows of their own.
func TestLeaseBenchGrantKinds(t *testing.T) {
	b := workloadtest.NewLeaseHistory(t)
	b.Grant(0, 0, 40, "ch_1", "cs1", "cs1", 1000)    // won
	b.Grant(0, 100, 120, "ch_1", "cs1", "cs1", 1000) // by the holder (held until 1000 ms)
	b.Grant(1, 130, 150, "ch_1", "cs2", "cs1", 900)  // another primary
	b.Release(0, 200, 220, "ch_1", "cs1", history.OK)
	b.Grant(0, 300, 340, "ch_1", "cs1", "cs1", 1000) // won again after the release
	got := map[string]int{}
	for _, r := range LeaseBenchSummary(b.Ops(), BenchMixed).Rows {
		got[r.Op] = r.OK
	}
	want := map[string]int{lease.FGrant: 2, kindGrantHolder: 1, kindGrantOther: 1, lease.FRelease: 1, kindAll: 5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ok ops per kind %v, want %v", got, want)
	}
}
