package master

import (
	"cmp"
	"math"
	"slices"

	"chunklease/workloads"
)

// TimelineInput is everything the master timeline (drawn by package
// report) shows: one lane per node with the times that node believed it
// was master (its tenures: the union of [completion, invoke +
// remaining_ms) of its is_master answers), each node's violation marks,
// the faults, and the first violations listed. Its size follows the
// tenures (one per change of mastership), not the ops or the violations.
type TimelineInput struct {
	Valid bool
	// Nodes are the lanes, in natural order: every node the history's
	// client ops name, and any node a tenure names.
	Nodes   []string
	Tenures []MasterTenure // by start
	// ViolationCount counts every violation; Earliest are the first
	// ListedViolations, in start order.
	ViolationCount int
	Earliest       []MasterViolation
	// Marks are, for each node, the times it was master together with
	// another node: the union of the overlaps it took part in.
	Marks                      []ViolationMark
	ProblemCount, AnomalyCount int
	Faults                     []workloads.Fault
	EndNs                      int64  // the right edge: the last op or tenure end
	DetailsFile                string // the file that lists every violation; "" for none
}

// ViolationMark is a stretch of one node's lane during which that node
// and some other node both believed they were master: Count overlaps
// merged, First the earliest of them.
type ViolationMark struct {
	Node           string
	StartNs, EndNs int64
	Count          int
	First          MasterViolation
}

// ListedViolations is how many violations the timeline lists at the top.
const ListedViolations = 50

// TimelineInputOf gathers the master timeline from CheckMaster's whole
// result (every violation: the marks are drawn from all of them), the
// run's node ids, its faults (workloads.FaultsOf) and its last op time.
func TimelineInputOf(res MasterResult, nodes []string, faults []workloads.Fault, endNs int64, details string) TimelineInput {
	in := TimelineInput{Valid: res.Valid, Nodes: slices.Clone(nodes), Tenures: res.Tenures,
		ViolationCount: len(res.Violations), ProblemCount: len(res.Problems), AnomalyCount: len(res.Anomalies),
		Faults: faults, EndNs: max(endNs, 1), DetailsFile: details}
	for _, t := range res.Tenures {
		if !slices.Contains(in.Nodes, t.Node) {
			in.Nodes = append(in.Nodes, t.Node)
		}
		if t.EndNs != math.MaxInt64 {
			in.EndNs = max(in.EndNs, t.EndNs)
		}
	}
	slices.SortFunc(in.Nodes, workloads.CompareNatural)
	in.Earliest = res.Violations[:min(len(res.Violations), ListedViolations)]
	in.Marks = violationMarks(res.Violations)
	return in
}

// violationMarks merges, node by node, the overlaps each node took part
// in where they overlap or touch.
func violationMarks(vs []MasterViolation) []ViolationMark {
	byNode := map[string][]MasterViolation{}
	for _, v := range vs {
		for _, n := range v.Nodes {
			byNode[n] = append(byNode[n], v)
		}
	}
	var out []ViolationMark
	for node, list := range byNode {
		slices.SortStableFunc(list, func(a, b MasterViolation) int { return cmp.Compare(a.StartNs, b.StartNs) })
		first := len(out) // the node's marks are out[first:]
		for _, v := range list {
			if last := len(out) - 1; last >= first && v.StartNs <= out[last].EndNs {
				out[last].EndNs, out[last].Count = max(out[last].EndNs, v.EndNs), out[last].Count+1
				continue
			}
			out = append(out, ViolationMark{Node: node, StartNs: v.StartNs, EndNs: v.EndNs, Count: 1, First: v})
		}
	}
	slices.SortFunc(out, func(a, b ViolationMark) int {
		return cmp.Or(workloads.CompareNatural(a.Node, b.Node), cmp.Compare(a.StartNs, b.StartNs))
	})
	return out
}
