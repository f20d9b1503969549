package workloads

import (
	"slices"
	"strings"
	"testing"
)

func mustValid(t *testing.T, name string, h []Op) LeaseResult {
	t.Helper()
	r := CheckLease(h)
	if !r.Valid {
		t.Errorf("%s: judged invalid: violations %+v problems %+v", name, r.Violations, r.Problems)
	}
	return r
}

// mustViolate checks that the history is invalid with exactly the given
// violation kinds (in order) and no structural problems.
func mustViolate(t *testing.T, name string, h []Op, kinds ...string) LeaseResult {
	t.Helper()
	r := CheckLease(h)
	var got []string
	for _, v := range r.Violations {
		got = append(got, v.Kind)
	}
	if r.Valid || !slices.Equal(got, kinds) || len(r.Problems) > 0 {
		t.Errorf("%s: valid=%v violations %v problems %v, want invalid with %v", name, r.Valid, got, r.Problems, kinds)
	}
	return r
}

func TestCheckLeaseValidHandoverWithReads(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)      // cs1 holds [10, 1000)
	b.grant(1, 500, 510, "ch_1", "cs2", "cs1", 490)    // a read: cs1 is primary
	b.check(2, 600, 610, "ch_1", "cs1", false)         // sees cs1
	b.check(2, 1050, 1060, "ch_1", "cs1", true)        // expired: no holder, and nobody holds
	b.grant(1, 1100, 1110, "ch_1", "cs2", "cs2", 1000) // failover: cs2 holds [1110, 2100)
	b.check(0, 990, 1200, "ch_1", "cs2", false)        // spans the handover: any answer is fine
	b.check(3, 995, 1150, "ch_1", "cs1", false)
	b.check(4, 999, 1120, "ch_1", "", false)
	b.grant(0, 2000, 2005, "ch_2", "cs1", "cs1", 1000) // another chunk is independent
	b.grant(1, 2001, 2006, "ch_1", "cs1", "cs2", 99)
	r := mustValid(t, "handover", b.history())
	if len(r.Holdings) != 3 || r.Chunks["ch_1"].Reads != 7 || r.Chunks["ch_1"].Holdings != 2 {
		t.Errorf("holdings %+v chunks %+v", r.Holdings, r.Chunks)
	}
	if h := r.Holdings[0]; h.Server != "cs1" || h.StartNs != ms(10) || h.EndNs != ms(1000) || h.CutByIndex != nil {
		t.Errorf("first holding %+v, want cs1 [10ms, 1000ms) uncut", h)
	}
}

func TestCheckLeaseValidRenewalsThroughOtherNodes(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.renew(1, 500, 520, "ch_1", "cs1", 1000, "n2") // [520, 1500)
	b.renew(2, 1000, 1030, "ch_1", "cs1", 1000, "n3")
	b.grant(3, 1200, 1210, "ch_1", "cs1", "cs1", 1000) // already held by cs1: stays primary
	b.check(4, 1900, 1910, "ch_1", "cs1", false)
	b.renewOutcome(0, 1950, 1960, "ch_1", "cs1", Fail) // a failed renew holds nothing
	b.grant(1, 2300, 2310, "ch_1", "cs2", "cs2", 1000)
	r := mustValid(t, "renewals", b.history())
	if r.Chunks["ch_1"].Holdings != 5 {
		t.Errorf("holdings %d, want 5", r.Chunks["ch_1"].Holdings)
	}
}

func TestCheckLeaseValidWithReleasesInfoAndNemesis(t *testing.T) {
	b := newHB(t)
	b.nemesis(StartPartition, 0, 1)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grantOutcome(1, 100, 200, "ch_1", "cs2", Info) // unknown: no holding, no read
	b.grantOutcome(2, 150, 160, "ch_1", "cs3", Fail)
	b.release(0, 300, 310, "ch_1", "cs1", OK) // cuts cs1 at 300
	b.grant(1, 320, 330, "ch_1", "cs2", "cs2", 1000)
	b.release(2, 340, 350, "ch_1", "cs3", OK) // not held by cs3: changes nothing
	b.check(3, 400, 410, "ch_1", "cs2", false)
	b.release(1, 600, 900, "ch_1", "cs2", Info) // unknown outcome still cuts at its invoke
	b.grant(0, 610, 620, "ch_1", "cs1", "cs1", 1000)
	b.release(0, 700, 0, "ch_1", "cs1", "") // never completed: still cuts
	b.grant(2, 710, 720, "ch_1", "cs3", "cs3", 1000)
	b.nemesis(StopPartition, 800, 801)
	b.release(2, 750, 760, "ch_1", "cs3", Fail) // a failed release cuts too
	b.grant(3, 770, 780, "ch_1", "cs2", "cs2", 1000)
	r := mustValid(t, "releases", b.history())
	cut := 0
	for _, h := range r.Holdings {
		if h.CutByIndex != nil {
			cut++
		}
	}
	if cut != 4 || r.Chunks["ch_1"].Info != 2 || r.Chunks["ch_1"].Open != 1 {
		t.Errorf("cut holdings %d (want 4), counts %+v", cut, r.Chunks["ch_1"])
	}
}

func TestCheckLeaseNegativeTwoPrimaries(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grant(1, 500, 510, "ch_1", "cs2", "cs2", 1000)
	r := mustViolate(t, "two primaries", b.history(), TwoPrimaries)
	v := r.Violations[0]
	if !slices.Equal(v.Servers, []string{"cs1", "cs2"}) || v.StartNs != ms(510) || v.EndNs != ms(1000) ||
		!slices.Equal(v.Ops, []int{0, 1, 2, 3}) || v.Chunk != "ch_1" {
		t.Errorf("violation %+v", v)
	}

	b = newHB(t) // a renew of cs2 overlapping cs1's grant is as bad
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.renew(1, 900, 910, "ch_1", "cs2", 500, "n2")
	mustViolate(t, "renew overlaps", b.history(), TwoPrimaries)

	b = newHB(t) // touching holdings do not overlap: [10, 1000) then [1000, ...)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grant(1, 990, 1000, "ch_1", "cs2", "cs2", 1000)
	mustValid(t, "touching", b.history())
}

func TestCheckLeaseNegativeReadWrongHolder(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.check(1, 500, 510, "ch_1", "cs2", false)
	r := mustViolate(t, "check saw cs2", b.history(), ReadWrongHolder)
	if v := r.Violations[0]; !slices.Equal(v.Servers, []string{"cs2", "cs1"}) || v.StartNs != ms(500) || v.EndNs != ms(510) {
		t.Errorf("violation %+v", v)
	}

	b = newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grant(1, 500, 510, "ch_1", "cs3", "cs2", 400) // a grant answering with the wrong primary
	mustViolate(t, "grant saw cs2", b.history(), ReadWrongHolder)
}

func TestCheckLeaseNegativeReadNoHolder(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.check(1, 500, 510, "ch_1", "", false)   // primary null
	b.check(1, 600, 610, "ch_1", "cs1", true) // expired
	b.check(1, 990, 1000, "ch_1", "", false)  // ends at the lease end: not covered, fine
	mustViolate(t, "check saw nobody", b.history(), ReadNoHolder, ReadNoHolder)
}

func TestCheckLeaseReleaseCutsHolding(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grant(1, 400, 410, "ch_1", "cs2", "cs2", 1000)
	mustViolate(t, "without the release", b.history(), TwoPrimaries) // the control

	b.release(0, 300, 310, "ch_1", "cs1", OK)
	r := mustValid(t, "with the release", b.history())
	h := r.Holdings[0]
	if h.Server != "cs1" || h.EndNs != ms(300) || h.CutByIndex == nil || *h.CutByIndex != 2 {
		t.Errorf("cs1 holding %+v, want cut at 300ms by op 2", h)
	}
}

func TestCheckLeaseLateReleaseDoesNotCutLaterHolding(t *testing.T) {
	b := newHB(t)
	b.release(0, 100, 2000, "ch_1", "cs1", OK)       // invoked before the grant, answered late
	b.grant(1, 200, 210, "ch_1", "cs1", "cs1", 1000) // cs1 holds [210, 1200)
	b.grant(2, 500, 510, "ch_1", "cs2", "cs2", 1000)
	r := mustViolate(t, "late release", b.history(), TwoPrimaries)
	if h := r.Holdings[0]; h.CutByIndex != nil || h.EndNs != ms(1200) {
		t.Errorf("cs1 holding %+v was cut by a release invoked before it", h)
	}

	b = newHB(t) // a release by another server never cuts
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.release(1, 300, 310, "ch_1", "cs2", OK)
	b.grant(2, 400, 410, "ch_1", "cs2", "cs2", 1000)
	mustViolate(t, "release by another server", b.history(), TwoPrimaries)
}

func TestCheckLeaseReportsMalformedHistories(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	h := b.history()
	h[1].Value = []byte(`{"chunk":"ch_1","server":"cs1"}`) // ok grant without primary
	r := CheckLease(h)
	if r.Valid || len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Text, "lacks primary") {
		t.Errorf("missing primary: %+v", r)
	}
	h = b.history()
	h = append(h, Op{Index: 2, Time: ms(20), Process: Process{ID: 0}, Type: OK, F: FGrant, Value: h[1].Value})
	if r := CheckLease(h); r.Valid || len(r.Problems) != 1 {
		t.Errorf("completion without invoke: %+v", r)
	}
	h = b.history()
	h[0].F, h[1].F = "frob", "frob"
	if r := CheckLease(h); r.Valid || len(r.Problems) != 1 {
		t.Errorf("unknown f: %+v", r)
	}
}
