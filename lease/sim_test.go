package lease_test

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"chunklease/history"
	leasewl "chunklease/workloads/lease"
)

var (
	simSeed      = flag.Uint64("seed", 0, "base seed of the simulation (0: a fresh one, printed); with -schedules=1 it replays one schedule")
	simSchedules = flag.Int("schedules", 0, "schedules the simulation runs (0: the default budget)")
	simSoak      = flag.Bool("soak", false, "run the long soak (100000 schedules) for release checks")
	simKeep      = flag.String("keep", "", "directory to write the history of every failing schedule into")
)

// defaultSchedules is the default seed budget; it is smaller under the race
// detector, which slows the simulation about tenfold (race_test.go). It is
// read when a test runs, not when the flag is defined: race_test.go's init
// runs after the package's variables are initialized.
var defaultSchedules = 1000

// budget is the number of schedules a test runs: -schedules, or the
// default budget.
func budget() int {
	if *simSchedules > 0 {
		return *simSchedules
	}
	return defaultSchedules
}

// raceEnabled is set under -race; the negative controls then skip, since
// a tenth of the budget cannot promise to catch them. scripts/run_tests.sh
// runs them without -race, at the full budget.
var raceEnabled = false

// outcome is one schedule's result.
type outcome struct {
	sc         scenario
	ops        int
	violations []leasewl.Violation
	problems   []history.Problem
	history    []byte
	// unfenced: the fencing rules were not asserted, because the schedule
	// left the guarantee (clocks beyond the bound and a restart that
	// served before it recovered; simprops_test.go).
	unfenced bool
	// overloaded counts requests that failed waiting for an admission
	// slot (admission.go): the proof that capped schedules reach that path.
	overloaded int
	// memberChanges counts membership changes answered ok: the proof that
	// the member nemesis changes configurations (simmember_test.go).
	memberChanges int
}

// runSchedule plays one schedule, writes its history in the contract's
// history.jsonl format, reads it back, and checks it with the workloads
// lease checker.
func runSchedule(sc scenario) outcome {
	w := newWorld(sc)
	jsonl := w.run()
	ops, err := history.ReadHistory(bytes.NewReader(jsonl))
	if err != nil {
		return outcome{sc: sc, problems: []history.Problem{{Index: -1, Text: "history does not parse: " + err.Error()}}, history: jsonl}
	}
	if sc.master {
		o := masterOutcome(sc, ops, jsonl)
		o.violations = append(o.violations, w.keptViolations()...)
		return o
	}
	res := leasewl.CheckLease(ops)
	o := outcome{sc: sc, ops: len(ops), problems: res.Problems, history: jsonl, overloaded: countOverloaded(ops)}
	o.violations, o.unfenced = w.fenced(res.Violations)
	for _, text := range checkProtectedPromise(ops, res.Holdings, sc.driftPPM) {
		o.violations = append(o.violations, leasewl.Violation{Kind: "protected-promise", Text: text})
	}
	for _, text := range w.definite {
		o.violations = append(o.violations, leasewl.Violation{Kind: "definite-after-propose", Text: text})
	}
	o.violations = append(o.violations, w.keptViolations()...)
	o.violations = append(o.violations, w.membershipViolations()...)
	o.memberChanges = w.mw.changes
	for _, text := range checkAcceptorProtection(ops, w.accepts, w.ids) {
		o.violations = append(o.violations, leasewl.Violation{Kind: "acceptor-protection", Text: text})
	}
	return o
}

// countOverloaded counts the failures of requests that waited for an
// admission slot for their whole quorum timeout.
func countOverloaded(ops []history.Op) int {
	n := 0
	for _, op := range ops {
		if op.Type == "fail" && strings.Contains(op.Error, "this node is overloaded") {
			n++
		}
	}
	return n
}

// runMany plays schedules base, base+1, ... on every core, in order of
// seed, and stops early (after the current batch) once stopAfter
// schedules failed, if stopAfter > 0.
func runMany(base uint64, count int, draw func(seed uint64) scenario, stopAfter int) []outcome {
	var out []outcome
	batch := 8 * runtime.GOMAXPROCS(0)
	failed := 0
	for start := 0; start < count; start += batch {
		n := min(batch, count-start)
		res := runBatch(base+uint64(start), n, draw)
		for _, o := range res {
			if len(o.violations)+len(o.problems) > 0 {
				failed++
			}
		}
		out = append(out, res...)
		if stopAfter > 0 && failed >= stopAfter {
			break
		}
	}
	return out
}

func runBatch(base uint64, n int, draw func(seed uint64) scenario) []outcome {
	res := make([]outcome, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				o := runSchedule(draw(base + uint64(i)))
				if len(o.violations)+len(o.problems) == 0 {
					o.history = nil // only a failure's is kept (-keep): a soak's would fill the memory
				}
				res[i] = o
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return res
}

func baseSeed(t *testing.T) uint64 {
	if *simSeed != 0 {
		return *simSeed
	}
	return rand.Uint64() >> 1
}

// TestSimulation is the core's main proof: many seeded schedules of the
// full protocol under every fault the simulation injects, each history
// checked for two primaries and for reads that saw the wrong holder.
func TestSimulation(t *testing.T) {
	base, count := baseSeed(t), budget()
	if *simSoak {
		count = 100_000
	}
	results := runMany(base, count, func(seed uint64) scenario { return drawScenario(seed, "none") }, 0)
	ops, violations, unfenced, overloaded, changes := 0, 0, 0, 0, 0
	for _, o := range results {
		ops += o.ops
		overloaded += o.overloaded
		changes += o.memberChanges
		violations += len(o.violations) + len(o.problems)
		if o.unfenced {
			unfenced++
		}
		if len(o.violations)+len(o.problems) > 0 {
			reportFailure(t, o)
		}
	}
	fmt.Printf("lease-sim: schedules=%d ops=%d violations=%d fencing-unasserted=%d overloaded=%d member-changes=%d seed=%d\n",
		len(results), ops, violations, unfenced, overloaded, changes, base)
	if violations > 0 {
		t.Fatalf("%d violations; replay a failing schedule with: go test ./lease -run TestSimulation -seed <seed> -schedules 1 -v", violations)
	}
	if len(results) >= 200 && overloaded == 0 {
		t.Fatalf("no request in %d schedules failed waiting for an admission slot: the capped schedules no longer reach that path", len(results))
	}
	if len(results) >= 200 && changes == 0 {
		t.Fatalf("no membership change in %d schedules was answered ok: the member nemesis no longer changes configurations", len(results))
	}
}

func reportFailure(t *testing.T, o outcome) {
	t.Errorf("schedule failed: %v", o.sc)
	for i, v := range o.violations {
		if i == 3 {
			t.Errorf("  ... %d more", len(o.violations)-3)
			break
		}
		t.Errorf("  %+v", v)
	}
	for _, p := range o.problems {
		t.Errorf("  problem: %+v", p)
	}
	if *simKeep != "" {
		path := filepath.Join(*simKeep, fmt.Sprintf("history-%d.jsonl", o.sc.seed))
		if err := os.WriteFile(path, o.history, 0o644); err == nil {
			t.Errorf("  history: %s", path)
		}
	}
}

// TestScheduleReplays pins the simulation's promise that a seed replays a
// schedule exactly: the same seed gives the same history, byte for byte,
// for the chunk-lease and the master workloads.
func TestScheduleReplays(t *testing.T) {
	base := baseSeed(t)
	for i := range uint64(8) {
		for _, draw := range []func(uint64, string) scenario{drawScenario, drawMasterScenario} {
			sc := draw(base+i, "none")
			a, b := newWorld(sc).run(), newWorld(sc).run()
			if !bytes.Equal(a, b) {
				t.Fatalf("schedule %v gave two different histories", sc)
			}
		}
	}
}

// keptViolations are the requests and attempts a node kept for reuse
// while it still pointed to them (SpareReachable, after every step).
func (w *world) keptViolations() []leasewl.Violation {
	var out []leasewl.Violation
	for _, text := range w.spares {
		out = append(out, leasewl.Violation{Kind: "kept-while-in-use", Text: text})
	}
	return out
}
