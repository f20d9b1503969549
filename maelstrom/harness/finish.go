package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"chunklease/workloads"
)

// finish checks the history (unless the run failed), writes results.json
// and the pictures, points store/latest at the run and prints the
// summary.
func (r *runner) finish(runErr error) Outcome {
	history := r.hist.Ops()
	res := &Results{
		Workload: r.o.Workload.Name(), Seed: r.o.Seed, Command: r.o.Command, Config: r.o.Config,
		Started: r.started, Stats: computeStats(history),
		Availability: computeAvailability(history, r.o.AvailabilityMin),
		Nemesis:      r.nemesisResult(history), Final: r.final.FinalPhase,
		Net: computeNet(r.net.Stats(), history), Reports: []string{},
	}
	if runErr == nil {
		runErr = r.analyze(res, history)
	}
	res.Duration = time.Since(r.started)
	res.Checks.Final = res.Final.Valid
	res.ExitCode = verdict(res, runErr)
	res.Valid = res.ExitCode == ExitValid
	if runErr != nil {
		res.Error = runErr.Error()
	}
	r.writeReport(res, history) // report.go: messages.svg and index.html
	out := Outcome{Exit: res.ExitCode, Dir: r.dir, Err: runErr, Results: res}
	if err := writeResults(r.dir, res); err != nil {
		r.console.println("ERROR writing results.json: " + err.Error())
		out.Exit, out.Err = ExitFailed, err
	}
	if err := linkLatest(r.o.StoreDir, r.dir); err != nil {
		r.console.println("WARN " + err.Error())
	}
	r.printSummary(res, runErr)
	return out
}

// analyze runs the workload checker, its statistics, the pictures and the
// workload's report. A checker that panics makes the verdict unknown,
// which fails the run (Jepsen's :valid? :unknown); the statistics and
// reports only warn.
func (r *runner) analyze(res *Results, history []workloads.Op) error {
	check, err := r.check(history)
	if err != nil {
		return err
	}
	res.Checker = check.Details
	res.Checks.Workload = &check.Valid
	if s, ok := r.o.Workload.(workloads.StatsReporter); ok {
		r.guard("the workload statistics", func() {
			res.WorkloadStats = s.Stats(history, check, int(r.net.Stats().All.MsgCount))
		})
	}
	res.Perf = r.drawPerf(history)
	if rep, ok := r.o.Workload.(workloads.Reporter); ok {
		before := listFiles(r.dir)
		r.guard("the workload report", func() {
			if err := rep.Report(r.dir, history, check); err != nil {
				panic(err)
			}
		})
		for _, f := range listFiles(r.dir) {
			if !slices.Contains(before, f) {
				res.Reports = append(res.Reports, f)
			}
		}
	}
	return nil
}

// check runs the workload checker, turning a panic into an error.
func (r *runner) check(history []workloads.Op) (res workloads.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the %s checker crashed: %v", r.o.Workload.Name(), p)
		}
	}()
	return r.o.Workload.Check(history), nil
}

// guard runs f and turns a panic into a warning naming what failed.
func (r *runner) guard(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			r.console.println(fmt.Sprintf("WARN %s could not be computed: %v", what, p))
		}
	}()
	f()
}

// verdict is the exit status, merged as Jepsen merges validity (false
// beats unknown beats true): 255 when the run failed or the checker
// crashed, 1 when a checker found the history invalid, 2 when none did
// but the final phase never saw an ok op, 0 otherwise.
func verdict(res *Results, runErr error) int {
	res.Checks.Stats = res.Stats.Valid
	res.Checks.Availability = res.Availability.Valid
	res.Checks.Net = res.Net.Valid
	res.Checks.Perf = res.Perf.Valid
	if runErr != nil || res.Checks.Workload == nil {
		return ExitFailed
	}
	c := res.Checks
	switch {
	case !*c.Workload || !c.Stats || !c.Availability || !c.Net:
		return ExitInvalid
	case c.Final == "unknown":
		return ExitUnknown
	}
	return ExitValid
}

// nemesisResult counts the nemesis's work for results.json.
func (r *runner) nemesisResult(history []workloads.Op) NemesisResult {
	res := computeNemesis(history)
	res.Faults = r.o.Faults.String()
	if r.o.Faults.Any() {
		res.IntervalS = r.o.NemesisInterval.Seconds()
	}
	res.LateRepliesDropped = r.nemesis.lateReplies.Load()
	return res
}

// printSummary prints the verdict, the key figures and where the report
// is.
func (r *runner) printSummary(res *Results, runErr error) {
	w := r.o.Stdout
	switch res.ExitCode {
	case ExitValid:
		fmt.Fprintln(w, "\nEverything looks good: the history is valid.")
	case ExitInvalid:
		fmt.Fprintf(w, "\nAnalysis invalid: %s.\n", r.failedChecks(res))
	case ExitUnknown:
		fmt.Fprintf(w, "\nValidity unknown: no anomaly found, but none of the %d final ops completed ok after every fault was healed and the harness waited %.1f s (results.json \"final\").\n",
			res.Final.Invoked, res.Final.RecoveryWaitS)
	default:
		fmt.Fprintf(w, "\nThe run failed (no verdict): %v\n", runErr)
	}
	s := res.Stats
	fmt.Fprintf(w, "  ops: %d invoked; %d ok, %d fail, %d info; ok fraction %.3f\n",
		r.counts.invoked, s.OKCount, s.FailCount, s.InfoCount, res.Availability.OKFraction)
	if n := res.Net; n.All.MsgsPerOp != nil {
		fmt.Fprintf(w, "  network: %d messages, %.1f per op (%.1f node-to-node); %d dropped by partitions\n",
			n.All.MsgCount, *n.All.MsgsPerOp, *n.Servers.MsgsPerOp, n.All.DropCount)
	}
	if n := res.Nemesis; n.Faults != "" {
		fmt.Fprintf(w, "  nemesis %s: %d partitions, %d nodes killed, %d paused; %d late replies of paused nodes dropped\n",
			n.Faults, n.Ops["start-partition"], n.NodesKilled, n.NodesPaused, n.LateRepliesDropped)
	}
	if f := res.Final; f.Ran {
		fmt.Fprintf(w, "  final phase: %d of %d final ops ok after healing and %.1f s of recovery\n", f.OK, f.Invoked, f.RecoveryWaitS)
	}
	fmt.Fprintf(w, "  seed %d; report: %s/latest/ (%s)\n", r.o.Seed, r.o.StoreDir, strings.Join(r.reportFiles(res), ", "))
}

// failedChecks names the checkers that found the history invalid.
func (r *runner) failedChecks(res *Results) string {
	var failed []string
	if c := res.Checks.Workload; c != nil && !*c {
		failed = append(failed, fmt.Sprintf("the %s checker found violations (results.json key %q)", res.Workload, res.Workload))
	}
	if !res.Checks.Stats {
		var none []string
		for f, st := range res.Stats.ByF {
			if !st.Valid {
				none = append(none, f)
			}
		}
		slices.Sort(none)
		failed = append(failed, fmt.Sprintf("no %s op ever completed ok (stats)", strings.Join(none, "/")))
	}
	if !res.Checks.Availability {
		failed = append(failed, fmt.Sprintf("availability %.3f is below the expected %v", res.Availability.OKFraction, *res.Availability.Expected))
	}
	return strings.Join(failed, "; ")
}

func (r *runner) reportFiles(res *Results) []string {
	files := []string{"results.json", "history.jsonl"}
	if res.Perf.LatencyGraph != "" {
		files = append(files, res.Perf.LatencyGraph, res.Perf.RateGraph)
	}
	files = append(files, res.Reports...)
	return append(files, "node-logs/")
}
