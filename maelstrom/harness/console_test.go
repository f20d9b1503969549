package harness

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/nemesis"
	"chunklease/workloads"
)

func TestConsoleProgressLine(t *testing.T) {
	var b bytes.Buffer
	c := &console{w: &b, live: true}
	c.setProgress("1s")
	c.println("WARN x")
	c.setProgress("2s")
	c.endProgress()
	want := "1s" + "\r\033[K" + "WARN x\n" + "1s" + "\r\033[K" + "2s" + "\r\033[K"
	if b.String() != want {
		t.Errorf("terminal output %q, want %q", b.String(), want)
	}
}

func TestConsoleWithoutTerminal(t *testing.T) {
	var b bytes.Buffer
	c := newConsole(&b) // not a terminal: no progress line at all
	c.setProgress("1s")
	c.println("WARN x")
	c.endProgress()
	if b.String() != "WARN x\n" {
		t.Errorf("output %q, want only the warning", b.String())
	}
}

// TestNemesisCountsLeaveOutEmptySteps: a partition that cuts nobody off
// and a pause that found no node running stay in the op counts (the
// history has them) but are no fault periods, and the console says so.
func TestNemesisCountsLeaveOutEmptySteps(t *testing.T) {
	step := func(i int, f, inv, done string) []history.Op {
		return []history.Op{
			{Index: 2 * i, Time: int64(i) * 1e9, Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(inv)},
			{Index: 2*i + 1, Time: int64(i)*1e9 + 1, Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(done)},
		}
	}
	var ops []history.Op
	for i, s := range [][3]string{
		{workloads.StartPartition, `"majority"`, `["isolated",{"n0":["n2"],"n1":["n2"],"n2":["n0","n1"]}]`},
		{workloads.StopPartition, `null`, `"network-healed"`},
		{workloads.StartPartition, `"minority-third"`, `["isolated",{"n0":[],"n1":[],"n2":[]}]`},
		{workloads.StopPartition, `null`, `"network-healed"`},
		{workloads.NemesisKill, `"one"`, `["n1"]`},
		{workloads.NemesisStart, `"all"`, `["n1"]`},
		{workloads.NemesisPause, `"one"`, `[]`},
		{workloads.NemesisResume, `"all"`, `[]`},
	} {
		ops = append(ops, step(i, s[0], s[1], s[2])...)
	}
	res := computeNemesis(ops, []string{"n0", "n1", "n2"})
	res.Faults = "partition,kill,pause"
	if res.Ops[workloads.StartPartition] != 2 || res.Periods["partition"] != 1 || res.Periods["kill"] != 1 || res.Periods["pause"] != 0 ||
		res.EmptySteps[workloads.StartPartition] != 1 || res.EmptySteps[workloads.NemesisPause] != 1 || res.EmptySteps[workloads.NemesisKill] != 0 {
		t.Errorf("nemesis result %+v", res)
	}
	want := "1 partition, 1 kill period, 0 pause periods; 1 node killed; 0 nodes paused, 0 late replies of paused nodes dropped; " +
		"not counted: 1 partition that cut nobody off, 1 pause that found no node running"
	if got := nemesisLine(res); got != want {
		t.Errorf("console line\n%q\nwant\n%q", got, want)
	}
	steps := workloads.NemesisSteps(ops)
	res.LiveMajority = computeLiveMajority(steps, []string{"n0", "n1", "n2"}, 10*time.Second)
	if got, want := nemesisLine(res), want+"; a live majority all the run"; got != want {
		t.Errorf("console line with the live majority\n%q\nwant\n%q", got, want)
	}
	if missing := neverApplied(nemesis.Faults{Partition: true, Kill: true, Pause: true}, steps, 10*time.Second); !slices.Equal(missing, []string{"pause"}) {
		t.Errorf("never applied %v, want [pause]", missing)
	}
}
