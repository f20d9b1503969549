package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"chunklease/internal/clock"
	"chunklease/maelstrom/nemesis"
)

// The clock nemesis (contract section 2, clock), which the runner applies
// itself for any network that passes Host.NodeEnv on: each node's clock
// is a control file in the run directory, clock/<node>.json, holding
// {"offset_ms": N, "rate": R}, named to the node by LEASE_CLOCK_FILE at
// every start and restart. A node built with -tags clockfault reads it at
// start and every 10 ms while it runs (package internal/clock); applying
// a clock op is writing the files, each whole (a temporary file renamed
// over it). The node reads its wall clock only at start, so an offset
// counts from the node's next start; a rate counts at once.

// NodeDriftPPMDefault is lease-node's LEASE_DRIFT_PPM when the
// environment sets none: the rate bound the nodes assume.
const NodeDriftPPMDefault = 1000

// BuildClockfault is the command that builds a node the clock nemesis
// works with.
const BuildClockfault = "go build -tags clockfault -o bin/lease-node-clockfault ."

const (
	// nodeMaxLeaseMsDefault is lease-node's LEASE_MAX_MS by default: the
	// offset bound's M for a workload without leases of its own.
	nodeMaxLeaseMsDefault = 60000
	// clockHorizonSlack is added to the time limit and the recovery wait
	// for the horizon over which clocks drift apart: the start, ops in
	// flight at the cutoff and the final reads.
	clockHorizonSlack = 30 * time.Second
	// maxClockOffsetMs is the largest offset a run may ask for (about 10
	// years; a node refuses more than 100).
	maxClockOffsetMs = 10 * 365 * 24 * 3600 * 1000
	clockDirName     = "clock"
	// clockVerifyTimeout bounds the wait for every node's log to say
	// whether it follows its clock file (it logs that before init).
	clockVerifyTimeout = 5 * time.Second
	clockVerifyPoll    = 20 * time.Millisecond
)

// clockWork is the clock nemesis's state; nil without the clock fault.
type clockWork struct {
	draw  nemesis.ClockBounds   // what the nemesis draws within
	nodes nemesis.ClockBounds   // the nodes' own bounds
	dir   string                // absolute path of the run's clock/ directory
	now   nemesis.ClockSettings // every node's clock as last applied
	rng   *rand.Rand            // nodes and settings (stream 8)
}

// nodeDriftPPM is the rate bound the nodes run with: LEASE_DRIFT_PPM of
// the environment they inherit, else lease-node's default.
func nodeDriftPPM() (int64, error) {
	v := strings.TrimSpace(os.Getenv("LEASE_DRIFT_PPM"))
	if v == "" {
		return NodeDriftPPMDefault, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 499_999 {
		return 0, fmt.Errorf("LEASE_DRIFT_PPM is %q in the environment the nodes inherit: lease-node wants a whole number in 0..499999, and the clock nemesis draws rates within it", v)
	}
	return n, nil
}

// clockBounds are the nodes' bounds, for the run's leases and length
// (nemesis.ClockOffsetBoundMs, LEASE_DRIFT_PPM), and what the nemesis
// draws within: the same, unless the options override them.
func (r *runner) clockBounds() (draw, nodes nemesis.ClockBounds) {
	ppm, _ := nodeDriftPPM() // validated
	m := r.leaseMs
	if m <= 0 {
		m = nodeMaxLeaseMsDefault
	}
	recovery := r.o.RecoveryTime
	if recovery == 0 {
		recovery = DefaultRecoveryTime(r.leaseMs)
	}
	horizon := r.o.TimeLimit + recovery + clockHorizonSlack
	nodes = nemesis.ClockBounds{DriftPPM: ppm, MaxOffsetMs: nemesis.ClockOffsetBoundMs(m, ppm, horizon)}
	draw = nodes
	if v := r.o.ClockDriftPPM; v != nil {
		draw.DriftPPM = *v
	}
	if v := r.o.ClockMaxOffsetMs; v != nil {
		draw.MaxOffsetMs = *v
	}
	return draw, nodes
}

// prepareClock makes every node's clock file, true to begin with.
func (r *runner) prepareClock() error {
	if !r.o.Faults.Clock {
		return nil
	}
	dir, err := filepath.Abs(filepath.Join(r.dir, clockDirName))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c := &clockWork{dir: dir, now: nemesis.ResetClocks(r.o.Nodes), rng: rand.New(rand.NewPCG(StreamSeed(r.o.Seed, 8), 0))}
	c.draw, c.nodes = r.clockBounds()
	for _, id := range r.o.Nodes {
		if err := c.write(id, c.now[id]); err != nil {
			return err
		}
	}
	r.clock = c
	return nil
}

// withinBound reports whether the nemesis draws within the nodes' bounds.
func (c *clockWork) withinBound() bool {
	return c.draw.DriftPPM <= c.nodes.DriftPPM && c.draw.MaxOffsetMs <= c.nodes.MaxOffsetMs
}

// describe is the start banner's line on the clock nemesis.
func (c *clockWork) describe() string {
	s := fmt.Sprintf("maelstrom: clock nemesis: rates within 1 +- %d ppm, offsets within +-%d ms; the nodes' bounds: %d ppm (LEASE_DRIFT_PPM), %d ms (for token order across restarts)",
		c.draw.DriftPPM, c.draw.MaxOffsetMs, c.nodes.DriftPPM, c.nodes.MaxOffsetMs)
	if !c.withinBound() {
		s += "\nmaelstrom: the clock nemesis draws beyond the nodes' bounds: this run is its negative control, and an invalid verdict is what should come"
	}
	return s
}

// path is node id's clock file.
func (c *clockWork) path(id string) string { return filepath.Join(c.dir, id+".json") }

// env is node id's extra environment (Host.NodeEnv).
func (c *clockWork) env(id string) []string { return []string{clock.EnvFile + "=" + c.path(id)} }

// write sets node id's clock file to s, whole: a temporary file renamed
// over it, so the node never reads half a file.
func (c *clockWork) write(id string, s nemesis.ClockShift) error {
	b, _ := json.Marshal(clock.Setting{OffsetMs: s.OffsetMs, Rate: s.Rate}) // numbers always marshal
	tmp := c.path(id) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the clock of %s: %w", id, err)
	}
	if err := os.Rename(tmp, c.path(id)); err != nil {
		return fmt.Errorf("writing the clock of %s: %w", id, err)
	}
	return nil
}

// writeAll writes every node of s: its strobe rate when strobing, else
// its settled clock.
func (c *clockWork) writeAll(s nemesis.ClockSettings, strobing bool) error {
	for _, id := range slices.Sorted(maps.Keys(s)) {
		shift := s[id]
		if strobing && shift.Strobe != nil {
			shift.Rate = shift.Strobe.Rate
		}
		if err := c.write(id, shift); err != nil {
			return err
		}
	}
	return nil
}

// settle records that s is now in force (a strobe ends at its own rate).
func (c *clockWork) settle(s nemesis.ClockSettings) nemesis.ClockSettings {
	out := nemesis.ClockSettings{}
	for id, shift := range s {
		shift.Strobe = nil
		out[id], c.now[id] = shift, shift
	}
	return out
}

// applyClock applies a clock op the runner drew (f.Settings): a bump or
// a reset writes the files and completes at once; a strobe flips the
// rates on a goroutine of its own for its duration and completes then,
// like a start, holding back every other nemesis op meanwhile.
func (r *runner) applyClock(f Fault) {
	s, _ := f.Settings.(nemesis.ClockSettings) // choose made it
	period, duration := strobeTiming(s)
	if duration == 0 {
		if err := r.clock.writeAll(s, false); err != nil {
			r.failure.set(fmt.Errorf("nemesis %s: %w", f.F, err))
			return
		}
		r.recordNemesis(f.F, r.clock.settle(s))
		return
	}
	done := make(chan error, 1)
	ctx := r.nemesis.ctx
	r.nemesis.bg.Go(func() { done <- r.clock.strobe(ctx, s, period, duration) })
	r.nemesis.pending(done, func() { r.recordNemesis(f.F, r.clock.settle(s)) })
}

// strobeTiming is a strobe's period and duration; zero without a strobe.
func strobeTiming(s nemesis.ClockSettings) (period, duration time.Duration) {
	for _, shift := range s {
		if st := shift.Strobe; st != nil && st.PeriodMs > 0 {
			return time.Duration(st.PeriodMs) * time.Millisecond, time.Duration(st.DurationMs) * time.Millisecond
		}
	}
	return 0, 0
}

// strobe flips the rates of s every period until duration has passed,
// beginning with each strobe's own rate and ending at the settled one.
// It returns early, with nothing written after, when ctx ends.
func (c *clockWork) strobe(ctx context.Context, s nemesis.ClockSettings, period, duration time.Duration) error {
	end := time.NewTimer(duration)
	defer end.Stop()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for strobing := true; ; strobing = !strobing {
		if err := c.writeAll(s, strobing); err != nil {
			return err
		}
		select {
		case <-end.C:
			return c.writeAll(s, false)
		case <-tick.C:
		case <-ctx.Done():
			return nil
		}
	}
}

// verifyClockfault makes sure that every node follows its clock file, or
// the clock nemesis would do nothing and a valid verdict would mean
// nothing: a clockfault build logs clock.FollowingNote before it answers
// init, a normal build clock.IgnoredNote. It reads each node's log
// (Host.Dir/node-logs/<id>.log), waiting a little for lines still on
// their way there.
func (r *runner) verifyClockfault(ctx context.Context) error {
	if r.clock == nil {
		return nil
	}
	deadline := time.Now().Add(clockVerifyTimeout)
	for _, id := range r.o.Nodes {
		logPath := filepath.Join(r.dir, "node-logs", id+".log")
		for {
			b, _ := os.ReadFile(logPath) // not there yet: wait
			log := string(b)
			switch {
			case strings.Contains(log, clock.FollowingNote(r.clock.path(id))):
			case strings.Contains(log, clock.IgnoredNote(clock.EnvFile)):
				return notClockfault(id, logPath, fmt.Sprintf("says %q", clock.IgnoredNote(clock.EnvFile)))
			case time.Now().After(deadline):
				return notClockfault(id, logPath, fmt.Sprintf("has no line %q", clock.FollowingNote(r.clock.path(id))))
			default:
				if err := sleepCtx(ctx, clockVerifyPoll); err != nil {
					return err
				}
				continue
			}
			break
		}
	}
	return nil
}

// notClockfault is the failure of a run whose node does not follow its
// clock file.
func notClockfault(id, logPath, what string) error {
	return fmt.Errorf("--nemesis clock needs a node built with -tags clockfault, or every clock fault would silently do nothing: "+
		"the log of node %s (%s) %s. Build one with `%s` and pass --bin bin/lease-node-clockfault", id, logPath, what, BuildClockfault)
}

// sleepCtx waits d, or until ctx ends (ErrInterrupted).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ErrInterrupted
	}
}

// skewed lists the nodes whose clocks are not true, for the progress
// line.
func (c *clockWork) skewed() []string {
	var out []string
	for id, s := range c.now {
		if s.OffsetMs != 0 || s.Rate != 1 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
