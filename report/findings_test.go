package report

import (
	"strings"
	"testing"

	"chunklease/history"
	"chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// TestFindingsLines: an invalid lease or master result gives the
// console's lines: the count by kind (commonest first), the first
// violation in full, the first problem, and where to read every one; a
// valid one gives none, and a checker of no known kind is not read.
func TestFindingsLines(t *testing.T) {
	ls := lease.LeaseSummary{Totals: lease.ChunkCounts{Violations: 5}, ViolationsByKind: map[string]int{lease.TwoPrimaries: 2, lease.ReadNoHolder: 3},
		Violations: []lease.Violation{{Kind: lease.TwoPrimaries, Chunk: "ch_1", StartNs: 33e6,
			Text: "cs2 (grant ops 2-3 via n0) and cs1 (grant ops 4-5 via n1) both held ch_1 for 3 ms"}},
		ProblemCount: 1, Problems: []history.Problem{{Index: 7, Text: "bad"}}, Details: lease.LeaseDetailsFile}
	f, ok := FindingsOf(ls)
	got := strings.Join(f.Lines(), "\n")
	want := "violations: 5 (read-no-holder 3, two-primaries 2)\n" +
		"the first: two-primaries on ch_1 at 0.033 s: cs2 (grant ops 2-3 via n0) and cs1 (grant ops 4-5 via n1) both held ch_1 for 3 ms\n" +
		`history problems: 1; the first: {"index":7,"text":"bad"}` + "\n" +
		"every one in lease-details.jsonl, drawn in lease-timeline.html"
	if !ok || got != want {
		t.Errorf("lease lines:\n%s\nwant:\n%s", got, want)
	}
	mr := master.MasterResult{ViolationCount: 4499, ViolationsByKind: map[string]int{master.TwoMasters: 4499},
		Violations: []master.MasterViolation{{Kind: master.TwoMasters, StartNs: 182e6, Text: "n2 (status ops 12-13 via n2, ...) and n1 (...)"}},
		Details:    master.MasterDetailsFile}
	f, ok = FindingsOf(mr)
	if lines := f.Lines(); !ok || len(lines) != 3 || lines[0] != "violations: 4499 (two-masters 4499)" ||
		lines[1] != "the first: two-masters at 0.182 s: n2 (status ops 12-13 via n2, ...) and n1 (...)" ||
		lines[2] != "every one in master-details.jsonl, drawn in master-timeline.html" {
		t.Errorf("master lines %q", lines)
	}
	if f, ok := FindingsOf(lease.LeaseSummary{Valid: true}); !ok || len(f.Lines()) != 0 {
		t.Errorf("a valid run: %q", f.Lines())
	}
	if _, ok := FindingsOf("echo"); ok {
		t.Error("an unknown checker's details were read")
	}
}
