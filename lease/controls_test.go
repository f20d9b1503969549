package lease_test

import (
	"fmt"
	"testing"
)

// control is a negative control: a configuration the checker must catch
// within the simulation's default seed budget.
type control struct {
	name string
	draw func(seed uint64) scenario
}

// controls run with the normal test suite. Each must produce at least one
// failing schedule, or the simulation (or the checker) has lost its teeth.
var controls = []control{
	{"acceptors=self", func(seed uint64) scenario {
		s := drawScenario(seed, "none")
		s.self = true // each node its own sole acceptor: unsafe with 3 nodes
		s.nodes = 3
		if s.partition == 0 {
			s.partition = 500e6
		}
		return s
	}},
	{"per-message-quorum", func(seed uint64) scenario { return drawScenario(seed, "per-message-quorum") }},
	{"release-by-server", func(seed uint64) scenario { return drawScenario(seed, "release-by-server") }},
}

// TestNegativeControls runs each control until its first failing schedule
// and fails if the whole default budget passes.
func TestNegativeControls(t *testing.T) {
	if raceEnabled {
		t.Skip("negative controls need the full seed budget; run without -race (scripts/run_tests.sh does)")
	}
	base := baseSeed(t)
	for _, c := range controls {
		t.Run(c.name, func(t *testing.T) {
			res := runMany(base, *simSchedules, c.draw, 1)
			for i, o := range res {
				if len(o.violations) > 0 {
					fmt.Printf("lease-sim control %s: caught at schedule %d (seed=%d): %s\n",
						c.name, i+1, o.sc.seed, o.violations[0].Text)
					return
				}
			}
			t.Fatalf("control %s passed %d schedules from seed %d: the simulation no longer catches it",
				c.name, len(res), base)
		})
	}
}
