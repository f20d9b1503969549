package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/netsim"
	"chunklease/report"
	"chunklease/workloads"
)

// finish closes the history, reads it back to judge it (unless the run
// failed, which still gets its figures), writes results.json and the
// pictures, points store/latest at the run and prints the summary.
func (r *runner) finish(runErr error) Outcome {
	ranFor, analysisStart := time.Since(r.started), time.Now()
	if err := r.closeHistory(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing the history: %w", err)
	}
	return r.conclude(runErr, ranFor, analysisStart, r.elapsed())
}

// conclude reads the history back to judge it (unless the run failed,
// which still gets its figures), writes results.json and the pictures,
// points store/latest at the run (not when analysing a stored run again)
// and prints the summary. end is the pictures' time axis.
func (r *runner) conclude(runErr error, ranFor time.Duration, analysisStart time.Time, end time.Duration) Outcome {
	an := r.readBack(runErr == nil, end)
	if an.readErr != nil && runErr == nil {
		runErr = fmt.Errorf("reading the history back: %w", an.readErr)
	}
	if an.judgeErr != nil && runErr == nil {
		runErr = an.judgeErr
	}
	res := &report.Results{
		Workload: r.o.Workload.Name(), Network: r.networkName(), NetworkObserved: r.observedRun().Network,
		Seed: r.o.Seed, Command: r.o.Command, Config: r.o.Config,
		Started: r.started, Stats: an.tally.opStats(), Availability: an.tally.availability(r.o.AvailabilityMin),
		Nemesis: r.nemesisResult(an.facts, end), Final: r.finalPhaseResult(),
		Net: computeNet(r.observedRun().Messages, an.tally.invoked), Reports: []string{},
	}
	res.Net.StrayReplies = r.observedRun().StrayReplies
	var focus *workloads.Focus
	if j := an.judged; j != nil && runErr == nil {
		res.Checker, res.WorkloadStats, focus = j.Result.Details, j.Stats, j.Focus
		res.Checks.Workload = &j.Result.Valid
		res.Reports = append(res.Reports, j.Reports...)
		for _, w := range j.Warnings {
			r.console.println("WARN " + w)
		}
		r.drawPictures(res, j.Pictures)
	}
	res.Perf = an.drawnGraphs(r.dir)
	if res.Perf.Error != "" {
		r.console.println("WARN " + res.Perf.Error)
	}
	res.Checks.Final = res.Final.Valid
	res.ExitCode = verdict(res, runErr)
	res.Valid = res.ExitCode == ExitValid
	if runErr != nil {
		res.Error = runErr.Error()
	}
	r.writeReport(res, an.facts.Nemesis, focus, func() { // report.go: messages.svg and index.html
		res.Duration = time.Since(r.started)
		res.Timing = report.Timing{RunS: ranFor.Seconds(), AnalysisS: time.Since(analysisStart).Seconds(), TimeLimitS: r.o.TimeLimit.Seconds()}
		res.Memory = report.Memory{HarnessPeakMiB: peakRSSMiB(), NodePeakMiB: r.observedRun().NodePeakMiB}
		if s := r.stored; s != nil {
			res.Duration = time.Duration(s.DurationS * float64(time.Second))
			res.Timing.RunS, res.Memory.NodePeakMiB = s.Timing.RunS, s.Memory.NodePeakMiB
		}
	})
	out := Outcome{Exit: res.ExitCode, Dir: r.dir, Err: runErr, Results: res}
	if err := report.WriteResults(r.dir, res); err != nil {
		r.console.println("ERROR writing results.json: " + err.Error())
		out.Exit, out.Err = ExitFailed, err
	}
	if r.stored == nil {
		if err := linkLatest(r.o.StoreDir, r.dir); err != nil {
			r.console.println("WARN " + err.Error())
		}
	}
	r.printSummary(res, runErr, an.tally.invoked)
	return out
}

// elapsed is the time since relative time 0, or 0 when the run never got
// there (the pictures' time axis).
func (r *runner) elapsed() time.Duration {
	if r.start.IsZero() {
		return 0
	}
	return r.now()
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
func verdict(res *report.Results, runErr error) int {
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

// nemesisResult counts the nemesis's work for results.json from the
// nemesis ops of the history and the nodes its client ops name. The main
// phase, for the live majority and the faults that never took effect,
// ends at the time limit, or at end (the last op's time) when the run
// ended sooner; a run that never reached time 0 (end 0) had none.
func (r *runner) nemesisResult(facts history.Facts, end time.Duration) report.NemesisResult {
	res := computeNemesis(facts.Nemesis, facts.Nodes)
	res.Faults = r.o.Faults.String()
	if r.o.Faults.Any() {
		res.IntervalS = r.o.NemesisInterval.Seconds()
		steps := workloads.NemesisSteps(facts.Nemesis)
		mainPhase := min(r.o.TimeLimit, end)
		res.LiveMajority = computeLiveMajority(steps, r.o.Nodes, mainPhase)
		res.NeverApplied = append(res.NeverApplied, neverApplied(r.o.Faults, steps, mainPhase)...)
	}
	res.LateRepliesDropped = r.observedRun().LateRepliesDropped
	switch {
	case r.stored != nil:
		res.Clock = r.stored.Nemesis.Clock
	case r.clock != nil:
		c := r.clock
		res.Clock = &report.ClockBounds{DriftPPM: c.draw.DriftPPM, MaxOffsetMs: c.draw.MaxOffsetMs,
			NodeDriftPPM: c.nodes.DriftPPM, NodeMaxOffsetMs: c.nodes.MaxOffsetMs, WithinBound: c.withinBound()}
	}
	return res
}

// printSummary prints the verdict, the key figures and where the report
// is.
func (r *runner) printSummary(res *report.Results, runErr error, invoked int) {
	w := r.o.Stdout
	switch res.ExitCode {
	case ExitValid:
		fmt.Fprintln(w, "\nEverything looks good: the history is valid.")
	case ExitInvalid:
		fmt.Fprintf(w, "\nAnalysis invalid: %s.\n", res.FailedChecks())
		if f, ok := report.FindingsOf(res.Checker); ok {
			for _, line := range f.Lines() {
				fmt.Fprintf(w, "  %s\n", line)
			}
		}
	case ExitUnknown:
		fmt.Fprintf(w, "\nValidity unknown: no anomaly found, but none of the %d final ops completed ok after every fault was healed and the harness waited %.1f s (results.json \"final\").\n",
			res.Final.Invoked, res.Final.RecoveryWaitS)
	default:
		fmt.Fprintf(w, "\nThe run failed (no verdict): %v\n", runErr)
	}
	s := res.Stats
	fmt.Fprintf(w, "  ops: %d invoked; %d ok, %d fail, %d info; ok fraction %.3f\n",
		invoked, s.OKCount, s.FailCount, s.InfoCount, res.Availability.OKFraction)
	if n := res.Net; n.All != nil && n.All.MsgsPerOp != nil {
		fmt.Fprintf(w, "  network: %d messages, %.1f per op (%.1f node-to-node); %d dropped by partitions\n",
			n.All.MsgCount, *n.All.MsgsPerOp, *n.Servers.MsgsPerOp, n.All.DropCount)
	}
	if o, ok := r.observedRun().Network.(interface{ Summary() string }); ok {
		fmt.Fprintf(w, "  network %s: %s\n", res.Network, o.Summary())
	}
	if line := nemesisLine(res.Nemesis); res.Nemesis.Faults != "" && line != "" { // clock alone: its own line below
		fmt.Fprintf(w, "  nemesis %s: %s\n", res.Nemesis.Faults, line)
	}
	for _, warning := range faultWarnings(res.Nemesis) {
		if res.ExitCode != ExitFailed { // a failed run says why; its faults are beside the point
			fmt.Fprintf(w, "  %s\n", warning)
		}
	}
	if c := res.Nemesis.Clock; c != nil {
		within := "within the nodes' bounds"
		if !c.WithinBound {
			within = fmt.Sprintf("beyond the nodes' bounds (%d ppm, %d ms): a negative control", c.NodeDriftPPM, c.NodeMaxOffsetMs)
		}
		fmt.Fprintf(w, "  clock: %d skews, %d resets; rates within 1 +- %d ppm, offsets within +-%d ms, %s\n",
			res.Nemesis.Ops["clock-skew"], res.Nemesis.Ops["clock-reset"], c.DriftPPM, c.MaxOffsetMs, within)
	}
	if f := res.Final; f.Ran {
		fmt.Fprintf(w, "  final phase: %s\n", finalLine(f))
	}
	fmt.Fprintf(w, "  analysis: %.1f s after %.1f s of run; peak memory: harness %.0f MiB, largest node %.0f MiB\n",
		res.Timing.AnalysisS, res.Timing.RunS, res.Memory.HarnessPeakMiB, res.Memory.NodePeakMiB)
	where := r.o.StoreDir + "/latest/"
	if r.stored != nil {
		where = r.dir + "/"
	}
	fmt.Fprintf(w, "  seed %d; report: %s (%s)\n", r.o.Seed, where, strings.Join(r.reportFiles(res), ", "))
}

func (r *runner) reportFiles(res *report.Results) []string {
	files := []string{"results.json", "history.jsonl"}
	if res.Perf.LatencyGraph != "" {
		files = append(files, res.Perf.LatencyGraph, res.Perf.RateGraph)
	}
	files = append(files, res.Reports...)
	return append(files, "node-logs/")
}

// nemesisLine is the console's account of the nemesis: the fault periods
// of each kind it can cause (those that hit some node, as the pictures
// draw them), the nodes killed and paused, the steps that hit no node.
func nemesisLine(n report.NemesisResult) string {
	var parts []string
	for _, k := range workloads.FaultKinds {
		if strings.Contains(n.Faults, k) {
			parts = append(parts, report.Plural(n.Periods[k], map[string]string{workloads.FaultPartition: "partition",
				workloads.FaultKill: "kill period", workloads.FaultPause: "pause period", workloads.FaultPacket: "packet fault"}[k]))
		}
	}
	line := strings.Join(parts, ", ")
	if strings.Contains(n.Faults, workloads.FaultKill) {
		line += fmt.Sprintf("; %s killed", report.Plural(n.NodesKilled, "node"))
	}
	if strings.Contains(n.Faults, workloads.FaultPause) {
		line += fmt.Sprintf("; %s paused, %s of paused nodes dropped", report.Plural(n.NodesPaused, "node"),
			report.Plural(int(n.LateRepliesDropped), "late reply"))
	}
	if empty := report.EmptyStepsText(n.EmptySteps); empty != "" {
		line += "; not counted: " + empty
	}
	if m := n.LiveMajority; m != nil && line != "" {
		line += "; " + liveMajorityText(m)
	}
	return line
}

// computeNemesis counts the nemesis ops of a history (its nemesis ops
// alone will do): each completed step by f, the nodes the completion of
// a kill, start, pause or resume lists, the fault periods that hit some
// node by kind (report.DrawnFaults, with the node ids nodes the client
// ops name), and the steps that hit no node.
func computeNemesis(ops []history.Op, nodes []string) report.NemesisResult {
	res := report.NemesisResult{Ops: map[string]int{}, Periods: map[string]int{}, EmptySteps: map[string]int{}, NeverApplied: []string{}}
	drawn, _ := report.DrawnFaults(workloads.FaultsOf(ops, nodes))
	for _, f := range drawn {
		res.Periods[f.Kind]++
	}
	hits := map[string]*int{workloads.NemesisKill: &res.NodesKilled, workloads.NemesisStart: &res.NodesRestarted,
		workloads.NemesisPause: &res.NodesPaused, workloads.NemesisResume: &res.NodesResumed}
	for _, st := range workloads.NemesisSteps(ops) {
		if !st.Completed() {
			continue
		}
		res.Ops[st.F]++
		if n, ok := hits[st.F]; ok {
			*n += len(st.Nodes)
		}
		if stepHitNobody(st) {
			res.EmptySteps[st.F]++
		}
	}
	return res
}

// stepHitNobody: a completed start-partition whose grudge cuts nobody off,
// or a kill or pause that acted on no node.
func stepHitNobody(st workloads.NemesisStep) bool {
	switch st.F {
	case workloads.StartPartition:
		var v []json.RawMessage
		var g map[string][]string
		if json.Unmarshal(st.Value, &v) != nil || len(v) != 2 || json.Unmarshal(v[1], &g) != nil {
			return false
		}
		_, cut := workloads.DescribeGrudge(g)
		return len(cut) == 0
	case workloads.NemesisKill, workloads.NemesisPause:
		return len(st.Nodes) == 0
	}
	return false
}

// computeNet is the net checker's result for invoked client
// invocations; without message counts (a network that does not count
// them) it holds none.
func computeNet(s *netsim.Stats, invoked int) report.NetResult {
	if s == nil {
		return report.NetResult{Valid: true}
	}
	perOp := func(c netsim.Counts) *float64 {
		if invoked == 0 {
			return nil
		}
		v := float64(c.MsgCount) / float64(invoked)
		return &v
	}
	return report.NetResult{
		All:     &report.NetGroup{Counts: s.All, MsgsPerOp: perOp(s.All)},
		Clients: &report.NetGroup{Counts: s.Clients},
		Servers: &report.NetGroup{Counts: s.Servers, MsgsPerOp: perOp(s.Servers)},
		Valid:   true,
	}
}

// drawPictures has package report draw what the workload's analysis
// gathered for pictures (the lease timeline) and lists the files drawn in
// res.Reports; a picture that cannot be drawn is a warning.
func (r *runner) drawPictures(res *report.Results, pictures []any) {
	files, warnings := report.DrawPictures(r.dir, pictures)
	res.Reports = append(res.Reports, files...)
	for _, w := range warnings {
		r.console.println("WARN " + w)
	}
}

// writeReport writes the message diagram and the index page into the run
// directory and lists them in res.Reports. Neither can change the
// verdict: a failure is a warning. Between the two, done is called to
// complete res (timing), so the index shows what results.json says.
func (r *runner) writeReport(res *report.Results, nemesis []history.Op, focus *workloads.Focus, done func()) {
	if r.stored != nil {
		if _, err := os.Stat(filepath.Join(r.dir, report.MessagesFile)); err == nil {
			res.Reports = append(res.Reports, report.MessagesFile) // the live run's, kept
		}
	}
	if journal := r.observedRun().Journal; journal != nil {
		r.guard("the message diagram", func() {
			start, initOnly := r.start, r.start.IsZero()
			if initOnly { // the run failed before its main phase: show init
				start = r.started
			}
			if err := report.WriteMessageDiagram(r.dir, journal, start, initOnly, nemesis, r.o.Nodes, focus); err != nil {
				panic(err)
			}
			res.Reports = append(res.Reports, report.MessagesFile)
		})
	}
	done()
	r.guard("the index page", func() {
		res.Reports = append(res.Reports, report.IndexFile)
		if err := report.WriteIndex(r.dir, res, r.o.Nodes); err != nil {
			res.Reports = res.Reports[:len(res.Reports)-1]
			panic(err)
		}
	})
}

// finalLine is the summary of the final phase. Runs stored before the
// final phase recorded its workers (0) print as they did then.
func finalLine(f report.FinalPhase) string {
	ops := fmt.Sprintf("%d of %d final ops ok", f.OK, f.Invoked)
	if f.Workers > 0 {
		ops += fmt.Sprintf(" on %d workers", f.Workers)
	}
	if f.Workers > 0 && f.RecoveryWaitS == 0 {
		return ops + ", with no recovery wait"
	}
	return fmt.Sprintf("%s after healing and %.1f s of recovery", ops, f.RecoveryWaitS)
}
