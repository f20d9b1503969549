// Package testseed is the one seed flag of every randomized test in this
// module: a test asks for its seed, the seed is logged with the command
// that replays the test, and -seed gives it back.
package testseed

import (
	"flag"
	"math/rand/v2"
	"testing"
)

var seed = flag.Uint64("seed", 0, "seed of the randomized tests (0: draw one and log it)")

// Get returns -seed, or a fresh seed, and logs how to replay the test with
// it. Seeds stay below 2^63 so they also fit an int64.
func Get(t testing.TB) uint64 {
	t.Helper()
	return logged(t, *seed, rand.Uint64()>>1)
}

// GetOr returns -seed, or def: for a test whose assertions need what a
// known seed draws (a schedule that applies every fault in a few
// seconds), which -seed can still vary.
func GetOr(t testing.TB, def uint64) uint64 {
	t.Helper()
	return logged(t, *seed, def)
}

func logged(t testing.TB, flagSeed, otherwise uint64) uint64 {
	t.Helper()
	s := flagSeed
	if s == 0 {
		s = otherwise
	}
	t.Logf("seed %d (replay: go test -run '^%s$' -seed %d)", s, t.Name(), s)
	return s
}
