package netns

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// PacketFault is what a node's link does to the packets the node sends to
// other nodes (never to clients): Jepsen's packet nemesis, as values the
// caller records in the history. The zero value does nothing. doc.go says
// exactly how each field is carried out on a kernel without netem.
type PacketFault struct {
	// DelayMs holds each packet this long before it leaves.
	DelayMs int `json:"delay_ms"`
	// JitterMs spreads the delay uniformly over [DelayMs-JitterMs,
	// DelayMs+JitterMs] (never below 0), as netem's jitter does; packets
	// whose delays cross leave in the order of their delays, so jitter
	// reorders.
	JitterMs int `json:"jitter_ms"`
	// LossPct drops this share of packets, each independently.
	LossPct float64 `json:"loss_pct"`
	// DuplicatePct sends a second copy of this share of packets.
	DuplicatePct float64 `json:"duplicate_pct"`
	// ReorderPct sends this share of packets at once, ahead of the
	// delayed ones (netem's reorder); it needs a delay to overtake.
	ReorderPct float64 `json:"reorder_pct"`
}

// maxDelayMs bounds DelayMs and JitterMs: a minute is far beyond any
// lease this project tests, and a bound keeps the held packets finite.
const maxDelayMs = 60_000

// pctResolution is the finest share the kernel's loss and duplicate
// rules can express: they compare a random number mod 10000, so one
// step is 0.01%.
const pctResolution = 0.01

// IsZero reports whether f does nothing.
func (f PacketFault) IsZero() bool { return f == PacketFault{} }

// delays reports whether f needs the userspace delay path (doc.go).
func (f PacketFault) delays() bool { return f.DelayMs > 0 || f.JitterMs > 0 }

// Validate says what is wrong with f on a link without latency, naming
// the field; nil when a lab can carry it out.
func (f PacketFault) Validate() error { return f.validate(0) }

// validate checks f on a link that also carries latencyMs (which gives a
// reorder something to overtake).
func (f PacketFault) validate(latencyMs int) error {
	var errs []error
	for _, d := range []struct {
		name string
		ms   int
	}{{"delay_ms", f.DelayMs}, {"jitter_ms", f.JitterMs}} {
		if d.ms < 0 || d.ms > maxDelayMs {
			errs = append(errs, fmt.Errorf("%s %d: must be in 0..%d", d.name, d.ms, maxDelayMs))
		}
	}
	for _, p := range []struct {
		name string
		pct  float64
	}{{"loss_pct", f.LossPct}, {"duplicate_pct", f.DuplicatePct}, {"reorder_pct", f.ReorderPct}} {
		if err := validPct(p.name, p.pct); err != nil {
			errs = append(errs, err)
		}
	}
	if total := f.DelayMs + latencyMs; total > maxDelayMs {
		errs = append(errs, fmt.Errorf("delay_ms %d plus latency %d ms: more than %d", f.DelayMs, latencyMs, maxDelayMs))
	}
	if f.ReorderPct > 0 && !f.withLatency(latencyMs).delays() {
		errs = append(errs, fmt.Errorf("reorder_pct %g needs a delay for packets to overtake: set delay_ms (or the lab's latency)", f.ReorderPct))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("packet fault %s: %w", f, err)
	}
	return nil
}

func validPct(name string, pct float64) error {
	if math.IsNaN(pct) || pct < 0 || pct > 100 {
		return fmt.Errorf("%s %g: must be a percentage in 0..100", name, pct)
	}
	steps := pct / pctResolution
	if math.Abs(steps-math.Round(steps)) > 1e-6 {
		return fmt.Errorf("%s %g: finer than the kernel's step of %g%%", name, pct, pctResolution)
	}
	return nil
}

// String is the fault in netem's words, e.g. "delay 50ms ±10ms, loss 20%,
// duplicate 5%, reorder 10%"; "none" for the zero value.
func (f PacketFault) String() string {
	var parts []string
	if f.delays() {
		d := fmt.Sprintf("delay %dms", f.DelayMs)
		if f.JitterMs > 0 {
			d += fmt.Sprintf(" ±%dms", f.JitterMs)
		}
		parts = append(parts, d)
	}
	for _, p := range []struct {
		name string
		pct  float64
	}{{"loss", f.LossPct}, {"duplicate", f.DuplicatePct}, {"reorder", f.ReorderPct}} {
		if p.pct != 0 {
			parts = append(parts, fmt.Sprintf("%s %g%%", p.name, p.pct))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// withLatency is f on a link that also carries the lab's constant
// latency: the delays add up.
func (f PacketFault) withLatency(latencyMs int) PacketFault {
	f.DelayMs += latencyMs
	return f
}

// permyriad is pct in the kernel rules' unit, 0.01% (validated to be
// a whole number of them).
func permyriad(pct float64) uint32 { return uint32(math.Round(pct / pctResolution)) }

// PacketStats counts what one node's userspace delay path did since the
// lab was created (doc.go: the kernel's loss and duplicate rules are not
// counted here).
type PacketStats struct {
	// Delayed is how many packets were held for a delay.
	Delayed uint64 `json:"delayed"`
	// Immediate is how many queued packets left at once: reorders, and
	// draws whose jittered delay came to 0.
	Immediate uint64 `json:"immediate"`
	// MaxHeld is the most packets held at one time.
	MaxHeld int `json:"max_held"`
	// MeanLateUs and MaxLateUs say how long after its due time a held
	// packet got its verdict (the userspace path's own added delay), in
	// microseconds, over the packets released so far.
	MeanLateUs int64 `json:"mean_late_us"`
	MaxLateUs  int64 `json:"max_late_us"`
}
