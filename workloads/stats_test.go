package workloads_test

import (
	"encoding/json"
	"math"
	"testing"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

func TestComputeStatsSplitsAvailabilityByPartition(t *testing.T) {
	b := workloadtest.NewLeaseHistory(t)
	b.Nemesis(workloads.StartPartition, 1000, 1001)
	b.Nemesis(workloads.StopPartition, 3000, 3001)
	b.Grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)              // outside, ok, 10ms
	b.Check(1, 1500, 1510, "ch_1", "cs1", false)               // inside, ok, 10ms
	b.GrantOutcome(2, 2000, 2100, "ch_1", "cs2", history.Info) // inside
	b.RenewOutcome(3, 4000, 4010, "ch_1", "cs1", history.Fail) // outside
	b.Check(4, 4100, 4120, "ch_1", "", true)                   // outside, ok, 20ms
	s := workloads.ComputeStats(b.Ops(), 50)
	if len(s.Partitions) != 1 || s.Partitions[0] != (workloads.Interval{workloadtest.Ms(1001), workloadtest.Ms(3001)}) {
		t.Errorf("partitions %+v, want [1001ms, 3001ms)", s.Partitions)
	}
	a := s.Availability
	if a.Overall.All != (workloads.OKFraction{5, 3, 0.6}) || a.InsidePartition.All != (workloads.OKFraction{2, 1, 0.5}) ||
		a.OutsidePartition.All.Invoked != 3 || a.OutsidePartition.All.OK != 2 {
		t.Errorf("availability %+v", a)
	}
	if a.Overall.ByF["check"] != (workloads.OKFraction{2, 2, 1}) || a.InsidePartition.ByF["grant"] != (workloads.OKFraction{1, 0, 0}) {
		t.Errorf("availability by f %+v / %+v", a.Overall.ByF, a.InsidePartition.ByF)
	}
	if c := s.LatencyMs["check"]; c.Count != 2 || c.P50 != 10 || c.P99 != 20 || c.Max != 20 {
		t.Errorf("check latency %+v", c)
	}
	if _, ok := s.LatencyMs["renew"]; ok {
		t.Error("latency reported for an f with no ok op")
	}
	if s.ClientInvocations != 5 || s.MessagesPerOp == nil || *s.MessagesPerOp != 10 || s.Messages == nil || *s.Messages != 50 {
		t.Errorf("invocations %d messages/op %v, want 5 and 10", s.ClientInvocations, s.MessagesPerOp)
	}
	if u := workloads.ComputeStats(b.Ops(), workloads.UnknownMessages); u.Messages != nil || u.MessagesPerOp != nil {
		t.Errorf("a network that counts no messages got messages %v, per op %v", u.Messages, u.MessagesPerOp)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Errorf("stats do not marshal: %v", err)
	}
}

func TestPartitionsWithInfoOnlyNemesisOpsAndNoHeal(t *testing.T) {
	h := []history.Op{
		{Index: 0, Time: 5, Process: history.NemesisProcess, Type: history.Info, F: workloads.StartPartition},
		{Index: 1, Time: 7, Process: history.NemesisProcess, Type: history.Info, F: workloads.StartPartition},
		{Index: 2, Time: 20, Process: history.NemesisProcess, Type: history.Info, F: workloads.StopPartition},
		{Index: 3, Time: 22, Process: history.NemesisProcess, Type: history.Info, F: workloads.StopPartition},
		{Index: 4, Time: 30, Process: history.NemesisProcess, Type: history.Info, F: workloads.StartPartition},
	}
	got := workloads.Partitions(h)
	want := []workloads.Interval{{7, 22}, {30, math.MaxInt64}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("partitions %+v, want %+v", got, want)
	}
}

func TestFaultIntervalsAndHeals(t *testing.T) {
	b := workloadtest.NewLeaseHistory(t)
	workloadtest.AddFaults(b)
	got := workloads.FaultIntervals(b.Ops())
	want := []workloads.Interval{{workloadtest.Ms(100), workloadtest.Ms(600)}, {workloadtest.Ms(900), workloadtest.Ms(1000)}, {workloadtest.Ms(1200), math.MaxInt64}}
	if len(got) != len(want) {
		t.Fatalf("fault intervals %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fault interval %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	heals := workloads.Heals(b.Ops())
	wantHeals := []workloads.Heal{{workloads.StopPartition, workloadtest.Ms(300)}, {workloads.NemesisStart, workloadtest.Ms(600)}, {workloads.NemesisResume, workloadtest.Ms(1000)}}
	if len(heals) != len(wantHeals) {
		t.Fatalf("heals %+v, want %+v (a start that restarted nobody heals nothing)", heals, wantHeals)
	}
	for i := range wantHeals {
		if heals[i] != wantHeals[i] {
			t.Errorf("heal %d = %+v, want %+v", i, heals[i], wantHeals[i])
		}
	}
}

// TestPartitionThatCutsNobodyOff: a minority-third at 3 nodes installs a
// grudge in which nobody drops anything. It is no partition: no
// interval, no fault interval, no heal; the partition after it counts.
func TestPartitionThatCutsNobodyOff(t *testing.T) {
	nem := func(i int, ms float64, f, value string) history.Op {
		return history.Op{Index: i, Time: workloadtest.Ms(ms), Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(value)}
	}
	h := []history.Op{
		nem(0, 10, workloads.StartPartition, `"minority-third"`),
		nem(1, 11, workloads.StartPartition, `["isolated",{"n0":[],"n1":[],"n2":[]}]`),
		nem(2, 50, workloads.StopPartition, `null`),
		nem(3, 51, workloads.StopPartition, `"network-healed"`),
		nem(4, 60, workloads.StartPartition, `"majority"`),
		nem(5, 61, workloads.StartPartition, `["isolated",{"n0":["n2"],"n1":["n2"],"n2":["n0","n1"]}]`),
		nem(6, 90, workloads.StopPartition, `null`),
		nem(7, 91, workloads.StopPartition, `"network-healed"`),
	}
	want := []workloads.Interval{{workloadtest.Ms(61), workloadtest.Ms(91)}}
	for name, got := range map[string][]workloads.Interval{"partitions": workloads.Partitions(h), "fault intervals": workloads.FaultIntervals(h)} {
		if len(got) != 1 || got[0] != want[0] {
			t.Errorf("%s %+v, want %+v", name, got, want)
		}
	}
	if heals := workloads.Heals(h); len(heals) != 1 || heals[0].AtNs != workloadtest.Ms(91) {
		t.Errorf("heals %+v, want the second partition's stop alone", heals)
	}
}
