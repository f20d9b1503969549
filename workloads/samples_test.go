package workloads

import (
	"math"
	"math/rand/v2"
	"testing"

	"chunklease/internal/testseed"
)

// TestSampleSetPercentiles: exact nearest-rank percentiles up to the
// limit, merged in any split; past it, within the histogram's 2^-11
// relative half-width, with count and max exact.
func TestSampleSetPercentiles(t *testing.T) {
	seed := int64(testseed.Get(t))
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	for _, limit := range []int{1 << 20, 100} {
		var samples []float64
		a, b := &SampleSet{limit: limit}, &SampleSet{limit: limit}
		for i := range 1000 {
			v := math.Exp(rng.NormFloat64()) * 10
			if i%97 == 0 {
				v = 0
			}
			samples = append(samples, v)
			if rng.IntN(2) == 0 {
				a.Add(v)
			} else {
				b.Add(v)
			}
		}
		a.Merge(b)
		got, want := a.Percentiles(), PercentilesOf(samples)
		if limit > len(samples) {
			if got != want {
				t.Errorf("exact: %+v, want %+v", got, want)
			}
			continue
		}
		if a.hist == nil || got.Count != want.Count || got.Max != want.Max {
			t.Fatalf("past the limit: %+v (histogram %v), want %+v", got, a.hist != nil, want)
		}
		for _, pair := range [][2]float64{{got.P50, want.P50}, {got.P95, want.P95}, {got.P99, want.P99}} {
			if math.Abs(pair[0]-pair[1]) > pair[1]/2048+1e-12 {
				t.Errorf("percentile %v, want %v within 2^-11", pair[0], pair[1])
			}
		}
	}
}
