package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/history"
	"chunklease/internal/clock"
	"chunklease/maelstrom/nemesis"
	"chunklease/report"
)

// clockfaultLog is what a clockfault build logs: that it follows the
// file its environment names.
func clockfaultLog(_ string, env []string) string {
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, clock.EnvFile+"="); ok {
			return clock.FollowingNote(path)
		}
	}
	return "no clock file"
}

// clockSteps reads the run's nemesis ops as (invoke, completion) pairs of
// clock settings.
func clockSteps(t *testing.T, dir string) [][2]nemesis.ClockSettings {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := history.ReadHistory(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var nem []history.Op
	for _, op := range ops {
		if op.Process.Nemesis {
			nem = append(nem, op)
		}
	}
	var steps [][2]nemesis.ClockSettings
	for i := 0; i+1 < len(nem); i += 2 {
		inv, done := nem[i], nem[i+1]
		if inv.F != done.F || (inv.F != nemesis.ClockSkew && inv.F != nemesis.ClockReset) {
			t.Fatalf("nemesis ops %s and %s: want clock ops in pairs", inv.F, done.F)
		}
		var a, b nemesis.ClockSettings
		if json.Unmarshal(inv.Value, &a) != nil || json.Unmarshal(done.Value, &b) != nil {
			t.Fatalf("clock op values %s, %s are no clock settings", inv.Value, done.Value)
		}
		if inv.F == nemesis.ClockReset && !reflect.DeepEqual(a, nemesis.ResetClocks([]string{"n1", "n2", "n3"})) {
			t.Fatalf("a clock-reset of %v, want every node back to a true clock", a)
		}
		steps = append(steps, [2]nemesis.ClockSettings{a, b})
	}
	return steps
}

// readClock reads node id's clock file.
func readClock(t *testing.T, dir, id string) nemesis.ClockShift {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "clock", id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s clock.Setting
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("clock file of %s: %q: %v", id, b, err)
	}
	return nemesis.ClockShift{OffsetMs: s.OffsetMs, Rate: s.Rate}
}

// TestClockNemesisOnAnyNetwork: the runner applies the clock fault
// itself for a network it has never seen, as long as the network passes
// Host.NodeEnv on: every node's environment names its clock file in the
// run directory, the network never gets a clock op, the history has
// bumps, strobes and resets with each node's offset and rate, all within
// the nodes' bounds, each completion the settled settings of its invoke,
// and the files end as the history says.
func TestClockNemesisOnAnyNetwork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &memNetwork{supports: []nemesis.Fault{nemesis.Clock}, logLine: clockfaultLog}
		o := memOptions(t, net, nemesis.Faults{Clock: true})
		o.TimeLimit = 40 * time.Second
		out := Run(context.Background(), o)
		if out.Exit != ExitValid {
			t.Fatalf("exit %d (%v), want valid", out.Exit, out.Err)
		}
		for _, f := range net.applied {
			t.Errorf("the network got a fault: %+v", f)
		}
		abs, _ := filepath.Abs(out.Dir)
		want := []string{clock.EnvFile + "=" + filepath.Join(abs, "clock", "n2.json")}
		if got := net.host.NodeEnv("n2"); !reflect.DeepEqual(got, want) {
			t.Errorf("NodeEnv(n2) = %v, want %v", got, want)
		}
		// An echo run has no leases: the bound is lease-node's default M (60 s).
		bounds := nemesis.ClockBounds{DriftPPM: NodeDriftPPMDefault, MaxOffsetMs: 15000}
		last := nemesis.ResetClocks(o.Nodes)
		modes := map[string]int{}
		for _, st := range clockSteps(t, out.Dir) {
			inv, done := st[0], st[1]
			modes[clockMode(inv)]++
			for id, c := range inv {
				settled := c
				settled.Strobe = nil
				if done[id] != settled || !within(c, bounds) || (c.Strobe != nil && !within(nemesis.ClockShift{Rate: c.Strobe.Rate}, bounds)) {
					t.Fatalf("node %s: invoke %+v, completion %+v, bounds %+v", id, c, done[id], bounds)
				}
				last[id] = settled
			}
			if len(done) != len(inv) {
				t.Fatalf("completion %v of invoke %v", done, inv)
			}
		}
		if modes["bump"] == 0 || modes["strobe"] == 0 || modes["reset"] == 0 {
			t.Errorf("clock ops by mode %v: want bumps, strobes and resets", modes)
		}
		for _, id := range o.Nodes {
			if got := readClock(t, out.Dir, id); got != last[id] {
				t.Errorf("clock file of %s holds %+v, the history's last setting is %+v", id, got, last[id])
			}
		}
		if c := out.Results.Nemesis.Clock; c == nil || *c != (report.ClockBounds{DriftPPM: 1000, MaxOffsetMs: 15000, NodeDriftPPM: 1000, NodeMaxOffsetMs: 15000, WithinBound: true}) {
			t.Errorf("results.json nemesis.clock %+v", c)
		}
	})
}

func clockMode(s nemesis.ClockSettings) string {
	for _, c := range s {
		if c.Strobe != nil {
			return "strobe"
		}
		if c != (nemesis.ClockShift{OffsetMs: 0, Rate: 1}) {
			return "bump"
		}
	}
	return "reset" // or a bump that drew nothing (a rare true clock)
}

func within(c nemesis.ClockShift, b nemesis.ClockBounds) bool {
	return math.Abs(c.Rate-1) <= float64(b.DriftPPM)/1e6+1e-12 && c.OffsetMs >= -b.MaxOffsetMs && c.OffsetMs <= b.MaxOffsetMs
}

// TestClockNemesisNeedsAClockfaultNode: a node that ignores its clock
// file (a normal build says so), or never says it follows it, fails the
// run (255) with the command that builds the right node, before any op.
func TestClockNemesisNeedsAClockfaultNode(t *testing.T) {
	cases := map[string]struct {
		log  func(string, []string) string
		want string
	}{
		"normal build": {func(string, []string) string { return clock.IgnoredNote(clock.EnvFile) }, "says"},
		"says nothing": {func(string, []string) string { return "lease-node n1 started" }, "has no line"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				net := &memNetwork{supports: []nemesis.Fault{nemesis.Clock}, logLine: c.log}
				out := Run(context.Background(), memOptions(t, net, nemesis.Faults{Clock: true}))
				if out.Exit != ExitFailed || out.Err == nil || !strings.Contains(out.Err.Error(), BuildClockfault) ||
					!strings.Contains(out.Err.Error(), c.want) {
					t.Fatalf("exit %d (%v), want 255 saying %q and how to build a clockfault node", out.Exit, out.Err, c.want)
				}
				if n := out.Results.Stats.Count; n != 0 {
					t.Errorf("%d ops ran before the check", n)
				}
			})
		})
	}
}

// TestClockBeyondTheBound: overriding the bounds is the negative control:
// the banner and results.json say so, and the draws go beyond the nodes'
// bounds.
func TestClockBeyondTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &memNetwork{supports: []nemesis.Fault{nemesis.Clock}, logLine: clockfaultLog}
		o := memOptions(t, net, nemesis.Faults{Clock: true})
		ppm, offset := int64(500000), int64(90000)
		o.ClockDriftPPM, o.ClockMaxOffsetMs, o.TimeLimit = &ppm, &offset, 30*time.Second
		var banner bytes.Buffer
		o.Stdout = &banner
		out := Run(context.Background(), o)
		if out.Exit != ExitValid { // echo does not care about clocks
			t.Fatalf("exit %d (%v)", out.Exit, out.Err)
		}
		if !strings.Contains(banner.String(), "negative control") {
			t.Errorf("the banner does not say it is a negative control:\n%s", banner.String())
		}
		if c := out.Results.Nemesis.Clock; c == nil || c.WithinBound || c.DriftPPM != ppm || c.MaxOffsetMs != offset || c.NodeDriftPPM != 1000 {
			t.Errorf("results.json nemesis.clock %+v", c)
		}
		beyond := 0
		for _, st := range clockSteps(t, out.Dir) {
			for _, c := range st[0] {
				if !within(c, nemesis.ClockBounds{DriftPPM: 1000, MaxOffsetMs: 15000}) {
					beyond++
				}
			}
		}
		if beyond == 0 {
			t.Error("no clock beyond the nodes' bounds")
		}
	})
}

// TestClockOptions: the bounds need the clock fault and sensible values,
// and the nodes' LEASE_DRIFT_PPM must be one they accept.
func TestClockOptions(t *testing.T) {
	net := &memNetwork{supports: []nemesis.Fault{nemesis.Clock}}
	neg, big := int64(-1), int64(1_000_000)
	cases := []struct {
		faults    nemesis.Faults
		ppm, offs *int64
		env, want string
	}{
		{nemesis.Faults{}, &big, nil, "", "--clock-drift-ppm bounds the clock nemesis: it needs clock in --nemesis"},
		{nemesis.Faults{Partition: true}, nil, &neg, "", "--clock-max-offset-ms bounds the clock nemesis"},
		{nemesis.Faults{Clock: true}, &big, nil, "", "--clock-drift-ppm must be in 0..999999"},
		{nemesis.Faults{Clock: true}, nil, &neg, "", "--clock-max-offset-ms must be in 0.."},
		{nemesis.Faults{Clock: true}, nil, nil, "a lot", `LEASE_DRIFT_PPM is "a lot"`},
	}
	for _, c := range cases {
		t.Setenv("LEASE_DRIFT_PPM", c.env)
		o := memOptions(t, net, c.faults)
		o.ClockDriftPPM, o.ClockMaxOffsetMs = c.ppm, c.offs
		out := Run(context.Background(), o)
		if out.Exit != ExitBadArgs || out.Err == nil || !strings.Contains(out.Err.Error(), c.want) {
			t.Errorf("%+v: exit %d (%v), want 254 saying %q", c, out.Exit, out.Err, c.want)
		}
	}
}

// TestStrobeFlipsAndSettles: a strobe writes the strobe's rate at once,
// flips every period, and ends at the settled rate after its duration;
// the offset stays.
func TestStrobeFlipsAndSettles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		c := &clockWork{dir: filepath.Join(dir, "clock"), now: nemesis.ResetClocks([]string{"n1"})}
		if err := os.Mkdir(c.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s := nemesis.ClockSettings{"n1": {OffsetMs: 7, Rate: 1.001, Strobe: &nemesis.ClockStrobe{Rate: 0.999, PeriodMs: 50, DurationMs: 230}}}
		done := make(chan error, 1)
		go func() { done <- c.strobe(context.Background(), s, 50*time.Millisecond, 230*time.Millisecond) }()
		var rates []float64
		for range 6 {
			synctest.Wait()
			got := readClock(t, dir, "n1")
			if got.OffsetMs != 7 {
				t.Fatalf("offset %d during the strobe, want 7", got.OffsetMs)
			}
			rates = append(rates, got.Rate)
			time.Sleep(50 * time.Millisecond)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// At 0, 50, 100, 150, 200 ms the strobe flips; at 230 it settles.
		if want := []float64{0.999, 1.001, 0.999, 1.001, 0.999, 1.001}; !reflect.DeepEqual(rates, want) {
			t.Errorf("rates over time %v, want %v", rates, want)
		}
		if got := readClock(t, dir, "n1"); got != (nemesis.ClockShift{OffsetMs: 7, Rate: 1.001}) {
			t.Errorf("after the strobe: %+v", got)
		}
	})
}
