package lease

import (
	"encoding/json"
	"testing"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

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
	parts := []workloads.Interval{{StartNs: 100, EndNs: 200}, {StartNs: 200, EndNs: 300}}
	hs := []Holding{{StartNs: 50}, {StartNs: 100}, {StartNs: 199}, {StartNs: 200}, {StartNs: 300}}
	if got := holdingsIn(hs, parts); got != 3 {
		t.Fatalf("holdingsIn = %d, want 3 (starts 100, 199, 200)", got)
	}
	if got := holdingsIn(hs, nil); got != 0 {
		t.Fatalf("holdingsIn without partitions = %d, want 0", got)
	}
}

// TestLeaseStatsInsideAndOutsideFaults: availability, failover and grants
// split by faults, and the time from each heal to the next grant.
func TestLeaseStatsInsideAndOutsideFaults(t *testing.T) {
	b := newHB(t)
	workloadtest.AddFaults(b.LeaseHistory)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 150)             // outside; cs1 [10, 150): its tenure ends inside
	b.grant(1, 200, 210, "ch_1", "cs2", "cs2", 100)          // inside; failover 60 ms; cs2 [210, 300)
	b.grantOutcome(2, 400, 410, "ch_2", "cs1", history.Info) // inside
	b.grant(0, 650, 660, "ch_2", "cs3", "cs3", 100)          // outside; cs3 [660, 750); first grant after the start at 600
	b.check(1, 950, 960, "ch_1", "", true)                   // inside the pause
	b.grant(2, 1050, 1060, "ch_1", "cs1", "cs1", 1000)       // outside; first grant after the resume at 1000
	res := mustValid(t, "faults", b.history())
	st := LeaseStats(b.history(), res.Holdings, 0)
	a := st.Availability
	if a.InsideFaults.All != (workloads.OKFraction{Invoked: 3, OK: 2, Fraction: 2.0 / 3}) || a.OutsideFaults.All != (workloads.OKFraction{Invoked: 3, OK: 3, Fraction: 1}) {
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
	l := newLease(LeaseOptions{Chunks: 12, LeaseMs: 700, Rate: 1}, 1)
	if ops := l.FinalOps(); len(ops) != 0 {
		t.Fatalf("%d final ops before any grant, want none", len(ops))
	}
	// A grant of ch_10 and a renew of ch_2 (both answered or not: asked is
	// enough), a check of ch_3 and a release of ch_4: ch_2 and ch_10 may
	// have a holder, read back in natural order; the others cannot.
	for w, c := range []leaseCall{{f: FGrant, chunk: "ch_10", server: "cs1", leaseMs: 700}, {f: FRenew, chunk: "ch_2", server: "cs2", leaseMs: 700},
		{f: FCheck, chunk: "ch_3"}, {f: FRelease, chunk: "ch_4", server: "cs1", token: 3}} {
		l.emit(0, w, c)
	}
	ops := l.FinalOps()
	if len(ops) != 2 {
		t.Fatalf("%d final ops, want a check of each chunk asked for", len(ops))
	}
	for i, chunk := range []string{"ch_2", "ch_10"} {
		if op := ops[i]; op.F != FCheck || string(op.Value) != `{"chunk":"`+chunk+`"}` {
			t.Errorf("final op %d = %s %s, want check of %s", i, op.F, op.Value, chunk)
		}
		if req := string(l.Request(ops[i])); req != `{"type":"lease_check","chunk_handle":"`+chunk+`"}` {
			t.Errorf("request %s", req)
		}
	}
	if workloads.LongestLeaseMs(l) != 700 || workloads.HasNodeLeases(l) {
		t.Errorf("longest lease %d, node leases %t; want 700, false (the requests carry the length)", workloads.LongestLeaseMs(l), workloads.HasNodeLeases(l))
	}
}
