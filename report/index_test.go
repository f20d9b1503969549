package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chunklease/workloads/lease"
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
		Checker: lease.LeaseSummary{Violations: []lease.Violation{{Kind: lease.TwoPrimaries, Chunk: "ch_3", StartNs: 1.5e9}},
			Details: lease.LeaseDetailsFile},
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
		"two-primaries on ch_3 at 1.500 s", "<code>42</code>", "maelstrom test -w lease", "0.5 s after 12.0 s of run",
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
