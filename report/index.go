package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"chunklease/workloads/lease"
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
	{lease.LeaseDetailsFile, "every chunk's op counts, holdings and violations, one JSON object a line (results.json has the summary)"},
	{MessagesFile, "message diagram (Lamport): the first seconds, and the messages about the chunk of the first violation"},
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
	rows = append(rows, leaseFigures(res)...)
	if t := res.Timing; t.AnalysisS > 0 {
		rows = append(rows, [2]string{"analysis", fmt.Sprintf("%.1f s after %.1f s of run (time limit %.0f s); peak memory: harness %.0f MiB, largest node %.0f MiB",
			t.AnalysisS, t.RunS, t.TimeLimitS, res.Memory.HarnessPeakMiB, res.Memory.NodePeakMiB)})
	}
	rows = append(rows,
		[2]string{"seed", fmt.Sprintf("<code>%d</code> (the same seed replays the nemesis schedule and the latency draws; README: Reproducing a run)", res.Seed)},
		[2]string{"command", "<code>" + esc(strings.Join(res.Command, " ")) + "</code>"})
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
		text := fmt.Sprintf("%d chunks, %d holdings, %d violations", lr.ChunkCount, t.Holdings, t.Violations)
		if len(lr.Violations) > 0 {
			v := lr.Violations[0]
			text += fmt.Sprintf("; the first: %s on %s at %.3f s (<a href=\"%s\">timeline</a>", esc(v.Kind), esc(v.Chunk), float64(v.StartNs)/1e9, LeaseTimelineFile)
			if slices.Contains(res.Reports, MessagesFile) { // a network without a journal draws none
				text += fmt.Sprintf(", <a href=\"%s\">messages</a>", MessagesFile)
			}
			text += ")"
		}
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
