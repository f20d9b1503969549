package workloads

import (
	"encoding/json"
	"math"
	"testing"

	"chunklease/history"
)

func TestComputeStatsSplitsAvailabilityByPartition(t *testing.T) {
	b := newHB(t)
	b.nemesis(StartPartition, 1000, 1001)
	b.nemesis(StopPartition, 3000, 3001)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)              // outside, ok, 10ms
	b.check(1, 1500, 1510, "ch_1", "cs1", false)               // inside, ok, 10ms
	b.grantOutcome(2, 2000, 2100, "ch_1", "cs2", history.Info) // inside
	b.renewOutcome(3, 4000, 4010, "ch_1", "cs1", history.Fail) // outside
	b.check(4, 4100, 4120, "ch_1", "", true)                   // outside, ok, 20ms
	s := ComputeStats(b.history(), 50)
	if len(s.Partitions) != 1 || s.Partitions[0] != (Interval{ms(1001), ms(3001)}) {
		t.Errorf("partitions %+v, want [1001ms, 3001ms)", s.Partitions)
	}
	a := s.Availability
	if a.Overall.All != (OKFraction{5, 3, 0.6}) || a.InsidePartition.All != (OKFraction{2, 1, 0.5}) ||
		a.OutsidePartition.All.Invoked != 3 || a.OutsidePartition.All.OK != 2 {
		t.Errorf("availability %+v", a)
	}
	if a.Overall.ByF[FCheck] != (OKFraction{2, 2, 1}) || a.InsidePartition.ByF[FGrant] != (OKFraction{1, 0, 0}) {
		t.Errorf("availability by f %+v / %+v", a.Overall.ByF, a.InsidePartition.ByF)
	}
	if c := s.LatencyMs[FCheck]; c.Count != 2 || c.P50 != 10 || c.P99 != 20 || c.Max != 20 {
		t.Errorf("check latency %+v", c)
	}
	if _, ok := s.LatencyMs[FRenew]; ok {
		t.Error("latency reported for an f with no ok op")
	}
	if s.ClientInvocations != 5 || s.MessagesPerOp != 10 {
		t.Errorf("invocations %d messages/op %v, want 5 and 10", s.ClientInvocations, s.MessagesPerOp)
	}
	if _, err := json.Marshal(LeaseStats(b.history(), CheckLease(b.history()).Holdings, 50)); err != nil {
		t.Errorf("stats do not marshal: %v", err)
	}
}

func TestPartitionsWithInfoOnlyNemesisOpsAndNoHeal(t *testing.T) {
	h := []history.Op{
		{Index: 0, Time: 5, Process: history.NemesisProcess, Type: history.Info, F: StartPartition},
		{Index: 1, Time: 7, Process: history.NemesisProcess, Type: history.Info, F: StartPartition},
		{Index: 2, Time: 20, Process: history.NemesisProcess, Type: history.Info, F: StopPartition},
		{Index: 3, Time: 22, Process: history.NemesisProcess, Type: history.Info, F: StopPartition},
		{Index: 4, Time: 30, Process: history.NemesisProcess, Type: history.Info, F: StartPartition},
	}
	got := Partitions(h)
	want := []Interval{{7, 22}, {30, math.MaxInt64}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("partitions %+v, want %+v", got, want)
	}
}

func TestFailover(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)      // cs1 [10, 1000)
	b.grant(1, 1200, 1210, "ch_1", "cs2", "cs2", 1000) // cs2 [1210, 1500): failover 210ms
	b.release(1, 1500, 1510, "ch_1", "cs2", history.OK)
	b.grant(1, 1600, 1605, "ch_1", "cs2", "cs2", 1000) // cs2 again [1605, 2600): retaken by the same
	b.renew(2, 1700, 1710, "ch_1", "cs2", 500, "n3")   // ends inside the grant's holding: not an end
	b.grant(0, 3000, 3010, "ch_1", "cs1", "cs1", 1000) // cs1 [3010, 4000): failover 410ms, then never retaken
	res := mustValid(t, "failover", b.history())
	f := Failover(res.Holdings)
	want := FailoverStats{Count: 2, MedianMs: 210, MaxMs: 410, RetakenBySame: 1, NeverRetaken: 1, TenureEndCount: 4}
	if f != want {
		t.Errorf("failover %+v, want %+v", f, want)
	}
}

// TestHoldingsIn counts only holdings that began inside a partition, and
// each once even where intervals touch.
func TestHoldingsIn(t *testing.T) {
	parts := []Interval{{StartNs: 100, EndNs: 200}, {StartNs: 200, EndNs: 300}}
	hs := []Holding{{StartNs: 50}, {StartNs: 100}, {StartNs: 199}, {StartNs: 200}, {StartNs: 300}}
	if got := holdingsIn(hs, parts); got != 3 {
		t.Fatalf("holdingsIn = %d, want 3 (starts 100, 199, 200)", got)
	}
	if got := holdingsIn(hs, nil); got != 0 {
		t.Fatalf("holdingsIn without partitions = %d, want 0", got)
	}
}

// nemesisOp adds one nemesis step as the harness writes it: an invoke
// with the target and a completion with the affected nodes, both info.
func (b *hb) nemesisOp(f string, inv, done float64, target, nodes string) {
	b.ops = append(b.ops,
		history.Op{Time: ms(inv), Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(target)},
		history.Op{Time: ms(done), Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(nodes)})
}

// faultHistory has a partition [100, 300), a kill of n1 [250, 600) (the
// start completes after n1's init), a kill that hit nobody (no fault), and
// a pause of n2 [900, 1000); the run ends with n3 paused from 1200 on.
func faultHistory(b *hb) {
	b.nemesisOp(StartPartition, 99, 100, `"majority"`, `["isolated",{"n1":["n2"],"n2":["n1"]}]`)
	b.nemesisOp(NemesisKill, 249, 250, `"one"`, `["n1"]`)
	b.nemesisOp(StopPartition, 300, 300, `null`, `"network-healed"`)
	b.nemesisOp(NemesisStart, 500, 600, `"all"`, `["n1"]`)
	b.nemesisOp(NemesisKill, 700, 700, `"minority-third"`, `[]`)
	b.nemesisOp(NemesisStart, 800, 800, `"all"`, `[]`)
	b.nemesisOp(NemesisPause, 899, 900, `null`, `["n2"]`)
	b.nemesisOp(NemesisResume, 1000, 1000, `"all"`, `["n2"]`)
	b.nemesisOp(NemesisPause, 1200, 1200, `"one"`, `["n3"]`)
}

func TestFaultIntervalsAndHeals(t *testing.T) {
	b := newHB(t)
	faultHistory(b)
	got := FaultIntervals(b.history())
	want := []Interval{{ms(100), ms(600)}, {ms(900), ms(1000)}, {ms(1200), math.MaxInt64}}
	if len(got) != len(want) {
		t.Fatalf("fault intervals %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fault interval %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	heals := Heals(b.history())
	wantHeals := []Heal{{StopPartition, ms(300)}, {NemesisStart, ms(600)}, {NemesisResume, ms(1000)}}
	if len(heals) != len(wantHeals) {
		t.Fatalf("heals %+v, want %+v (a start that restarted nobody heals nothing)", heals, wantHeals)
	}
	for i := range wantHeals {
		if heals[i] != wantHeals[i] {
			t.Errorf("heal %d = %+v, want %+v", i, heals[i], wantHeals[i])
		}
	}
}

// TestLeaseStatsInsideAndOutsideFaults: availability, failover and grants
// split by faults, and the time from each heal to the next grant.
func TestLeaseStatsInsideAndOutsideFaults(t *testing.T) {
	b := newHB(t)
	faultHistory(b)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 150)             // outside; cs1 [10, 150): its tenure ends inside
	b.grant(1, 200, 210, "ch_1", "cs2", "cs2", 100)          // inside; failover 60 ms; cs2 [210, 300)
	b.grantOutcome(2, 400, 410, "ch_2", "cs1", history.Info) // inside
	b.grant(0, 650, 660, "ch_2", "cs3", "cs3", 100)          // outside; cs3 [660, 750); first grant after the start at 600
	b.check(1, 950, 960, "ch_1", "", true)                   // inside the pause
	b.grant(2, 1050, 1060, "ch_1", "cs1", "cs1", 1000)       // outside; first grant after the resume at 1000
	res := mustValid(t, "faults", b.history())
	st := LeaseStats(b.history(), res.Holdings, 0)
	a := st.Availability
	if a.InsideFaults.All != (OKFraction{3, 2, 2.0 / 3}) || a.OutsideFaults.All != (OKFraction{3, 3, 1}) {
		t.Errorf("availability inside %+v outside %+v", a.InsideFaults.All, a.OutsideFaults.All)
	}
	if a.InsidePartition.All.Invoked != 1 || a.OutsidePartition.All.Invoked != 5 {
		t.Errorf("partition split %+v / %+v", a.InsidePartition.All, a.OutsidePartition.All)
	}
	// Tenure ends: cs1 at 150 and cs2 at 300 (inside, failovers of 60 and
	// 760 ms), cs3 at 750 (outside, never retaken), cs1 at 2050 (inside the
	// last pause, never retaken).
	if f := st.FailoverInsideFaults; f.Count != 2 || f.MedianMs != 60 || f.MaxMs != 760 || f.NeverRetaken != 1 ||
		st.FailoverOutsideFaults != (FailoverStats{NeverRetaken: 1, TenureEndCount: 1}) {
		t.Errorf("failover inside %+v outside %+v", st.FailoverInsideFaults, st.FailoverOutsideFaults)
	}
	if st.Failover.TenureEndCount != st.FailoverInsideFaults.TenureEndCount+st.FailoverOutsideFaults.TenureEndCount {
		t.Errorf("tenure ends %d != %d inside + %d outside", st.Failover.TenureEndCount,
			st.FailoverInsideFaults.TenureEndCount, st.FailoverOutsideFaults.TenureEndCount)
	}
	if st.HoldingsInFaults != 1 || st.GrantsInFaults != 1 || st.HoldingsInPartitions != 1 {
		t.Errorf("holdings in faults %d, grants %d, in partitions %d; want 1 each", st.HoldingsInFaults, st.GrantsInFaults, st.HoldingsInPartitions)
	}
	h := st.HealToGrant
	if h.Heals != 3 || h.Granted != 3 || len(h.Events) != 3 {
		t.Fatalf("heal to grant %+v", h)
	}
	for i, want := range []float64{360, 60, 60} { // 300 -> 660, 600 -> 660, 1000 -> 1060
		if got := h.Events[i].GrantAfterMs; got == nil || *got != want {
			t.Errorf("heal %d: grant after %v ms, want %v", i, got, want)
		}
	}
	if h.MedianMs != 60 || h.MaxMs != 360 {
		t.Errorf("median %v max %v", h.MedianMs, h.MaxMs)
	}
	if _, err := json.Marshal(st); err != nil {
		t.Error(err)
	}
}

func TestLeaseFinalOpsAndBound(t *testing.T) {
	l := newLease(LeaseOptions{Chunks: 3, LeaseMs: 700, Rate: 1}, 1)
	ops := l.FinalOps()
	if len(ops) != 3 {
		t.Fatalf("%d final ops, want one check per chunk", len(ops))
	}
	for i, op := range ops {
		want := `{"chunk":"ch_` + string(rune('1'+i)) + `"}`
		if op.F != FCheck || string(op.Value) != want {
			t.Errorf("final op %d = %s %s, want check %s", i, op.F, op.Value, want)
		}
		if req := string(l.Request(op)); req != `{"type":"lease_check","chunk_handle":"ch_`+string(rune('1'+i))+`"}` {
			t.Errorf("request %s", req)
		}
	}
	if LongestLeaseMs(l) != 700 || LongestLeaseMs(NewEcho(EchoOptions{}, 1)) != 0 {
		t.Errorf("longest leases %d and %d, want 700 and 0", LongestLeaseMs(l), LongestLeaseMs(NewEcho(EchoOptions{}, 1)))
	}
}
