package maelstrom

import (
	"flag"
	"math/rand/v2"
	"testing"
)

var seedFlag = flag.Uint64("seed", 0, "seed for randomized tests (0: pick one and print it)")

// testSeed returns -seed, or a fresh seed, and logs it so a failure can be
// rerun with go test -run <Test> -seed <n>.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	return seed
}
