package nemesis

import (
	"fmt"
	"math/rand/v2"
)

// Settings of the faults that carry more than a shape or nodes (contract
// section 2: the packet fault and the clock fault). They are data: the
// schedule draws a packet op's settings (DrawPacket), the harness a clock
// op's (DrawClock); the networks apply them and the history records them.

// PacketSettings are a packet fault's settings: for a period, the links
// of Nodes carry every packet they send to another node with LinkFault
// (Jepsen's packet nemesis over tc netem). The schedule draws the
// LinkFault, the runner picks Nodes with the op's node specification.
// In the history the fields are flat: {"nodes": [...], "delay_ms": ...}.
type PacketSettings struct {
	Nodes []string `json:"nodes"`
	LinkFault
}

// LinkFault is what a faulty link does to each packet: delay it by
// DelayMs plus or minus JitterMs, and lose, duplicate and reorder the
// given percentages of them. Each network converts it to its own type
// with the same fields (netsim.PacketFault, netns.PacketFault).
type LinkFault struct {
	DelayMs      int     `json:"delay_ms"`
	JitterMs     int     `json:"jitter_ms"`
	LossPct      float64 `json:"loss_pct"`
	DuplicatePct float64 `json:"duplicate_pct"`
	ReorderPct   float64 `json:"reorder_pct"`
}

// PacketOf reads a start-packet's settings from the Settings a network
// gets with the fault (harness.Fault.Settings).
func PacketOf(settings any) (PacketSettings, error) {
	s, ok := settings.(PacketSettings)
	if !ok {
		return s, fmt.Errorf("start-packet without packet settings (%T)", settings)
	}
	return s, nil
}

// ClockSettings are a clock op's settings, by node: each affected node's
// wall-clock offset and clock rate (Jepsen's clock nemesis: bump, strobe,
// reset). They are the op's value in the history.
type ClockSettings map[string]ClockShift

// ClockShift is one node's clock: OffsetMs is added to every wall-clock
// read, Rate scales elapsed monotonic time (1 is a true clock). With
// Strobe, the node's rate first flips between Strobe.Rate and Rate for a
// while, and Rate is where it ends.
type ClockShift struct {
	OffsetMs int64        `json:"offset_ms"`
	Rate     float64      `json:"rate"`
	Strobe   *ClockStrobe `json:"strobe,omitempty"` // nil: the setting holds at once
}

// ClockStrobe is a strobe of a node's rate: every PeriodMs for DurationMs
// the rate flips, starting at Rate and alternating with the shift's own
// Rate, which it ends at.
type ClockStrobe struct {
	Rate       float64 `json:"rate"`
	PeriodMs   int64   `json:"period_ms"`
	DurationMs int64   `json:"duration_ms"`
}

// DrawPacket draws a packet fault's settings, as Jepsen's packet nemesis
// picks a random non-empty subset of its behaviours: each of delay,
// loss, duplication and reordering is in with chance 1/2 (at least one
// is), with whole-number values:
//
//	delay      10 to 100 ms in steps of 10, jitter 0 to half the delay
//	loss       5 to 30 %
//	duplicate  5 to 25 %
//	reorder    10 to 30 %, with a delay (reordered packets overtake delayed ones)
//
// Delays stay well under the shortest lease the project tests (300 ms)
// but reach a quorum round's scale; losses and duplicates are Jepsen's
// default 20 %, give or take.
func DrawPacket(rng *rand.Rand) PacketSettings {
	between := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	const delay, loss, duplicate, reorder = 1, 2, 4, 8
	in := between(1, 15) // a non-empty subset of the four
	var s PacketSettings
	if in&(delay|reorder) != 0 {
		s.DelayMs = 10 * between(1, 10)
		s.JitterMs = between(0, s.DelayMs/2)
	}
	if in&loss != 0 {
		s.LossPct = float64(between(5, 30))
	}
	if in&duplicate != 0 {
		s.DuplicatePct = float64(between(5, 25))
	}
	if in&reorder != 0 {
		s.ReorderPct = float64(between(10, 30))
	}
	return s
}
