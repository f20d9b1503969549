package nemesis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestClockSchedule: the clock package alone is stagger(interval, mix of
// reset, bump and strobe): the first op at t=0, gaps in [0, 2*interval),
// each kind a third of the ops, skews over a uniform node specification,
// resets over every node.
func TestClockSchedule(t *testing.T) {
	const interval, n = time.Second, 30000
	s, err := NewSchedule(Faults{Clock: true}, interval, Streams{Clock: rand.New(rand.NewPCG(testSeed(t), 9))})
	if err != nil {
		t.Fatal(err)
	}
	kinds, specs := map[string]int{}, map[NodeSpec]int{}
	var prev Op
	for i := range n {
		op := s.Pop()
		if i == 0 && op.At != 0 {
			t.Fatalf("first op at %v, want 0", op.At)
		}
		if gap := op.At - prev.At; gap < 0 || gap >= 2*interval {
			t.Fatalf("gap %v outside [0, %v)", gap, 2*interval)
		}
		switch {
		case op.F == ClockReset && op.Nodes == SpecAll && op.Clock == "":
			kinds["reset"]++
		case op.F == ClockSkew && (op.Clock == Bump || op.Clock == Strobe):
			kinds[string(op.Clock)]++
			specs[op.Nodes]++
		default:
			t.Fatalf("op %+v is not a clock op", op)
		}
		prev = op
	}
	for _, k := range []string{"reset", "bump", "strobe"} {
		if f := float64(kinds[k]) / n; math.Abs(f-1.0/3) > 0.02 { // > 7 standard errors
			t.Errorf("%s is %.3f of the ops, want 1/3: %v", k, f, kinds)
		}
	}
	skews := kinds["bump"] + kinds["strobe"]
	for _, spec := range NodeSpecs {
		if f := float64(specs[spec]) / float64(skews); math.Abs(f-1.0/6) > 0.02 {
			t.Errorf("spec %q chosen %.3f of the time, want 1/6", spec, f)
		}
	}
}

// TestDrawClockStaysWithinBounds: whatever the nodes, bounds and node
// specification, a bump's offsets and rates and a strobe's rates stay
// within the bounds, half of them at the bound itself; a strobe keeps the
// offsets in force and mirrors its rates around 1, with a period and a
// duration in range; a reset puts every node back to a true clock.
func TestDrawClockStaysWithinBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 10))
	atBound, drawn := map[string]int{}, map[ClockMode]int{}
	for range 3000 {
		nodes := nodeNames(1 + rng.IntN(7))
		b := ClockBounds{DriftPPM: rng.Int64N(3000), MaxOffsetMs: rng.Int64N(20000)}
		now := ClockSettings{nodes[0]: {OffsetMs: 42, Rate: 1}}
		interval := time.Duration(1+rng.IntN(5000)) * time.Millisecond
		mode := []ClockMode{Bump, Strobe}[rng.IntN(2)]
		op := Op{F: ClockSkew, Clock: mode, Nodes: NodeSpecs[rng.IntN(len(NodeSpecs))]}
		s, err := DrawClock(op, nodes, now, b, interval, rng)
		if err != nil {
			t.Fatal(err)
		}
		if op.Nodes == SpecAll && len(s) != len(nodes) || op.Nodes == SpecRandom && len(s) == 0 {
			t.Fatalf("%s over %v picked %v", op.Nodes, nodes, s)
		}
		for node, c := range s {
			if !slices.Contains(nodes, node) {
				t.Fatalf("a setting for %q, not a node of %v", node, nodes)
			}
			drawn[mode]++
			if !withinRate(c.Rate, b.DriftPPM) || (mode == Bump && abs(c.OffsetMs) > b.MaxOffsetMs) {
				t.Fatalf("%+v outside %+v", c, b)
			}
			if math.Abs(math.Abs(c.Rate-1)-float64(b.DriftPPM)/1e6) < 1e-12 {
				atBound["rate"]++
			}
			if mode == Bump && abs(c.OffsetMs) == b.MaxOffsetMs {
				atBound["offset"]++
			}
			if mode == Bump && c.Strobe != nil {
				t.Fatalf("a bump with a strobe: %+v", c)
			}
			if mode == Strobe {
				checkStrobe(t, c, now[node].OffsetMs, interval)
			}
		}
	}
	if r, o := float64(atBound["rate"])/float64(drawn[Bump]+drawn[Strobe]), float64(atBound["offset"])/float64(drawn[Bump]); r < 0.45 || o < 0.45 {
		t.Errorf("%.2f of the rates and %.2f of the offsets at the bound, want about half", r, o)
	}
	reset, err := DrawClock(Op{F: ClockReset, Nodes: SpecAll}, nodeNames(3), nil, ClockBounds{}, time.Second, rng)
	if err != nil || len(reset) != 3 || reset["n2"] != (ClockShift{OffsetMs: 0, Rate: 1}) {
		t.Errorf("reset: %v, %v", reset, err)
	}
	if _, err := DrawClock(Op{F: ClockSkew, Clock: "wobble"}, nodeNames(3), nil, ClockBounds{}, time.Second, rng); err == nil {
		t.Error("an unknown clock mode was accepted")
	}
}

func checkStrobe(t *testing.T, c ClockShift, offsetMs int64, interval time.Duration) {
	t.Helper()
	st := c.Strobe
	switch {
	case st == nil:
		t.Fatalf("a strobe without its strobe: %+v", c)
	case c.OffsetMs != offsetMs:
		t.Fatalf("a strobe moved the offset from %d: %+v", offsetMs, c)
	case math.Abs(st.Rate-1+c.Rate-1) > 1e-12:
		t.Fatalf("strobe rates %v and %v are not mirrored around 1", c.Rate, st.Rate)
	case st.PeriodMs < StrobeMinPeriod.Milliseconds() || st.PeriodMs > StrobeMaxPeriod.Milliseconds():
		t.Fatalf("strobe period %d ms", st.PeriodMs)
	case st.DurationMs < 4*st.PeriodMs || st.DurationMs > 4*st.PeriodMs+min(interval, StrobeMaxExtra).Milliseconds():
		t.Fatalf("strobe duration %d ms (period %d ms, interval %v)", st.DurationMs, st.PeriodMs, interval)
	}
}

func withinRate(rate float64, ppm int64) bool {
	return math.Abs(rate-1) <= float64(ppm)/1e6+1e-12
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestClockOffsetBound: the offset bound is M/4 for ordinary runs, and
// shrinks so that two offsets plus two clocks drifting apart over the
// horizon stay strictly below the core's 3M/4.
func TestClockOffsetBound(t *testing.T) {
	cases := []struct {
		maxLeaseMs, ppm int64
		horizon         time.Duration
		want            int64
	}{
		{1000, 1000, 62 * time.Second, 250},
		{60000, 1000, 62 * time.Second, 15000},
		{1000, 0, time.Hour, 250},
		{1000, 1000, 200 * time.Second, 174}, // (750 - 400 - 1) / 2
		{1000, 1000, 10 * time.Minute, 0},
		{1, 1000, time.Second, 0},
	}
	for _, c := range cases {
		if got := ClockOffsetBoundMs(c.maxLeaseMs, c.ppm, c.horizon); got != c.want {
			t.Errorf("ClockOffsetBoundMs(%d, %d, %v) = %d, want %d", c.maxLeaseMs, c.ppm, c.horizon, got, c.want)
		}
	}
	if got := TokenClockBoundMs(1000); got != 750 {
		t.Errorf("TokenClockBoundMs(1000) = %d, want 750", got)
	}
	rng := rand.New(rand.NewPCG(testSeed(t), 11))
	for range 10000 {
		m, ppm := 1+rng.Int64N(600000), rng.Int64N(100000)
		h := time.Duration(rng.Int64N(int64(time.Hour)))
		x := ClockOffsetBoundMs(m, ppm, h)
		driftMs := float64(2*ppm) * h.Seconds() / 1000
		if x < 0 || x > m/4 || (x > 0 && float64(2*x)+driftMs >= float64(TokenClockBoundMs(m))) {
			t.Fatalf("M %d ms, %d ppm, horizon %v: offset bound %d ms breaks the token bound %d ms", m, ppm, h, x, TokenClockBoundMs(m))
		}
	}
}

// TestRatesReadExactly: a drift in ppm is a rate that JSON writes as a
// person would.
func TestRatesReadExactly(t *testing.T) {
	b, _ := json.Marshal(ClockSettings{"n1": {OffsetMs: -250, Rate: RateOfPPM(734)}, "n2": {Rate: RateOfPPM(-1000)}})
	if want := `{"n1":{"offset_ms":-250,"rate":1.000734},"n2":{"offset_ms":0,"rate":0.999}}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
