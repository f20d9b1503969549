package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// TestIndexPage: the index names the verdict and the first violation,
// and links every file of the run, each of which exists.
func TestIndexPage(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "node-logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"history.jsonl", "results.json", "node-logs/n1.log", LeaseTimelineFile, lease.LeaseDetailsFile} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	invalid := false
	res := &Results{Workload: "lease", Seed: 42, Command: []string{"maelstrom", "test", "-w", "lease"},
		Checks: Checks{Workload: &invalid, Stats: true, Availability: true, Net: true},
		Checker: lease.LeaseSummary{Totals: lease.ChunkCounts{Violations: 3}, ViolationsByKind: map[string]int{lease.TwoPrimaries: 2, lease.ReadNoHolder: 1},
			Violations: []lease.Violation{{Kind: lease.TwoPrimaries, Chunk: "ch_3", StartNs: 1.5e9,
				Text: "cs1 (grant ops 6-7 via n0) and cs3 (grant ops 14-15 via n2) both held ch_3 for 2 ms"}},
			Details: lease.LeaseDetailsFile},
		Nemesis: NemesisResult{Faults: "partition,pause", IntervalS: 2, Periods: map[string]int{"partition": 1, "pause": 2}, NodesPaused: 3,
			EmptySteps: map[string]int{"start-partition": 1}},
		Reports: []string{LeaseTimelineFile, lease.LeaseDetailsFile}}
	if err := WriteMessageDiagram(dir, nil, time.Now(), false, nil, []string{"n1"}, nil); err != nil {
		t.Fatal(err)
	}
	res.Reports = append(res.Reports, MessagesFile)
	res.Timing = Timing{RunS: 12, AnalysisS: 0.5, TimeLimitS: 10}
	if err := WriteIndex(dir, res, []string{"n1"}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{`<span class="invalid">INVALID: the lease checker found violations`,
		"two-primaries on ch_3 at 1.500 s: cs1 (grant ops 6-7 via n0) and cs3 (grant ops 14-15 via n2)", `<span class="count">3</span>: two-primaries 2, read-no-holder 1`,
		"partition,pause, a step every 2 s: 1 partition period, 2 pause periods (0 nodes killed, 3 nodes paused); not counted: 1 partition that cut nobody off",
		"<code>42</code>", "maelstrom test -w lease", "0.5 s after 12.0 s of run",
		`href="lease-details.jsonl"`} {
		if !strings.Contains(s, want) {
			t.Errorf("the index lacks %q", want)
		}
	}
	links := 0
	for _, part := range strings.Split(s, `href="`)[1:] {
		target := part[:strings.IndexByte(part, '"')]
		links++
		if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
			t.Errorf("the index links %q, which does not exist", target)
		}
	}
	if links < 6 || !strings.Contains(s, `href="messages.svg"`) || !strings.Contains(s, `href="node-logs/n1.log"`) {
		t.Errorf("the index has %d links; want the timeline, the diagram, the history, the results and the logs", links)
	}
}

// TestMasterIndexPage: a master run's index shows the violation count,
// the first violation in full and links the master timeline.
func TestMasterIndexPage(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"history.jsonl", MasterTimelineFile, master.MasterDetailsFile} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	invalid := false
	v := master.MasterViolation{Kind: master.TwoMasters, Nodes: []string{"n1", "n2"}, Ops: []int{3, 4, 9, 10}, StartNs: 2e9, EndNs: 2.5e9,
		Text: "n1 (status ops 3-4, ...) and n2 (status ops 9-10, ...) were both master for 500ms from 2s"}
	res := &Results{Workload: "master", Checks: Checks{Workload: &invalid, Stats: true, Availability: true, Net: true},
		Checker: master.MasterResult{ViolationCount: 3230, ViolationsByKind: map[string]int{master.TwoMasters: 3230},
			Violations: []master.MasterViolation{v}, Details: master.MasterDetailsFile},
		Reports: []string{master.MasterDetailsFile, MasterTimelineFile}}
	if err := WriteIndex(dir, res, []string{"n1", "n2"}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="count">3230</span>: two-masters 3230`,
		`<span id="first-violation">two-masters at 2.000 s: n1 (status ops 3-4, ...) and n2 (status ops 9-10, ...) were both master`,
		`<a href="master-timeline.html">timeline</a>`, `href="master-details.jsonl"`, "3230 violations"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the index lacks %q", want)
		}
	}
}
