package lease

import (
	"flag"
	"fmt"
	"testing"
)

// propertyControls are weakenings that property tests of this package
// catch at once and with certainty, where the simulation's faults show
// them seldom or never: a made-up boundary (the restart floor needs a
// ballot issued before a restart to arrive after it, inside a lease), a
// liveness or throughput promise (pacing at the rated rate), or a rule
// that only matters in a narrow order of events. Each must make its
// property fail. The simulation also runs several of them
// (-control-rates prints their rates there).
var propertyControls = []struct {
	name  string
	check func(seed uint64, w weakening) error
}{
	{"release-exact-token", func(seed uint64, w weakening) error { return releaseModelRounds(seed, w, 2000) }},
	{"release-by-server", func(seed uint64, w weakening) error { return releaseModelRounds(seed, w, 2000) }},
	{"shrink-protection", func(seed uint64, w weakening) error { return releaseModelRounds(seed, w, 2000) }},
	{"no-drift-stretch", func(seed uint64, w weakening) error { return releaseModelRounds(seed, w, 2000) }},
	{"overwrite-live", func(seed uint64, w weakening) error { return releaseModelRounds(seed, w, 2000) }},
	{"a2-unstretched", func(seed uint64, w weakening) error { return releaseModelRounds(seed, w, 2000) }},
	{"boot-wait-no-stretch", func(seed uint64, w weakening) error { return bootEdgeRounds(seed, w, 200) }},
	{"no-drift-margin", func(seed uint64, w weakening) error { return checkTimeRounds(seed, w, 1000) }},
	{"read-max-remaining", func(seed uint64, w weakening) error { return checkTimeRounds(seed, w, 1000) }},
	{"check-no-margin", func(seed uint64, w weakening) error { return checkTimeRounds(seed, w, 1000) }},
	{"unit-ms", func(_ uint64, w weakening) error { return sustainsRatedRate(Config{weaken: w}) }},
	{"no-wall-floor", func(seed uint64, w weakening) error { return restartFloorRounds(seed, w, 300) }},
	{"recovery-floor-not-max", func(seed uint64, w weakening) error { return recoveryRounds(seed, w, 500) }},
	{"req-ids-from-zero", func(seed uint64, w weakening) error { return requestIDRounds(seed, w, 200) }},
	{"sync-one-core", func(seed uint64, w weakening) error { return recoveryCoresRounds(seed, w, 500) }},
}

// TestPropertyControls shows that each property test bites: with its rule
// switched off it fails. -control-rates prints each one's first failure.
func TestPropertyControls(t *testing.T) {
	seed := propSeed(t)
	rates := flag.Lookup("control-rates")
	for _, c := range propertyControls {
		t.Run(c.name, func(t *testing.T) {
			w := weakeningByName(t, c.name)
			err := c.check(seed, w)
			if err == nil {
				t.Fatalf("with %s the property passed (seed %d): it no longer catches it", c.name, seed)
			}
			if rates != nil && rates.Value.String() == "true" {
				fmt.Printf("lease-prop control %s: caught: %v\n", c.name, err)
			}
		})
	}
}

func weakeningByName(t *testing.T, name string) weakening {
	for w, n := range weakeningNames {
		if n == name {
			return w
		}
	}
	t.Fatalf("unknown weakening %q", name)
	return strong
}
