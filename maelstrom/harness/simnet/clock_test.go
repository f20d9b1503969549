package simnet

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/clock"
	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/nemesis"
)

// TestSimClockFileAtEveryStart: under the kill and clock nemeses, every
// launch of a node, restarts included, gets its clock file in the run
// directory after the rest of its environment; the clock ops are in the
// history, and the final phase resets every clock before it starts the
// killed nodes again, so they begin with true clocks.
func TestSimClockFileAtEveryStart(t *testing.T) {
	seed := firstSeedHitting(t, testSeed(t), []string{"n1"}, nemesis.Faults{Kill: true}, 4*time.Second, nemesis.KillOp)
	t.Logf("running with seed %d", seed)
	synctest.Test(t, func(t *testing.T) {
		o, log := leaseSimOptions(t, nemesis.Faults{Kill: true, Clock: true}, 4*time.Second, seed)
		out := runSim(context.Background(), o)
		checkLeaseValid(t, out)
		abs, _ := filepath.Abs(out.Dir)
		file := clock.EnvFile + "=" + filepath.Join(abs, "clock", "n1.json")
		envs := log.envs("n1")
		if len(envs) < 2 {
			t.Fatalf("%d launches of n1, want restarts", len(envs))
		}
		for i, env := range envs {
			if len(env) == 0 || env[len(env)-1] != file || (i > 0 && !slices.Contains(env, "LEASE_BOOT_WAIT_MS=2000")) {
				t.Errorf("launch %d of n1 with %v, want the boot wait on restarts and %s last", i, env, file)
			}
		}
		steps := nemesisSteps(t, readHistory(t, out.Dir))
		clockOps := 0
		for _, st := range steps {
			if st[0].F == nemesis.ClockSkew || st[0].F == nemesis.ClockReset {
				clockOps++
				var s nemesis.ClockSettings
				if err := json.Unmarshal(st[1].Value, &s); err != nil {
					t.Fatalf("%s completion %s: %v", st[0].F, st[1].Value, err)
				}
			}
		}
		var last []string
		for _, st := range steps[len(steps)-2:] {
			last = append(last, st[0].F, string(st[1].Value))
		}
		if clockOps < 3 || last[0] != nemesis.ClockReset || last[1] != `{"n1":{"offset_ms":0,"rate":1}}` || last[2] != nemesis.StartOp {
			t.Errorf("%d clock ops; final ops %s: want clock-reset of every clock, then start", clockOps, strings.Join(last, " "))
		}
		if c := out.Results.Nemesis.Clock; c == nil || !c.WithinBound || c.MaxOffsetMs != 500 || c.DriftPPM != harness.NodeDriftPPMDefault {
			t.Errorf("results.json nemesis.clock %+v, want 1000 ppm and 500 ms (2 s leases)", c)
		}
	})
}
