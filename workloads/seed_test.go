package workloads

import (
	"flag"
	"testing"
	"time"
)

var seedFlag = flag.Int64("seed", 0, "seed for the randomized tests (0: draw one and print it)")

// testSeed returns the -seed flag, or a fresh seed, and logs it so that a
// failure can be replayed with -seed.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (replay with: go test ./workloads -run '%s' -seed=%d)", seed, t.Name(), seed)
	return seed
}
