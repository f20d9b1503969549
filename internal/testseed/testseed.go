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
	s := *seed
	if s == 0 {
		s = rand.Uint64() >> 1
	}
	t.Logf("seed %d (replay: go test -run '^%s$' -seed %d)", s, t.Name(), s)
	return s
}
