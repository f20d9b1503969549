package lease

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/workloads"
)

func mustValid(t *testing.T, name string, h []history.Op) LeaseResult {
	t.Helper()
	r := CheckLease(h)
	if !r.Valid {
		t.Errorf("%s: judged invalid: violations %+v problems %+v", name, r.Violations, r.Problems)
	}
	return r
}

// mustViolate checks that the history is invalid with exactly the given
// violation kinds (in order) and no structural problems.
func mustViolate(t *testing.T, name string, h []history.Op, kinds ...string) LeaseResult {
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
	b.renewOutcome(0, 1950, 1960, "ch_1", "cs1", history.Fail) // a failed renew holds nothing
	b.grant(1, 2300, 2310, "ch_1", "cs2", "cs2", 1000)
	r := mustValid(t, "renewals", b.history())
	if r.Chunks["ch_1"].Holdings != 5 {
		t.Errorf("holdings %d, want 5", r.Chunks["ch_1"].Holdings)
	}
}

func TestCheckLeaseValidWithReleasesInfoAndNemesis(t *testing.T) {
	b := newHB(t)
	b.nemesis(workloads.StartPartition, 0, 1)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grantOutcome(1, 100, 200, "ch_1", "cs2", history.Info) // unknown: no holding, no read
	b.grantOutcome(2, 150, 160, "ch_1", "cs3", history.Fail)
	b.release(0, 300, 310, "ch_1", "cs1", history.OK) // cuts cs1 at 300 (token t1)
	t2 := b.grant(1, 320, 330, "ch_1", "cs2", "cs2", 1000)
	b.releaseTok(2, 340, 350, "ch_1", "cs3", t2, history.OK) // not held by cs3 (cs2's token): changes nothing
	b.check(3, 400, 410, "ch_1", "cs2", false)
	b.release(1, 600, 900, "ch_1", "cs2", history.Info) // unknown outcome still cuts at its invoke
	b.grant(0, 610, 620, "ch_1", "cs1", "cs1", 1000)
	b.release(0, 700, 0, "ch_1", "cs1", "") // never completed: still cuts
	b.grant(2, 710, 720, "ch_1", "cs3", "cs3", 1000)
	b.nemesis(workloads.StopPartition, 800, 801)
	b.release(2, 750, 760, "ch_1", "cs3", history.Fail) // a failed release cuts too
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
	r = mustViolate(t, "renew overlaps", b.history(), TwoPrimaries)
	// The text names, for each op, the node that answered it.
	if v := r.Violations[0]; !slices.Equal(v.Nodes, []string{"n1", "n2"}) ||
		!strings.Contains(v.Text, "cs1 (grant ops 0-1 via n1) and cs2 (renew ops 2-3 via n2) both held ch_1") {
		t.Errorf("violation %+v, want the answering node of each op", v)
	}
	if h := r.Holdings[1]; h.Node != "n2" {
		t.Errorf("holding %+v, want node n2 (the renew's)", h)
	}

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
	if v := r.Violations[0]; !slices.Equal(v.Servers, []string{"cs2", "cs1"}) || v.StartNs != ms(500) || v.EndNs != ms(510) ||
		len(v.Nodes) != 2 || !strings.Contains(v.Text, "check (ops 2-3 via "+v.Nodes[0]+") reported cs2") ||
		!strings.Contains(v.Text, "(grant ops 0-1 via n1)") {
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

	b.release(0, 300, 310, "ch_1", "cs1", history.OK)
	r := mustValid(t, "with the release", b.history())
	h := r.Holdings[0]
	if h.Server != "cs1" || h.EndNs != ms(300) || h.CutByIndex == nil || *h.CutByIndex != 2 {
		t.Errorf("cs1 holding %+v, want cut at 300ms by op 2", h)
	}
}

func TestCheckLeaseLateReleaseDoesNotCutLaterHolding(t *testing.T) {
	b := newHB(t)
	// Invoked before the grant, answered late; it even names the token the
	// grant will get (a node that reuses tokens), and still cuts nothing.
	b.releaseTok(0, 100, 2000, "ch_1", "cs1", 1, history.OK)
	if t1 := b.grant(1, 200, 210, "ch_1", "cs1", "cs1", 1000); t1 != 1 { // cs1 holds [210, 1200)
		t.Fatalf("the builder's first token is %d, want 1", t1)
	}
	b.grant(2, 500, 510, "ch_1", "cs2", "cs2", 1000)
	r := mustViolate(t, "late release", b.history(), TwoPrimaries)
	if h := r.Holdings[0]; h.CutByIndex != nil || h.EndNs != ms(1200) {
		t.Errorf("cs1 holding %+v was cut by a release invoked before it", h)
	}

	b = newHB(t) // a release by another server never cuts, even with the holder's token
	t1 := b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.releaseTok(1, 300, 310, "ch_1", "cs2", t1, history.OK)
	b.grant(2, 400, 410, "ch_1", "cs2", "cs2", 1000)
	mustViolate(t, "release by another server", b.history(), TwoPrimaries)

	b = newHB(t) // nor does a release without a token
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.releaseTok(0, 300, 310, "ch_1", "cs1", 0, history.OK)
	b.grant(2, 400, 410, "ch_1", "cs2", "cs2", 1000)
	mustViolate(t, "release without a token", b.history(), TwoPrimaries)
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
	h = append(h, history.Op{Index: 2, Time: ms(20), Process: history.Process{ID: 0}, Type: history.OK, F: FGrant, Value: h[1].Value})
	if r := CheckLease(h); r.Valid || len(r.Problems) != 1 {
		t.Errorf("completion without invoke: %+v", r)
	}
	h = b.history()
	h[0].F, h[1].F = "frob", "frob"
	if r := CheckLease(h); r.Valid || len(r.Problems) != 1 {
		t.Errorf("unknown f: %+v", r)
	}
}

// TestCheckLeaseOverlapEdges: holdings are half-open, so an overlap of one
// millisecond or one nanosecond is two primaries, and touching is not.
func TestCheckLeaseOverlapEdges(t *testing.T) {
	cases := []struct {
		name      string
		cs2DoneNs int64 // cs2's grant completes (its holding starts) here; cs1 holds until 1000 ms
		overlapNs int64 // 0: valid
	}{
		{"1 ms", ms(999), ms(1)},
		{"1 ns", ms(1000) - 1, 1},
		{"touching", ms(1000), 0},
	}
	for _, c := range cases {
		b := newHB(t)
		b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)    // cs1 [10 ms, 1000 ms)
		b.grant(1, 990, 995, "ch_1", "cs2", "cs2", 1000) // completion moved below
		h := b.history()
		h[3].Time = c.cs2DoneNs
		if c.overlapNs == 0 {
			mustValid(t, c.name, h)
			continue
		}
		r := mustViolate(t, c.name, h, TwoPrimaries)
		if v := r.Violations[0]; v.StartNs != c.cs2DoneNs || v.EndNs != ms(1000) || v.EndNs-v.StartNs != c.overlapNs {
			t.Errorf("%s: violation %+v, want the overlap [%d, %d)", c.name, v, c.cs2DoneNs, ms(1000))
		}
	}
	b := newHB(t) // the text shows the overlap exactly, not rounded to 0.000 ms
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grant(1, 990, 995, "ch_1", "cs2", "cs2", 1000)
	h := b.history()
	h[3].Time = ms(1000) - 1
	if r := CheckLease(h); len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Text, "for 0.000001 ms") {
		t.Errorf("1 ns overlap text: %+v", r.Violations)
	}
}

// TestCheckLeaseReadNearHoldingEnd: a read is covered by a holding
// [start, end) when start <= its invoke and its completion < end.
func TestCheckLeaseReadNearHoldingEnd(t *testing.T) {
	cases := []struct {
		name             string
		invokeNs, doneNs int64
		primary          string
		kind             string // "" when valid
	}{
		{"no holder, ends 1 ns before the end", ms(500), ms(1000) - 1, "", ReadNoHolder},
		{"no holder, ends at the end", ms(500), ms(1000), "", ""},
		{"wrong holder, ends 1 ns before the end", ms(500), ms(1000) - 1, "cs2", ReadWrongHolder},
		{"wrong holder, ends at the end", ms(500), ms(1000), "cs2", ""},
		{"no holder, invoked at the start", ms(10), ms(20), "", ReadNoHolder},
		{"no holder, invoked 1 ns before the start", ms(10) - 1, ms(20), "", ""},
		{"the holder, ends 1 ns before the end", ms(500), ms(1000) - 1, "cs1", ""},
	}
	for _, c := range cases {
		b := newHB(t)
		b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000) // cs1 [10 ms, 1000 ms)
		b.check(1, 500, 600, "ch_1", c.primary, false)
		h := b.history()
		h[2].Time, h[3].Time = c.invokeNs, c.doneNs
		h = inTimeOrder(h)
		if c.kind == "" {
			mustValid(t, c.name, h)
		} else {
			mustViolate(t, c.name, h, c.kind)
		}
	}
}

// TestCheckLeaseReleaseCutsUpToItsToken: a release cuts every holding of
// its server whose token is at most its own (rule 6 of package lease). The negative
// control is a node that ends a newer instance: releasing the older token
// must leave the renewal's holding in place, so the next server's grant
// overlaps it.
func TestCheckLeaseReleaseCutsUpToItsToken(t *testing.T) {
	build := func(release func(b *hb, t1, t2 int64)) []history.Op {
		b := newHB(t)
		t1 := b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 600)    // [10, 600)
		t2 := b.renew(0, 300, 310, "ch_1", "cs1", 1200, "n2") // [310, 1500)
		release(b, t1, t2)
		b.grant(1, 700, 710, "ch_1", "cs2", "cs2", 1000)
		return b.history()
	}
	r := mustViolate(t, "release with the older token (a node that ends the newer instance)", build(func(b *hb, t1, _ int64) {
		b.releaseTok(0, 400, 410, "ch_1", "cs1", t1, history.OK)
	}), TwoPrimaries)
	if h := r.Holdings[0]; h.Token != 1 || h.EndNs != ms(400) || h.CutByIndex == nil {
		t.Errorf("the grant's holding %+v, want token 1 cut at 400 ms", h)
	}
	if h := r.Holdings[1]; h.Token != 2 || h.EndNs != ms(1500) || h.CutByIndex != nil {
		t.Errorf("the renewal's holding %+v, want token 2 uncut", h)
	}
	r = mustValid(t, "release with the newer token", build(func(b *hb, _, t2 int64) {
		b.releaseTok(0, 400, 410, "ch_1", "cs1", t2, history.OK)
	}))
	for _, h := range r.Holdings[:2] {
		if h.Server != "cs1" || h.EndNs != ms(400) || h.CutByIndex == nil {
			t.Errorf("holding %+v, want it cut at the release (400 ms)", h)
		}
	}
	mustValid(t, "release with a larger token than any", build(func(b *hb, _, _ int64) {
		b.releaseTok(0, 400, 410, "ch_1", "cs1", 1<<40-1, history.OK)
	}))
}

// TestCheckLeaseReleaseOfNewerTokenEndsOlderLease: one release with the
// latest token gives back every lease of the server, the longer grant a
// shorter renewal extended included, so a node that frees the chunk then
// is valid. A release by another server, or of a smaller token, does not:
// those histories keep two primaries.
func TestCheckLeaseReleaseOfNewerTokenEndsOlderLease(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 2000)     // [10, 2000)
	b.renew(0, 500, 510, "ch_1", "cs1", 300, "n2")    // [510, 800): shorter
	b.release(0, 600, 610, "ch_1", "cs1", history.OK) // the last token: the renewal's
	b.grant(1, 900, 910, "ch_1", "cs2", "cs2", 1000)  // inside the grant's lease
	b.check(2, 1000, 1010, "ch_1", "cs2", false)      // agrees with the second primary
	mustValid(t, "older lease given back", b.history())

	b = newHB(t) // the older token alone leaves the renewal
	t1 := b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 2000)
	b.renew(0, 500, 510, "ch_1", "cs1", 1000, "n2") // [510, 1500)
	b.releaseTok(0, 600, 610, "ch_1", "cs1", t1, history.OK)
	b.grant(1, 900, 910, "ch_1", "cs2", "cs2", 1000)
	mustViolate(t, "renewal still held", b.history(), TwoPrimaries)

	b = newHB(t) // another server's release with the newest token frees nothing
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 2000)
	t2 := b.renew(0, 500, 510, "ch_1", "cs1", 300, "n2")
	b.releaseTok(1, 600, 610, "ch_1", "cs2", t2+100, history.OK)
	b.grant(1, 900, 910, "ch_1", "cs2", "cs2", 1000)
	mustViolate(t, "released by another server", b.history(), TwoPrimaries)
}

// TestCutHoldingsMatchesBruteForce holds the release sweep to the rule
// written out holding by holding: cut at the earliest release by the same
// server, invoked at or after the holding's invoke, with a token >= the
// holding's.
func TestCutHoldingsMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(int64(testseed.Get(t))), 2))
	servers := []string{"cs1", "cs2"}
	for round := range 3000 {
		var holdings []Holding
		for i := range 1 + rng.IntN(8) {
			inv := rng.Int64N(50)
			holdings = append(holdings, Holding{Server: servers[rng.IntN(2)], InvokeNs: inv, StartNs: inv + rng.Int64N(5),
				EndNs: inv + 5 + rng.Int64N(40), Token: 1 + rng.Int64N(6), InvokeIndex: 2 * i, CompletionIndex: 2*i + 1})
		}
		var releases []leaseRelease
		for i := range rng.IntN(8) {
			releases = append(releases, leaseRelease{server: servers[rng.IntN(2)], token: rng.Int64N(7),
				timeNs: rng.Int64N(60), index: 100 + i})
		}
		got := cutHoldings(slices.Clone(holdings), slices.Clone(releases))
		var want []Holding
		for _, h := range holdings {
			var first *leaseRelease
			for k, r := range releases {
				if r.server == h.Server && r.token != 0 && r.token >= h.Token && r.timeNs >= h.InvokeNs &&
					(first == nil || r.timeNs < first.timeNs) {
					first = &releases[k]
				}
			}
			if first != nil && first.timeNs < h.EndNs {
				h.EndNs = first.timeNs
			}
			if h.StartNs < h.EndNs {
				want = append(want, h)
			}
		}
		slices.SortStableFunc(want, byStart)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d holdings left, want %d\nholdings %+v\nreleases %+v", round, len(got), len(want), holdings, releases)
		}
		for i := range got {
			if got[i].EndNs != want[i].EndNs || got[i].InvokeIndex != want[i].InvokeIndex {
				t.Fatalf("round %d: holding %+v, want %+v\nreleases %+v", round, got[i], want[i], releases)
			}
		}
	}
}
