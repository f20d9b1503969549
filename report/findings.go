package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// Findings is what a workload checker's details say about the history's
// violations and problems, in words the console and the index share:
// how many of each kind, and the first one in full (with the servers,
// the op indices and the node that answered each op).
type Findings struct {
	Violations   int
	ByKind       map[string]int
	First        string // the earliest violation: "two-primaries on ch_1 at 0.033 s: cs2 (grant ops 2-3 via n1) and ..."
	Problems     int
	FirstProblem string // the first history problem, as JSON
	Details      string // the file that lists every violation; "" for none
	Timeline     string // the page that draws them; "" for none
}

// FindingsOf reads a workload checker's details (results.json's section
// under the workload's name): the lease checker's LeaseSummary or
// LeaseResult, the master checker's MasterResult. ok is false for a
// checker it does not know (echo has no violations to count).
func FindingsOf(checker any) (f Findings, ok bool) {
	switch c := checker.(type) {
	case lease.LeaseResult:
		return FindingsOf(lease.SummarizeLease(c))
	case lease.LeaseSummary:
		f = Findings{Violations: c.Totals.Violations, ByKind: c.ViolationsByKind, Problems: c.ProblemCount,
			Details: c.Details, Timeline: LeaseTimelineFile}
		if len(c.Violations) > 0 {
			v := c.Violations[0]
			f.First = fmt.Sprintf("%s on %s at %.3f s: %s", v.Kind, v.Chunk, float64(v.StartNs)/1e9, v.Text)
		}
		f.FirstProblem = firstProblem(c.Problems)
		return f, true
	case master.MasterResult:
		f = Findings{Violations: c.ViolationCount, ByKind: c.ViolationsByKind, Problems: c.ProblemCount,
			Details: c.Details, Timeline: MasterTimelineFile}
		if len(c.Violations) > 0 {
			v := c.Violations[0]
			f.First = fmt.Sprintf("%s at %.3f s: %s", v.Kind, float64(v.StartNs)/1e9, v.Text)
		}
		f.FirstProblem = firstProblem(c.Problems)
		return f, true
	}
	return Findings{}, false
}

func firstProblem[P any](ps []P) string {
	if len(ps) == 0 {
		return ""
	}
	raw, _ := json.Marshal(ps[0]) // a plain struct always marshals
	return string(raw)
}

// KindsText counts the violations by kind, the commonest first:
// "read-wrong-holder 603, two-primaries 400".
func (f Findings) KindsText() string {
	kinds := slices.SortedFunc(maps.Keys(f.ByKind), func(a, b string) int {
		return cmp.Or(cmp.Compare(f.ByKind[b], f.ByKind[a]), strings.Compare(a, b))
	})
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, f.ByKind[k]))
	}
	return strings.Join(parts, ", ")
}

// Lines are the console's lines about the findings, none when there are
// none: the violations by kind, the first violation in full, the first
// history problem, and where to read every one.
func (f Findings) Lines() []string {
	var lines []string
	if f.Violations > 0 {
		lines = append(lines, fmt.Sprintf("violations: %d (%s)", f.Violations, f.KindsText()))
		if f.First != "" {
			lines = append(lines, "the first: "+f.First)
		}
	}
	if f.Problems > 0 {
		lines = append(lines, fmt.Sprintf("history problems: %d; the first: %s", f.Problems, f.FirstProblem))
	}
	if len(lines) > 0 && (f.Details != "" || f.Timeline != "") {
		var where []string
		if f.Details != "" {
			where = append(where, "every one in "+f.Details)
		}
		if f.Timeline != "" {
			where = append(where, "drawn in "+f.Timeline)
		}
		lines = append(lines, strings.Join(where, ", "))
	}
	return lines
}
