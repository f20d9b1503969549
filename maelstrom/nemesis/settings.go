package nemesis

// Settings of the faults a real network adds (contract section 2: the
// packet fault and the clock fault). They are data only: the schedule
// that draws them, and the networks that apply them, come with those
// faults.

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

// ClockSettings are a clock fault's settings: each node's wall-clock
// offset and clock rate (Jepsen's clock nemesis: bump and strobe).
type ClockSettings map[string]ClockShift

// ClockShift is one node's clock fault: OffsetMs is added to every
// wall-clock read, Rate scales elapsed monotonic time (1 is a true
// clock).
type ClockShift struct {
	OffsetMs int64   `json:"offset_ms"`
	Rate     float64 `json:"rate"`
}
