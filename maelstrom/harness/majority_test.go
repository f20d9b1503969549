package harness

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"chunklease/maelstrom/nemesis"
	"chunklease/report"
	"chunklease/workloads"
)

// step is a completed nemesis step at second s.
func step(s float64, f string, nodes ...string) workloads.NemesisStep {
	v, _ := json.Marshal(nodes)
	return workloads.NemesisStep{F: f, DoneNs: int64(s * float64(time.Second)), Nodes: nodes, Value: v}
}

// partitionStep is a start-partition completion with grudge g at second s.
func partitionStep(s float64, g map[string][]string) workloads.NemesisStep {
	v, _ := json.Marshal([]any{"isolated", g})
	return workloads.NemesisStep{F: nemesis.StartPartition, DoneNs: int64(s * float64(time.Second)), Value: v}
}

// TestLiveMajority: the fraction of the main phase with a node that is
// up and reaches a majority both ways, under kills, pauses and partitions
// of each shape, with the final phase's heals left out.
func TestLiveMajority(t *testing.T) {
	three := []string{"n1", "n2", "n3"}
	five := []string{"n1", "n2", "n3", "n4", "n5"}
	cases := []struct {
		name                     string
		nodes                    []string
		steps                    []workloads.NemesisStep
		fraction, gapS, allDownS float64
	}{
		{"no fault took effect", three, nil, 1, 0, 0},
		{"every node killed for 3 s", three, []workloads.NemesisStep{
			step(1, nemesis.KillOp, three...), step(4, nemesis.StartOp, three...)}, 0.7, 3, 3},
		{"one killed, one paused: one node up of three", three, []workloads.NemesisStep{
			step(2, nemesis.KillOp, "n1"), step(3, nemesis.PauseOp, "n2"), step(5, nemesis.ResumeOp, "n2"),
			step(6, nemesis.StartOp, "n1")}, 0.8, 2, 0},
		{"a minority killed: a majority stays", five, []workloads.NemesisStep{
			step(0, nemesis.KillOp, "n1", "n2"), step(8, nemesis.StartOp, "n1", "n2")}, 1, 0, 0},
		{"a kill takes a paused node: the start brings it back", three, []workloads.NemesisStep{
			step(1, nemesis.PauseOp, "n1", "n2"), step(2, nemesis.KillOp, "n2"), step(3, nemesis.ResumeOp, "n1"),
			step(5, nemesis.StartOp, "n2")}, 0.8, 2, 0},
		{"majority split 2|3: the three", five, []workloads.NemesisStep{
			partitionStep(1, map[string][]string{"n1": {"n3", "n4", "n5"}, "n2": {"n3", "n4", "n5"},
				"n3": {"n1", "n2"}, "n4": {"n1", "n2"}, "n5": {"n1", "n2"}}),
			step(9, nemesis.StopPartition)}, 1, 0, 0},
		{"majority split and one of the three killed", five, []workloads.NemesisStep{
			partitionStep(1, map[string][]string{"n1": {"n3", "n4", "n5"}, "n2": {"n3", "n4", "n5"},
				"n3": {"n1", "n2"}, "n4": {"n1", "n2"}, "n5": {"n1", "n2"}}),
			step(2, nemesis.KillOp, "n5"), step(4, nemesis.StopPartition), step(6, nemesis.StartOp, "n5")}, 0.8, 2, 0},
		// At three nodes Jepsen's majorities ring is directed: each node
		// hears only its predecessor, so no two nodes talk both ways.
		{"the directed ring at three nodes", three, []workloads.NemesisStep{
			partitionStep(5, map[string][]string{"n1": {"n3"}, "n2": {"n1"}, "n3": {"n2"}}),
			step(7.5, nemesis.StopPartition)}, 0.75, 2.5, 0},
		{"the final phase's heals do not count", three, []workloads.NemesisStep{
			step(6, nemesis.KillOp, three...), step(11, nemesis.StartOp, three...)}, 0.6, 4, 4},
		{"clock and packet faults cut no one off", three, []workloads.NemesisStep{
			step(1, nemesis.StartPacket), step(2, nemesis.ClockSkew), step(9, nemesis.StopPacket)}, 1, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := computeLiveMajority(c.steps, c.nodes, 10*time.Second)
			if m == nil || math.Abs(m.Fraction-c.fraction) > 1e-9 || math.Abs(m.LongestGapS-c.gapS) > 1e-9 || math.Abs(m.AllDownS-c.allDownS) > 1e-9 {
				t.Fatalf("got %+v, want fraction %v, longest gap %v s, all down %v s", m, c.fraction, c.gapS, c.allDownS)
			}
			if m.Nodes != len(c.nodes) || m.Majority != len(c.nodes)/2+1 || m.MainPhaseS != 10 {
				t.Errorf("nodes %d majority %d main phase %v s", m.Nodes, m.Majority, m.MainPhaseS)
			}
		})
	}
}

// TestNeverApplied: a requested fault that never hit a node is named,
// with a warning that says how many of its ops ran; one that hit a node
// in the main phase is not; a run with a live majority less than half
// the time gets a warning too.
func TestNeverApplied(t *testing.T) {
	faults, err := nemesis.ParseFaults("partition,kill,pause,clock,packet")
	if err != nil {
		t.Fatal(err)
	}
	steps := []workloads.NemesisStep{
		step(0, nemesis.PauseOp), // found no running node
		step(1, nemesis.KillOp, "n1"),
		step(2, nemesis.StartOp, "n1"),
		partitionStep(3, map[string][]string{"n1": {}, "n2": {}, "n3": {}}), // minority-third at 3 nodes: nobody
		{F: nemesis.ClockSkew, DoneNs: int64(4 * time.Second), Value: json.RawMessage(`{}`)},
		{F: nemesis.StartPacket, DoneNs: int64(5 * time.Second), Nodes: []string{"n2"}, Value: json.RawMessage(`{"nodes":["n2"]}`)},
		step(12, nemesis.PauseOp, "n1"), // the final phase is not the run
	}
	got := neverApplied(faults, steps, 10*time.Second)
	if want := []string{"partition", "pause", "clock"}; !slices.Equal(got, want) {
		t.Fatalf("never applied %v, want %v", got, want)
	}
	// The member fault took effect once a node answered a change with a
	// configuration; refusals and timeouts do not count.
	member, _ := nemesis.ParseFaults("member")
	refused := workloads.NemesisStep{F: nemesis.MemberOp, DoneNs: int64(time.Second), Value: json.RawMessage(`{"op":"remove","node":"n1","error":11}`)}
	answered := workloads.NemesisStep{F: nemesis.MemberOp, DoneNs: int64(2 * time.Second), Value: json.RawMessage(`{"op":"remove","node":"n1","epoch":1}`)}
	if got := neverApplied(member, []workloads.NemesisStep{refused}, 10*time.Second); !slices.Equal(got, []string{"member"}) {
		t.Errorf("member refused only: never applied %v, want [member]", got)
	}
	if got := neverApplied(member, []workloads.NemesisStep{refused, answered}, 10*time.Second); len(got) != 0 {
		t.Errorf("member answered with epoch 1: never applied %v, want none", got)
	}
	n := report.NemesisResult{NeverApplied: got, Ops: map[string]int{"pause": 2, "start-partition": 1},
		LiveMajority: &report.LiveMajority{Fraction: 0.3, LongestGapS: 4, AllDownS: 3, Nodes: 5, Majority: 3}}
	warnings := strings.Join(faultWarnings(n), "\n")
	for _, want := range []string{
		"WARNING: --nemesis pause was requested, but no pause fault took effect during the run (2 pause ops, none of which hit a node)",
		"WARNING: --nemesis clock was requested, but no clock fault took effect during the run (the schedule reached no clock-skew op before the time limit)",
		"WARNING: --nemesis partition was requested",
		"WARNING: a majority of the nodes (3 of 5) was up and connected for only 30% of the run (the longest stretch without one 4.0 s; every node down for 3.0 s)",
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("the warnings do not say %q:\n%s", want, warnings)
		}
	}
	n.NeverApplied, n.LiveMajority.Fraction = nil, 0.5
	if w := faultWarnings(n); len(w) != 0 {
		t.Errorf("warnings for a run with every fault applied and a live majority half the time: %v", w)
	}
}
