package simnet

import (
	"testing"

	"chunklease/internal/testseed"
)

// testSeed returns this test's seed (-seed to replay; see testseed).
func testSeed(t *testing.T) uint64 {
	t.Helper()
	return testseed.Get(t)
}
