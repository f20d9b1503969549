package main

import (
	"slices"
	"time"
)

// summary is what a table row shows of one kind of op in one run: ok ops
// per second over the measured phase and the latencies of the ok ops.
type summary struct {
	OK       int     `json:"ok"`
	Failed   int     `json:"failed"`
	OpsPerS  float64 `json:"ops_per_s"`
	P50Ms    float64 `json:"p50_ms"`
	P90Ms    float64 `json:"p90_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
	FirstErr string  `json:"first_error,omitempty"`
}

// summarize computes a summary from the ok latencies of one kind, the
// failures and the measured phase's length.
func summarize(lat []time.Duration, failed int, elapsed time.Duration) summary {
	s := summary{OK: len(lat), Failed: failed}
	if len(lat) == 0 {
		return s
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	if elapsed > 0 {
		s.OpsPerS = float64(len(sorted)) / elapsed.Seconds()
	}
	s.P50Ms = ms(percentile(sorted, 50))
	s.P90Ms = ms(percentile(sorted, 90))
	s.P99Ms = ms(percentile(sorted, 99))
	s.MaxMs = ms(sorted[len(sorted)-1])
	return s
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of sorted:
// value ceil(p/100 * n) (1-based), the method of the harness's tables
// (workloads/stats.go).
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median is the middle value of xs (the mean of the two middle ones for
// an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
