package nemesis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// The clock fault: Jepsen's clock nemesis (nemesis/time.clj, the clock
// package of nemesis/combined.clj) for nodes that take their clocks from
// a control file (a lease-node built with -tags clockfault, package
// internal/clock). Jepsen bumps a node's wall clock by an offset, strobes
// it back and forth, and resets it; here a node has two clock settings,
// a wall-clock offset and a rate (a factor on elapsed time), and the ops
// are:
//
//   - bump (clock-skew, Bump): each chosen node gets a drawn offset
//     and a drawn rate, both absolute (not added to what it had), so the
//     bounds hold whatever came before;
//   - strobe (clock-skew, Strobe): each chosen node's rate flips
//     between two drawn rates every period for a while, then stays at the
//     first; its offset is kept. (A node reads its wall clock only at
//     start, so a strobe of the offset itself would change nothing; the
//     rate is what a running node feels at once.)
//   - reset (clock-reset): every node back to offset 0, rate 1.

// ClockMode is what a clock-skew op does: a bump or a strobe.
type ClockMode string

// The clock-skew modes.
const (
	Bump   ClockMode = "bump"
	Strobe ClockMode = "strobe"
)

// clockMix is the clock package's generator: each op is a reset, a bump
// or a strobe, uniformly (Jepsen's gen/mix of reset-gen, bump-gen and
// strobe-gen); a bump or strobe picks a node specification uniformly
// (Jepsen's clock targets are its node specs).
type clockMix struct{}

func (clockMix) next(rng *rand.Rand) Op {
	switch rng.IntN(3) {
	case 0:
		return Op{F: ClockReset, Nodes: SpecAll}
	case 1:
		return Op{F: ClockSkew, Clock: Bump, Nodes: NodeSpecs[rng.IntN(len(NodeSpecs))]}
	}
	return Op{F: ClockSkew, Clock: Strobe, Nodes: NodeSpecs[rng.IntN(len(NodeSpecs))]}
}

// ClockBounds bound what the clock nemesis draws. Within the nodes' own
// bounds (ClockOffsetBoundMs and the nodes' LEASE_DRIFT_PPM) a run must
// stay valid; beyond them, it is the clock nemesis's negative control.
type ClockBounds struct {
	DriftPPM    int64 // every rate is within 1 +- DriftPPM/1e6
	MaxOffsetMs int64 // every offset is within +-MaxOffsetMs
}

// TokenClockBoundMs is the lease core's bound on wall-clock disagreement
// for fencing-token order across restarts (lease/doc.go, "Fencing
// tokens"): any two nodes' wall-clock estimates must differ by less than
// B - L, where B is the boot wait and L = M/4 the bound on a ballot
// counter's lead over its node's wall clock. The harness restarts killed
// nodes with B = M (the workload's longest lease), so the bound is 3M/4:
// 750 ms for 1 s leases. This is the one place the harness states it.
func TokenClockBoundMs(maxLeaseMs int64) int64 {
	return maxLeaseMs - maxLeaseMs/4
}

// ClockOffsetBoundMs is the largest wall-clock offset, either way, that
// the clock nemesis gives a node within the bound: M/4 (250 ms for 1 s
// leases), smaller when the run is so long that clocks drifting apart at
// the rate bound would eat the rest of TokenClockBoundMs.
//
// Why M/4: two offsets differ by at most M/2, which leaves M/4 of the 3M/4
// bound for the rates. A node's wall-clock estimate is its wall clock at
// start plus what its own clock counted since, so at rate 1 +- rho it
// drifts from true time by rho per unit of time it runs; two nodes drift
// apart by at most 2 * rho * horizon over a horizon (the whole run, final
// phase included). Offsets are shrunk so that 2 * offset + 2 * rho *
// horizon stays below the bound: M/4 holds for horizons up to M/(8 rho),
// 125 s at 1000 ppm with 1 s leases (a time limit of about 90 s in the
// harness), two hours with 60 s leases. Zero when nothing is left.
func ClockOffsetBoundMs(maxLeaseMs, driftPPM int64, horizon time.Duration) int64 {
	const ppmMs = 1_000_000 * int64(time.Millisecond)          // a ppm of this many ns is a ms
	driftMs := (2*driftPPM*int64(horizon) + ppmMs - 1) / ppmMs // rounded up
	left := (TokenClockBoundMs(maxLeaseMs) - driftMs - 1) / 2  // strictly below the bound
	return max(0, min(maxLeaseMs/4, left))
}

// Strobe timing: a strobe flips rates every period, uniform in
// [StrobeMinPeriod, StrobeMaxPeriod] (at least a few of the node's 10 ms
// reads of its control file), for four periods plus a time uniform in
// [0, min(interval, StrobeMaxExtra)).
const (
	StrobeMinPeriod = 20 * time.Millisecond
	StrobeMaxPeriod = 200 * time.Millisecond
	StrobeMaxExtra  = 5 * time.Second
)

// RateOfPPM is the clock rate of a drift of ppm parts per million: 1 +
// ppm/1e6, written exactly (1.000734, 0.999).
func RateOfPPM(ppm int64) float64 { return float64(1_000_000+ppm) / 1_000_000 }

// ResetClocks is every node back to a true clock: clock-reset's value.
func ResetClocks(nodes []string) ClockSettings {
	s := ClockSettings{}
	for _, n := range nodes {
		s[n] = ClockShift{OffsetMs: 0, Rate: 1}
	}
	return s
}

// DrawClock draws a clock op's settings over nodes. A clock-skew picks
// its nodes by op.Nodes; a bump draws each one's offset and rate, a
// strobe its two rates (now holds the offsets in force, which a strobe
// keeps) and the strobe's period and duration (from interval, the
// nemesis interval). A clock-reset is ResetClocks. Every offset is within
// b.MaxOffsetMs and every rate within b.DriftPPM; half the draws are at
// the bound itself, where a wrong assumption shows first.
func DrawClock(op Op, nodes []string, now ClockSettings, b ClockBounds, interval time.Duration, rng *rand.Rand) (ClockSettings, error) {
	switch {
	case op.F == ClockReset:
		return ResetClocks(nodes), nil
	case op.F != ClockSkew:
		return nil, fmt.Errorf("%q is not a clock op", op.F)
	case op.Clock != Bump && op.Clock != Strobe:
		return nil, fmt.Errorf("unknown clock mode %q", op.Clock)
	}
	chosen, err := PickNodes(op.Nodes, nodes, rng)
	if err != nil {
		return nil, err
	}
	s := ClockSettings{}
	if op.Clock == Bump {
		for _, n := range chosen {
			s[n] = ClockShift{OffsetMs: drawOffsetMs(b.MaxOffsetMs, rng), Rate: RateOfPPM(drawPPM(b.DriftPPM, rng))}
		}
		return s, nil
	}
	minMs, maxMs := StrobeMinPeriod.Milliseconds(), StrobeMaxPeriod.Milliseconds()
	periodMs := minMs + rng.Int64N(maxMs-minMs+1)
	durationMs := 4*periodMs + rng.Int64N(max(min(interval, StrobeMaxExtra).Milliseconds(), 1))
	for _, n := range chosen {
		ppm := drawPPM(b.DriftPPM, rng)
		s[n] = ClockShift{OffsetMs: now[n].OffsetMs, Rate: RateOfPPM(ppm),
			Strobe: &ClockStrobe{Rate: RateOfPPM(-ppm), PeriodMs: periodMs, DurationMs: durationMs}}
	}
	return s, nil
}

// drawPPM is a rate's drift in ppm within +-bound: the bound itself (either
// way) half the time, else uniform.
func drawPPM(bound int64, rng *rand.Rand) int64 {
	if bound <= 0 {
		return 0
	}
	if rng.IntN(2) == 0 {
		return bound * int64(1-2*rng.IntN(2))
	}
	return rng.Int64N(2*bound+1) - bound
}

// drawOffsetMs is an offset within +-bound ms: the bound itself half the
// time, else log-uniform in [1, bound] (Jepsen's bump draws 2^(2..18) ms,
// exponentially distributed), either way.
func drawOffsetMs(bound int64, rng *rand.Rand) int64 {
	if bound <= 0 {
		return 0
	}
	mag := bound
	if rng.IntN(2) == 0 {
		mag = int64(math.Round(math.Pow(float64(bound), rng.Float64())))
	}
	return mag * int64(1-2*rng.IntN(2))
}
