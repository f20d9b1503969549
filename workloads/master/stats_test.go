package master

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"testing"

	"chunklease/history"
	"chunklease/workloads"
)

// TestMasterFaults: each kind of fault runs from the invoke that starts it
// to the completion that ends it; a kill of one node stays in force until
// that node is started again; targets name no node; a client start is not
// a nemesis start.
func TestMasterFaults(t *testing.T) {
	var b masterHB
	for i, node := range []string{"n1", "n2", "n3"} {
		b.call(i, node, FMasterStatus, 0, 1, history.Fail) // the node ids the history knows
	}
	b.nemesis(workloads.StartPartition, 1000, `"majority"`)
	b.nemesis(workloads.StartPartition, 1001, `["isolated",{"n1":["n2","n3"],"n2":["n1"],"n3":["n1"]}]`)
	b.nemesis(workloads.StopPartition, 2000, `null`)
	b.nemesis(workloads.StopPartition, 2001, `"network-healed"`)
	b.nemesis("kill", 3000, `["n1"]`)
	b.nemesis("kill", 3001, `["n1"]`)
	b.nemesis("kill", 3500, `"n2"`)
	b.nemesis("kill", 3501, `"n2"`)
	b.nemesis("start", 4000, `["n1"]`) // n2 is still down
	b.nemesis("start", 4001, `["n1"]`)
	b.call(0, "n1", FMasterStart, 4500, 4501, history.OK)
	b.nemesis("start", 5000, `["n2"]`)
	b.nemesis("start", 5001, `["n2"]`)
	b.nemesis("pause", 6000, `"one"`)
	b.nemesis("pause", 6001, `["n3"]`)
	b.nemesis("resume", 7000, `"all"`)
	b.nemesis("resume", 7001, `"all"`)
	b.nemesis(workloads.StartPartition, 9000, `"primaries"`)
	got := MasterFaults(b.history())
	want := []MasterFault{
		{"partition", 1000, 2001}, {"kill", 3000, 5001}, {"pause", 6000, 7001}, {"partition", 9000, math.MaxInt64},
	}
	if !slices.Equal(got, want) {
		t.Errorf("faults %+v, want %+v", got, want)
	}
}

// TestMasterStatsFigures works the figures out by hand for a run of 10 s
// (ms): n1 [100, 2000) ended by a stop, n2 [2100, 4000) and [4200, 5000),
// a partition [4500, 6000), n3 [6500, 8000), n1 [8000, 9000) and
// [9500, 9800), then nobody until the last op at 10000.
func TestMasterStatsFigures(t *testing.T) {
	tenure := func(node string, start, end int64) MasterTenure {
		return MasterTenure{Node: node, StartNs: start * masterMs, EndNs: end * masterMs, Beliefs: 1}
	}
	tenures := []MasterTenure{tenure("n1", 100, 2000), tenure("n2", 2100, 4000), tenure("n2", 4200, 5000),
		tenure("n3", 6500, 8000), tenure("n1", 8000, 9000), tenure("n1", 9500, 9800)}
	stop := 7
	tenures[0].StopOp = &stop
	var b masterHB
	b.call(0, "n1", FMasterStart, 0, 1*masterMs, history.OK)
	b.nemesis(workloads.StartPartition, 4500*masterMs, `"majority"`)
	b.nemesis(workloads.StopPartition, 6000*masterMs, `null`)
	b.call(0, "n1", FMasterStatus, 9999*masterMs, 10000*masterMs, history.Fail)
	s := MasterStats(b.history(), tenures, 40)
	m := s.Mastership
	checkTime := func(name string, got MasteredTime, runMs, masteredMs float64) {
		t.Helper()
		if got.RunMs != runMs || got.MasteredMs != masteredMs || got.Fraction == nil ||
			math.Abs(*got.Fraction-masteredMs/runMs) > 1e-12 {
			t.Errorf("%s: %+v, want %v of %v ms", name, got, masteredMs, runMs)
		}
	}
	checkTime("overall", m.Overall, 10000, 7400)
	checkTime("inside faults", m.InsideFaults, 1500, 500)
	checkTime("outside faults", m.OutsideFaults, 8500, 6900)
	if m.FirstMasterMs == nil || *m.FirstMasterMs != 100 || m.MasterChanges != 3 || m.Tenures != 6 {
		t.Errorf("first master %v, changes %d, tenures %d; want 100, 3, 6", m.FirstMasterMs, m.MasterChanges, m.Tenures)
	}
	if want := map[string]float64{"n1": 3200, "n2": 2700, "n3": 1500}; !maps.Equal(m.ByNodeMs, want) {
		t.Errorf("by node %v, want %v", m.ByNodeMs, want)
	}
	f := s.Failover
	wantOut := workloads.Percentiles{Count: 2, P50: 0, P95: 100, P99: 100, Max: 100}
	wantIn := workloads.Percentiles{Count: 1, P50: 1500, P95: 1500, P99: 1500, Max: 1500}
	if f.OutsideFaultsMs != wantOut || f.InsideFaultsMs != wantIn || f.AfterStop != 1 ||
		f.TenureEnds != 6 || f.RetakenBySame != 2 || f.NeverRetaken != 1 {
		t.Errorf("failover %+v, want outside %+v inside %+v, 1 after stop, 6 ends, 2 retaken, 1 never", f, wantOut, wantIn)
	}
	if len(s.Faults) != 1 || s.Availability.Overall.All.Invoked != 2 || s.Messages == nil || *s.Messages != 40 {
		t.Errorf("faults %+v, availability %+v, messages %v", s.Faults, s.Availability.Overall, s.Messages)
	}
}

// TestMasterStatsWithoutMasterOrFaults: fractions of empty stretches are
// null, not 0 or 1, and no master means no first master.
func TestMasterStatsWithoutMasterOrFaults(t *testing.T) {
	var b masterHB
	b.call(0, "n1", FMasterStatus, 0, 50*masterMs, history.Fail)
	s := MasterStats(b.history(), nil, 0)
	m := s.Mastership
	if m.Overall.Fraction == nil || *m.Overall.Fraction != 0 || m.InsideFaults.Fraction != nil ||
		m.FirstMasterMs != nil || m.MasterChanges != 0 || s.Failover.TenureEnds != 0 {
		t.Errorf("mastership %+v failover %+v", m, s.Failover)
	}
	if e := MasterStats(nil, nil, 0); e.Mastership.Overall.Fraction != nil {
		t.Errorf("empty history: %+v", e.Mastership.Overall)
	}
}

// TestMasterStatsJSON: results.json gets the statistics under these keys.
func TestMasterStatsJSON(t *testing.T) {
	var b masterHB
	b.status(0, "n1", 0, 10*masterMs, true, "n1", 100)
	b.call(1, "n2", FMasterStop, 20*masterMs, 30*masterMs, history.OK)
	h := b.history()
	w := NewMaster(MasterOptions{Rate: 1}, 1)
	raw, err := json.Marshal(w.(workloads.StatsReporter).Stats(h, w.Check(h), 12))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"availability", "latency_ms", "partitions", "messages", "client_invocations",
		"messages_per_op", "mastership", "failover", "faults"} {
		if _, ok := top[k]; !ok {
			t.Errorf("workload_stats lacks %q: %s", k, raw)
		}
	}
	var m struct {
		Overall struct {
			Fraction float64 `json:"fraction"`
		} `json:"overall"`
	}
	if json.Unmarshal(top["mastership"], &m) != nil || math.Abs(m.Overall.Fraction-2.0/3) > 1e-12 {
		t.Errorf("mastership %s, want overall fraction 2/3 (n1 from 10 ms in a run of 30 ms)", top["mastership"])
	}
}
