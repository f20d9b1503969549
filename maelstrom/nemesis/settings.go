package nemesis

// Settings of the faults that carry more than a shape or nodes
// (contract section 2: the packet fault and the clock fault). They are
// data: the harness draws a clock op's settings (DrawClock) and applies
// them; the packet fault's schedule and networks come with that fault.

// PacketSettings are a packet fault's settings: for a period, the links
// of Nodes delay each packet by DelayMs plus or minus JitterMs, and lose,
// duplicate and reorder the given percentages of them (Jepsen's packet
// nemesis over tc netem).
type PacketSettings struct {
	Nodes        []string `json:"nodes"`
	DelayMs      int      `json:"delay_ms"`
	JitterMs     int      `json:"jitter_ms"`
	LossPct      float64  `json:"loss_pct"`
	DuplicatePct float64  `json:"duplicate_pct"`
	ReorderPct   float64  `json:"reorder_pct"`
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
