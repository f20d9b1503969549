package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"chunklease/workloads"
	"chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// IndexFile is the run's front page: the verdict, the key figures and a
// link to every other file.
const IndexFile = "index.html"

// WriteIndex writes index.html into dir: the run's front page, with the
// verdict, the key figures, a link to every file of the run (res.Reports,
// the files present, results.json, the node logs) and the graphs. nodes
// are the run's node ids.
func WriteIndex(dir string, res *Results, nodes []string) error {
	return os.WriteFile(filepath.Join(dir, IndexFile), indexPage(dir, res, nodes), 0o644)
}

// fileNotes describe the files a run directory may hold, in the order
// the index lists them.
var fileNotes = []struct{ name, note string }{
	{LeaseTimelineFile, "lease timeline: who held each chunk when, the faults, every violation"},
	{lease.LeaseDetailsFile, "every chunk's op counts, holdings and violations (each op with the node that answered it), one JSON object a line (results.json has the summary)"},
	{MasterTimelineFile, "master timeline: when each node believed it was master, the faults, every violation"},
	{master.MasterDetailsFile, "every violation, history problem and anomaly of the master checker, one JSON object a line (results.json has the first 20 of each)"},
	{MessagesFile, "message diagram (Lamport): the first seconds of the test, the first request of each type answered ok, and around a lease violation the messages about its chunk, its ops marked"},
	{latencyGraphFile, "latency of every op at its invoke time, faults shaded"},
	{rateGraphFile, "throughput per op and outcome, faults shaded"},
	{"history.jsonl", "the history: one op a line (invoke, ok, fail, info; nemesis ops)"},
	{"results.json", "every checker's verdict and the figures (a summary: the details are in the files above)"},
}

const indexCSS = `body{font:14px/1.45 sans-serif;margin:16px 24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 6px}.valid{color:#1a7f37}.invalid{color:#c00}.unknown{color:#b35900}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 12px 3px 0;text-align:left;vertical-align:top}
th{font-weight:normal;color:#555}code{background:#f3f3f3;padding:1px 4px}
.graphs img{width:100%;max-width:1056px;border:1px solid #ddd;margin:6px 0}
ul{padding-left:20px}`

// indexPage renders index.html: self-contained, links relative to the
// run directory.
func indexPage(dir string, res *Results, nodes []string) []byte {
	var b bytes.Buffer
	cls, word := verdictWords(res)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"/><title>%s run: %s</title>\n<style>%s</style></head>\n<body>\n",
		esc(res.Workload), esc(word), indexCSS)
	fmt.Fprintf(&b, "<h1 id=\"verdict\">%s run: <span class=\"%s\">%s</span></h1>\n", esc(res.Workload), cls, esc(word))
	if res.Error != "" {
		fmt.Fprintf(&b, "<pre class=\"error\">%s</pre>\n", esc(res.Error))
	}
	b.WriteString("<table class=\"figures\">\n")
	for _, kv := range keyFigures(res, nodes) {
		fmt.Fprintf(&b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(kv[0]), kv[1])
	}
	b.WriteString("</table>\n<h2>Files</h2>\n<ul class=\"files\">\n")
	for _, f := range indexFiles(dir, res) {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a>%s</li>\n", esc(f[0]), esc(f[0]), f[1])
	}
	b.WriteString("</ul>\n<div class=\"graphs\">\n")
	for _, g := range []string{res.Perf.LatencyGraph, res.Perf.RateGraph} {
		if g != "" {
			fmt.Fprintf(&b, "<a href=\"%s\"><img src=\"%s\" alt=\"%s\"/></a>\n", g, g, g)
		}
	}
	b.WriteString("</div>\n</body>\n</html>\n")
	return b.Bytes()
}

// verdictWords are the CSS class and the words of the verdict.
func verdictWords(res *Results) (string, string) {
	switch {
	case res.Valid:
		return "valid", "valid"
	case res.Error != "" || res.Checks.Workload == nil:
		return "unknown", "no verdict (the run failed)"
	case res.ExitCode == ExitUnknown:
		return "unknown", "validity unknown: no checker found a violation, but the final phase's reads never succeeded"
	}
	return "invalid", "INVALID: " + res.FailedChecks()
}

// keyFigures are the rows of the figures table; values are HTML.
func keyFigures(res *Results, nodes []string) [][2]string {
	s := res.Stats
	rows := [][2]string{
		{"started", esc(res.Started.Format("2006-01-02 15:04:05 MST")) + fmt.Sprintf(", %.1f s in all", res.Duration.Seconds())},
		{"nodes", esc(strings.Join(nodes, " "))},
		{"network", esc(networkWords(res.Network))},
		{"ops", fmt.Sprintf("%d completed: %d ok, %d fail, %d info; ok fraction %.3f", s.Count, s.OKCount, s.FailCount, s.InfoCount, res.Availability.OKFraction)},
	}
	if n := res.Net; n.All != nil && n.All.MsgsPerOp != nil {
		rows = append(rows, [2]string{"network", fmt.Sprintf("%d messages, %.1f per op (%.1f node-to-node), %d dropped by partitions",
			n.All.MsgCount, *n.All.MsgsPerOp, *n.Servers.MsgsPerOp, n.All.DropCount)})
	}
	if n := nemesisFigure(res.Nemesis); n != "" {
		rows = append(rows, [2]string{"nemesis", n})
	}
	rows = append(rows, checkerFigures(res)...)
	rows = append(rows, leaseFigures(res)...)
	rows = append(rows, masterFigures(res)...)
	if t := res.Timing; t.AnalysisS > 0 {
		rows = append(rows, [2]string{"analysis", fmt.Sprintf("%.1f s after %.1f s of run (time limit %.0f s); peak memory: harness %.0f MiB, largest node %.0f MiB",
			t.AnalysisS, t.RunS, t.TimeLimitS, res.Memory.HarnessPeakMiB, res.Memory.NodePeakMiB)})
	}
	rows = append(rows,
		[2]string{"seed", fmt.Sprintf("<code>%d</code> (the same seed replays the nemesis schedule and the latency draws; docs/harness.md: Reproducing a run)", res.Seed)},
		[2]string{"command", "<code>" + esc(strings.Join(res.Command, " ")) + "</code>"})
	return rows
}

// nemesisFigure says what the nemesis did: the fault periods that hit
// some node, by kind, and the steps that hit none; "" without a nemesis.
func nemesisFigure(n NemesisResult) string {
	if n.Faults == "" {
		return ""
	}
	text := fmt.Sprintf("%s, a step every %g s: ", esc(n.Faults), n.IntervalS)
	var parts []string
	for _, k := range workloads.FaultKinds {
		if p := n.Periods[k]; p > 0 || strings.Contains(n.Faults, k) {
			parts = append(parts, Plural(p, k+" period"))
		}
	}
	text += strings.Join(parts, ", ")
	if n.NodesKilled > 0 || n.NodesPaused > 0 {
		text += fmt.Sprintf(" (%s killed, %s paused)", Plural(n.NodesKilled, "node"), Plural(n.NodesPaused, "node"))
	}
	if empty := EmptyStepsText(n.EmptySteps); empty != "" {
		text += "; not counted: " + esc(empty)
	}
	if m := n.LiveMajority; m != nil {
		text += fmt.Sprintf("; a live majority (%d of %d nodes up and connected) %.0f%% of the run", m.Majority, m.Nodes, 100*m.Fraction)
	}
	if len(n.NeverApplied) > 0 {
		text += fmt.Sprintf("; <strong>never took effect: %s</strong> (the run did not test it)", esc(strings.Join(n.NeverApplied, ", ")))
	}
	return text
}

// EmptyStepsText names the nemesis steps that hit no node: "1 partition
// that cut nobody off, 2 pauses that found no node running"; "" for none.
func EmptyStepsText(empty map[string]int) string {
	kinds := map[string]string{workloads.StartPartition: workloads.FaultPartition, workloads.NemesisKill: workloads.FaultKill,
		workloads.NemesisPause: workloads.FaultPause}
	var parts []string
	for _, f := range []string{workloads.StartPartition, workloads.NemesisKill, workloads.NemesisPause} {
		if n := empty[f]; n > 0 {
			parts = append(parts, EmptyFaults(kinds[f], n))
		}
	}
	return strings.Join(parts, ", ")
}

// checkerFigures say what the workload checker found: the violations by
// kind and the first one in full, with links to the pages that show it.
func checkerFigures(res *Results) [][2]string {
	f, ok := FindingsOf(res.Checker)
	if !ok || (f.Violations == 0 && f.Problems == 0) {
		return nil
	}
	var rows [][2]string
	if f.Violations > 0 {
		links := []string{fmt.Sprintf("<a href=\"%s\">timeline</a>", f.Timeline)}
		if slices.Contains(res.Reports, MessagesFile) { // a network without a journal draws none
			links = append(links, fmt.Sprintf("<a href=\"%s\">messages</a>", MessagesFile))
		}
		if f.Details != "" {
			links = append(links, fmt.Sprintf("every one: <a href=\"%s\">%s</a>", esc(f.Details), esc(f.Details)))
		}
		rows = append(rows,
			[2]string{"violations", fmt.Sprintf("<span class=\"count\">%d</span>: %s", f.Violations, esc(f.KindsText()))},
			[2]string{"first violation", fmt.Sprintf("<span id=\"first-violation\">%s</span> (%s)", esc(f.First), strings.Join(links, ", "))})
	}
	if f.Problems > 0 {
		rows = append(rows, [2]string{"history problems", fmt.Sprintf("%d; the first: <code>%s</code>", f.Problems, esc(f.FirstProblem))})
	}
	return rows
}

// networkWords says which network ran.
func networkWords(name string) string {
	switch name {
	case "netns":
		return "netns: every node `BIN serve` in its own Linux network namespace, HTTP clients, faults by the kernel (no message counts or message diagram: the kernel carries the messages; results.json network_observed has what it counted)"
	case "sim", "":
		return "sim: Maelstrom's process model over the simulated network"
	}
	return name
}

// leaseFigures are the lease workload's own figures, when it ran.
func leaseFigures(res *Results) [][2]string {
	var rows [][2]string
	if lr, ok := leaseSummaryOf(res.Checker); ok {
		t := lr.Totals
		text := fmt.Sprintf("%s, %s, %s, %s", Plural(lr.ChunkCount, "chunk"), Plural(t.Holdings, "holding"), Plural(t.Reads, "read"),
			Plural(t.Violations, "violation"))
		if lr.Details != "" {
			text += fmt.Sprintf("; every chunk's holdings and violations: <a href=\"%s\">%s</a>", esc(lr.Details), esc(lr.Details))
		}
		rows = append(rows, [2]string{"lease checker", text})
	}
	if st, ok := res.WorkloadStats.(lease.LeaseStatsResult); ok {
		a := st.Availability
		rows = append(rows,
			[2]string{"availability", fmt.Sprintf("ok fraction %.3f outside partitions, %.3f inside", a.OutsidePartition.All.Fraction, a.InsidePartition.All.Fraction)},
			[2]string{"failover", fmt.Sprintf("%d times, median %.0f ms, max %.0f ms; %d holdings began inside partitions",
				st.Failover.Count, st.Failover.MedianMs, st.Failover.MaxMs, st.HoldingsInPartitions)})
	}
	return rows
}

// masterFigures are the master workload's own figures, when it ran: the
// checker's counts, and how much of the run had a master.
func masterFigures(res *Results) [][2]string {
	var rows [][2]string
	if mr, ok := res.Checker.(master.MasterResult); ok {
		text := fmt.Sprintf("%s, %s, %s, %s, %s; <a href=\"%s\">timeline</a>", Plural(mr.IsMasterAnswers, "is_master answer"),
			Plural(len(mr.Tenures), "tenure"), Plural(mr.ViolationCount, "violation"), Plural(mr.ProblemCount, "history problem"),
			Plural(mr.AnomalyCount, "anomaly"), MasterTimelineFile)
		if mr.Details != "" {
			text += fmt.Sprintf("; every violation: <a href=\"%s\">%s</a>", esc(mr.Details), esc(mr.Details))
		}
		rows = append(rows, [2]string{"master checker", text})
	}
	if st, ok := res.WorkloadStats.(master.MasterStatsResult); ok {
		m := st.Mastership
		rows = append(rows, [2]string{"mastership", fmt.Sprintf("a master %s of the run (%s outside faults, %s inside); %s; failover median %s outside faults, %s inside",
			fraction(m.Overall.Fraction), fraction(m.OutsideFaults.Fraction), fraction(m.InsideFaults.Fraction),
			Plural(m.MasterChanges, "master change"), medianMs(st.Failover.OutsideFaultsMs), medianMs(st.Failover.InsideFaultsMs))})
	}
	return rows
}

func fraction(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

func medianMs(p workloads.Percentiles) string {
	if p.Count == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f ms", p.P50)
}

// leaseSummaryOf reads the lease checker's details: the analysis's
// summary, or a whole LeaseResult.
func leaseSummaryOf(checker any) (lease.LeaseSummary, bool) {
	switch c := checker.(type) {
	case lease.LeaseSummary:
		return c, true
	case lease.LeaseResult:
		return lease.SummarizeLease(c), true
	}
	return lease.LeaseSummary{}, false
}

// indexFiles lists the run's files with their notes: the known ones in
// order, then the others, then each node's log.
func indexFiles(dir string, res *Results) [][2]string {
	present := append(ListFiles(dir), "results.json") // written right after this page
	var out [][2]string
	for _, f := range fileNotes {
		if slices.Contains(present, f.name) || slices.Contains(res.Reports, f.name) {
			out = append(out, [2]string{f.name, ": " + esc(f.note)})
		}
	}
	for _, name := range append(present, res.Reports...) {
		known := slices.ContainsFunc(fileNotes, func(f struct{ name, note string }) bool { return f.name == name })
		if !known && name != IndexFile && !slices.ContainsFunc(out, func(o [2]string) bool { return o[0] == name }) {
			out = append(out, [2]string{name, ""})
		}
	}
	for _, log := range ListFiles(filepath.Join(dir, "node-logs")) {
		out = append(out, [2]string{"node-logs/" + log, ": the node's stderr"})
	}
	return out
}
