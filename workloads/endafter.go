package workloads

import (
	"math"
	"time"
)

// endAfterMs is t plus ms milliseconds, saturating at math.MaxInt64: a
// reply with an absurd remaining time must make the belief built from it
// longer, never wrap around into an empty one that hides an overlap.
func EndAfterMs(t, ms int64) int64 {
	if ms > (math.MaxInt64-t)/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return t + ms*int64(time.Millisecond)
}
