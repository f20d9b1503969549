package workloads

import (
	"testing"

	"chunklease/internal/testseed"
)

// testSeed returns this test's seed (-seed to replay; see testseed).
func testSeed(t *testing.T) int64 {
	t.Helper()
	return int64(testseed.Get(t))
}
