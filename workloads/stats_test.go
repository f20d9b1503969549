package workloads

import (
	"encoding/json"
	"math"
	"testing"
)

func TestComputeStatsSplitsAvailabilityByPartition(t *testing.T) {
	b := newHB(t)
	b.nemesis(StartPartition, 1000, 1001)
	b.nemesis(StopPartition, 3000, 3001)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)      // outside, ok, 10ms
	b.check(1, 1500, 1510, "ch_1", "cs1", false)       // inside, ok, 10ms
	b.grantOutcome(2, 2000, 2100, "ch_1", "cs2", Info) // inside
	b.renewOutcome(3, 4000, 4010, "ch_1", "cs1", Fail) // outside
	b.check(4, 4100, 4120, "ch_1", "", true)           // outside, ok, 20ms
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
	h := []Op{
		{Index: 0, Time: 5, Process: NemesisProcess, Type: Info, F: StartPartition},
		{Index: 1, Time: 7, Process: NemesisProcess, Type: Info, F: StartPartition},
		{Index: 2, Time: 20, Process: NemesisProcess, Type: Info, F: StopPartition},
		{Index: 3, Time: 22, Process: NemesisProcess, Type: Info, F: StopPartition},
		{Index: 4, Time: 30, Process: NemesisProcess, Type: Info, F: StartPartition},
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
	b.release(1, 1500, 1510, "ch_1", "cs2", OK)
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
