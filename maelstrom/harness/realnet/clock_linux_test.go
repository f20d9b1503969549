package realnet

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"chunklease/history"
	"chunklease/internal/clock"
	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/nemesis"
)

var clockfaultBuild struct {
	once sync.Once
	node string
	err  error
}

// clockfaultNode builds lease-node with -tags clockfault next to the other
// test binaries, once per test binary.
func clockfaultNode(t *testing.T) string {
	t.Helper()
	node, _ := binaries(t)
	clockfaultBuild.once.Do(func() {
		clockfaultBuild.node = filepath.Join(filepath.Dir(node), "lease-node-clockfault")
		if out, err := exec.Command("go", "build", "-tags", "clockfault", "-o", clockfaultBuild.node, "chunklease").CombinedOutput(); err != nil {
			clockfaultBuild.err = fmt.Errorf("building the clockfault node: %v\n%s", err, out)
		}
	})
	if clockfaultBuild.err != nil {
		t.Fatal(clockfaultBuild.err)
	}
	return clockfaultBuild.node
}

// TestClockFileAtEveryStart: the clock fault on the real network, under
// kills, on a clockfault build. Every program of every node, restarts
// included, follows its clock file in the run directory (its log says so
// once per program started); the history has clock skews with each
// node's settings; the run stays valid within the nodes' bounds; the
// final phase resets every clock before it starts the killed nodes again;
// nothing is left.
func TestClockFileAtEveryStart(t *testing.T) {
	node := clockfaultNode(t)
	before := viewRoot(t)
	o, console := leaseRun(t, node, 3, 8, nemesis.Faults{Kill: true, Clock: true})
	out := harness.Run(context.Background(), o)
	res := out.Results
	switch {
	case out.Exit == harness.ExitInvalid && res != nil && res.Checks.Workload != nil && *res.Checks.Workload && !res.Checks.Stats:
		t.Logf("valid for the lease checker; the stats checker found %s", res.FailedChecks())
	case out.Exit != harness.ExitValid:
		t.Fatalf("exit %d (%v), want valid\n%s", out.Exit, out.Err, console)
	}
	if c := res.Nemesis.Clock; c == nil || !c.WithinBound {
		t.Errorf("results.json nemesis.clock %+v, want a run within the nodes' bounds", c)
	}
	programs := observedPrograms(t, res)
	restarted := 0
	for _, id := range o.Nodes {
		want := clock.FollowingNote(filepath.Join(out.Dir, "clock", id+".json"))
		if got := countLines(t, filepath.Join(out.Dir, "node-logs", id+".log"), want); got != programs[id] || got == 0 {
			t.Errorf("%s: %d programs, %d log lines %q", id, programs[id], got, want)
		}
		restarted += programs[id] - 1
	}
	if restarted == 0 {
		t.Errorf("no node was restarted (seed %d): the test saw no restart follow its clock file", o.Seed)
	}
	checkClockOps(t, readHistory(t, out.Dir), len(o.Nodes))
	assertNothingLeft(t, before, observedLab(t, res), node)
}

// observedPrograms is each node's count of programs started, from
// results.json's network_observed.
func observedPrograms(t *testing.T, res any) map[string]int {
	t.Helper()
	raw, _ := json.Marshal(res)
	var r struct {
		Observed struct {
			Nodes map[string]struct {
				Programs int `json:"programs"`
			} `json:"nodes"`
		} `json:"network_observed"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("results.json network_observed: %v", err)
	}
	programs := map[string]int{}
	for id, n := range r.Observed.Nodes {
		programs[id] = n.Programs
	}
	return programs
}

// checkClockOps: the history has clock skews whose values are settings
// of nodes, and the final phase's clock-reset (every node at offset 0,
// rate 1) comes before its start.
func checkClockOps(t *testing.T, h []history.Op, nodes int) {
	t.Helper()
	skews, lastReset, lastStart := 0, -1, -1
	for i, op := range h {
		if op.Process != history.NemesisProcess {
			continue
		}
		switch op.F {
		case nemesis.ClockSkew:
			var s nemesis.ClockSettings
			if json.Unmarshal(op.Value, &s) == nil && len(s) > 0 {
				skews++
			}
		case nemesis.ClockReset:
			lastReset = i
		case nemesis.StartOp:
			lastStart = i
		}
	}
	if skews == 0 {
		t.Errorf("no clock-skew op with settings in the history")
	}
	if lastReset < 0 || lastReset > lastStart {
		t.Fatalf("the last clock-reset (op %d) does not come before the last start (op %d)", lastReset, lastStart)
	}
	var s nemesis.ClockSettings
	if err := json.Unmarshal(h[lastReset].Value, &s); err != nil || len(s) != nodes {
		t.Errorf("the final clock-reset %s (%v): want every node", h[lastReset].Value, err)
	}
	for id, c := range s {
		if c.OffsetMs != 0 || c.Rate != 1 {
			t.Errorf("the final clock-reset leaves %s at %+v", id, c)
		}
	}
}

// countLines is how many lines of file contain s.
func countLines(t *testing.T, file, s string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			n++
		}
	}
	return n
}

// readHistory is the run's history.jsonl.
func readHistory(t *testing.T, dir string) []history.Op {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ops []history.Op
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var op history.Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			t.Fatalf("history line %q: %v", sc.Text(), err)
		}
		ops = append(ops, op)
	}
	return ops
}
