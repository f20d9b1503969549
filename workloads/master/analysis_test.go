package master

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"chunklease/internal/testseed"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

// TestMasterAnalysisMatchesCheckMaster: the master analysis of a history
// read back from disk reaches CheckMaster's verdict and MasterStats's
// figures; results.json gets SummarizeMaster's summary, the detail file
// every violation, and the timeline every tenure. With a broken service
// (a node that always claims mastership) the summary keeps the first 20
// violations and the true count.
func TestMasterAnalysisMatchesCheckMaster(t *testing.T) {
	seed := int64(testseed.Get(t))
	for _, broken := range []bool{false, true} {
		svc := newIdealMaster(seed, 5)
		svc.lossRate, svc.failRate = 0.02, 0.02
		svc.outages = []workloads.Interval{{StartNs: 3e9, EndNs: 5e9}, {StartNs: 9e9, EndNs: 10e9}}
		if broken {
			svc.alwaysOwner = 2
		}
		ops := masterSimRun(t, svc, seed, 15*time.Second)
		dir := t.TempDir()
		got := workloadtest.Analyze(t, NewMaster(MasterOptions{}, 1), ops, dir, 99)
		res := CheckMaster(ops)
		if g, w := workloadtest.JSONOf(t, got.Result.Details), workloadtest.JSONOf(t, SummarizeMaster(res, MasterDetailsFile)); g != w {
			t.Errorf("result:\n%.800s\nwant:\n%.800s", g, w)
		}
		if g, w := workloadtest.JSONOf(t, got.Stats), workloadtest.JSONOf(t, MasterStats(ops, res.Tenures, 99)); g != w {
			t.Errorf("statistics:\n%s\nwant:\n%s", g, w)
		}
		sum := got.Result.Details.(MasterResult)
		byKind := 0
		for _, n := range sum.ViolationsByKind {
			byKind += n
		}
		if broken && (res.ViolationCount <= SummaryViolations || len(sum.Violations) != SummaryViolations ||
			sum.ViolationCount != res.ViolationCount || sum.ViolationsByKind[TwoMasters] == 0 || byKind != res.ViolationCount) {
			t.Errorf("broken service: %d violations, the summary lists %d and counts %d (%v); want more than %d, %d listed and all counted",
				res.ViolationCount, len(sum.Violations), sum.ViolationCount, sum.ViolationsByKind, SummaryViolations, SummaryViolations)
		}
		if !broken && res.ViolationCount != 0 {
			t.Errorf("ideal service: %d violations", res.ViolationCount)
		}
		checkMasterDetails(t, filepath.Join(dir, MasterDetailsFile), res)
		if len(got.Pictures) != 1 {
			t.Fatalf("pictures %d, want the master timeline", len(got.Pictures))
		}
		in := got.Pictures[0].(TimelineInput)
		if len(in.Tenures) != len(res.Tenures) || in.ViolationCount != res.ViolationCount || len(in.Nodes) != 5 ||
			(broken && len(in.Marks) == 0) || (!broken && len(in.Marks) != 0) {
			t.Errorf("timeline: %d tenures, %d violations, nodes %v, %d marks; want %d tenures, %d violations, 5 nodes",
				len(in.Tenures), in.ViolationCount, in.Nodes, len(in.Marks), len(res.Tenures), res.ViolationCount)
		}
	}
}

// checkMasterDetails: the detail file has one line per violation, problem
// and anomaly of res, in that order, each equal to res's.
func checkMasterDetails(t *testing.T, path string, res MasterResult) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	for _, v := range res.Violations {
		want = append(want, workloadtest.JSONOf(t, map[string]any{"violation": v}))
	}
	for _, p := range res.Problems {
		want = append(want, workloadtest.JSONOf(t, map[string]any{"problem": p}))
	}
	for _, p := range res.Anomalies {
		want = append(want, workloadtest.JSONOf(t, map[string]any{"anomaly": p}))
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	i := 0
	for ; sc.Scan(); i++ {
		var line any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i < len(want) && workloadtest.JSONOf(t, line) != normalized(t, want[i]) {
			t.Errorf("line %d: %s, want %s", i+1, sc.Bytes(), want[i])
		}
	}
	if i != len(want) {
		t.Errorf("%d lines, want %d", i, len(want))
	}
}

// normalized re-encodes a JSON text through any, as the file's lines are.
func normalized(t *testing.T, s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return workloadtest.JSONOf(t, v)
}

// TestViolationMarksMergePerNode: each node's overlaps merge where they
// overlap or touch, and count what they merged.
func TestViolationMarksMergePerNode(t *testing.T) {
	vs := []MasterViolation{
		{Kind: TwoMasters, Nodes: []string{"n1", "n2"}, StartNs: 10, EndNs: 20},
		{Kind: TwoMasters, Nodes: []string{"n1", "n3"}, StartNs: 15, EndNs: 30},
		{Kind: TwoMasters, Nodes: []string{"n2", "n3"}, StartNs: 40, EndNs: 50},
	}
	got := violationMarks(vs)
	want := []ViolationMark{
		{Node: "n1", StartNs: 10, EndNs: 30, Count: 2, First: vs[0]},
		{Node: "n2", StartNs: 10, EndNs: 20, Count: 1, First: vs[0]},
		{Node: "n2", StartNs: 40, EndNs: 50, Count: 1, First: vs[2]},
		{Node: "n3", StartNs: 15, EndNs: 30, Count: 1, First: vs[1]},
		{Node: "n3", StartNs: 40, EndNs: 50, Count: 1, First: vs[2]},
	}
	if workloadtest.JSONOf(t, got) != workloadtest.JSONOf(t, want) {
		t.Errorf("marks\n%+v\nwant\n%+v", got, want)
	}
}
