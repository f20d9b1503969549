package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"chunklease/history"
	"chunklease/report"
	"chunklease/workloads"
)

// The analysis reads history.jsonl back from disk (the run kept none of
// it in memory) and judges it in memory that does not grow with the run:
// history.ReadBack streams the ops, the harness's own figures are sums
// (opTally) and bounded pictures (report.PerfData), and a workload that
// implements workloads.Analyzer judges it op by op, spilling what it must
// keep to disk (the lease workload checks chunks on every core).

// historyFile is the run's history, in the run directory.
const historyFile = "history.jsonl"

// analysis is what reading the history back gave.
type analysis struct {
	facts    history.Facts
	tally    *opTally
	perf     *report.PerfData
	judged   *workloads.Analyzed // nil when the workload was not judged
	readErr  error               // the history could not be read back
	judgeErr error               // the workload's analysis failed
	// graphs is the latency and rate graphs, drawn beside the workload's
	// judgement once the history is read (drawGraphs); nil until then.
	graphs chan report.PerfResult
}

// drawGraphs draws the graphs in the background: they need only what
// the read gathered, and the judgement runs meanwhile.
func (an *analysis) drawGraphs(dir string) {
	an.graphs = make(chan report.PerfResult, 1)
	perf, faults := an.perf, workloads.FaultsOf(an.facts.Nemesis, an.facts.Nodes)
	go func() { an.graphs <- report.DrawPerf(dir, perf, faults) }()
}

// drawnGraphs waits for the graphs, or draws them when the read never
// ended (a crash in it).
func (an *analysis) drawnGraphs(dir string) report.PerfResult {
	if an.graphs == nil {
		an.drawGraphs(dir)
	}
	return <-an.graphs
}

// readBack reads the history back once: the harness's figures always, and
// the workload's judgement when judge is set (the run did not fail). A
// workload without workloads.Analyzer is judged from the history held in
// memory, as simulations do.
func (r *runner) readBack(judge bool, end time.Duration) *analysis {
	an := &analysis{tally: &opTally{byF: map[string]report.FStats{}}, perf: report.NewPerfData(end)}
	streamed, isAnalyzer := r.o.Workload.(workloads.Analyzer)
	var wa workloads.Analysis
	path := filepath.Join(r.dir, historyFile)
	an.judge(func() (workloads.Analyzed, error) {
		defer func() {
			if p := recover(); p != nil {
				if wa != nil {
					wa.Abort() // no spill file left behind by a crash
				}
				panic(p) // judge reports it
			}
		}()
		an.facts, an.readErr = history.ReadBack(path, func(nemesis []history.Op) ([]history.PairSink, error) {
			sinks := []history.PairSink{an.tally, an.perf}
			if !judge || !isAnalyzer {
				return sinks, nil
			}
			var err error
			if wa, err = streamed.NewAnalysis(r.analysisEnv(path, nemesis)); err != nil {
				return nil, fmt.Errorf("the %s analysis: %w", r.o.Workload.Name(), err)
			}
			return append(sinks, wa), nil
		})
		an.drawGraphs(r.dir)
		switch {
		case an.readErr != nil && wa != nil:
			wa.Abort()
		case an.readErr != nil || !judge:
		case isAnalyzer:
			return wa.Finish(an.facts)
		default:
			return r.judgeInMemory(path)
		}
		return workloads.Analyzed{}, errNotJudged
	}, r.o.Workload.Name())
	return an
}

// errNotJudged: the history was read for the figures only.
var errNotJudged = errors.New("not judged")

// analysisEnv is what the workload's analysis is told before the first op.
func (r *runner) analysisEnv(path string, nemesis []history.Op) workloads.AnalysisEnv {
	env := workloads.AnalysisEnv{Dir: r.dir, Nemesis: nemesis, Messages: r.messageCount(),
		Parallel: runtime.GOMAXPROCS(0)}
	if fi, err := os.Stat(path); err == nil {
		env.HistoryBytes = fi.Size()
	}
	return env
}

// judge runs a workload's judgement, turning a panic into an error: a
// checker that crashes leaves the verdict unknown.
func (an *analysis) judge(f func() (workloads.Analyzed, error), name string) {
	defer func() {
		if p := recover(); p != nil {
			an.judged, an.judgeErr = nil, fmt.Errorf("the %s checker crashed: %v", name, p)
		}
	}()
	out, err := f()
	switch {
	case errors.Is(err, errNotJudged):
	case err != nil:
		an.judgeErr = fmt.Errorf("the %s checker: %w", name, err)
	default:
		an.judged = &out
	}
}

// judgeInMemory judges a workload that has no streamed analysis the way
// the simulations do: the whole history in memory, Check, then Stats and
// Focus when it has them.
func (r *runner) judgeInMemory(path string) (workloads.Analyzed, error) {
	f, err := os.Open(path)
	if err != nil {
		return workloads.Analyzed{}, err
	}
	ops, err := history.ReadHistory(f)
	f.Close()
	if err != nil {
		return workloads.Analyzed{}, err
	}
	w := r.o.Workload
	check := w.Check(ops)
	out := workloads.Analyzed{Result: check}
	if f, ok := w.(workloads.Focuser); ok {
		out.Focus = f.Focus(ops, check)
	}
	if s, ok := w.(workloads.StatsReporter); ok {
		r.guard("the workload statistics", func() { out.Stats = s.Stats(ops, check, r.messageCount()) })
	}
	return out, nil
}

// opTally counts what results.json's stats, availability and net
// sections need, op by op: Jepsen's stats checker over completions,
// Maelstrom's availability (ok over invocations), client invocations.
type opTally struct {
	stats           report.OpStats
	byF             map[string]report.FStats
	invoked, okDone int
}

// Op counts one op (workloads.OpObserver): every client completion, paired
// or not, as the stats checker does.
func (t *opTally) Op(op history.Op) {
	if op.Process.Nemesis {
		return
	}
	if op.Type == history.Invoke {
		t.invoked++
		return
	}
	if op.Type == history.OK {
		t.okDone++
	}
	f := t.byF[op.F]
	t.stats.Count++
	f.Count++
	switch op.Type {
	case history.OK:
		t.stats.OKCount++
		f.OKCount++
	case history.Fail:
		t.stats.FailCount++
		f.FailCount++
	default:
		t.stats.InfoCount++
		f.InfoCount++
	}
	t.byF[op.F] = f
}

func (t *opTally) Pair(history.Pair) error { return nil }
func (t *opTally) Problem(history.Problem) {}

// opStats is Jepsen's stats checker: invalid when some f never completed
// ok.
func (t *opTally) opStats() report.OpStats {
	s := t.stats
	s.ByF, s.Valid = map[string]report.FStats{}, true
	for name, f := range t.byF {
		f.Valid = f.OKCount > 0
		s.ByF[name] = f
		s.Valid = s.Valid && f.Valid
	}
	return s
}

// availability is Maelstrom's availability checker against min (nil:
// any fraction is valid).
func (t *opTally) availability(min *float64) report.AvailabilityResult {
	a := report.AvailabilityResult{OKFraction: 1, Expected: min, Valid: true}
	if t.invoked > 0 {
		a.OKFraction = float64(t.okDone) / float64(t.invoked)
	}
	if min != nil {
		a.Valid = a.OKFraction >= *min
	}
	return a
}
