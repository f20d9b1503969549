package workloads

import (
	"math"
	"slices"
)

// maxExactSamples bounds the samples a SampleSet keeps one by one: 8 MiB
// of float64 per figure. A run at 2000 ops/s stays below it for about ten
// minutes per op type.
const maxExactSamples = 1 << 20

// histogramShift keeps 10 mantissa bits of a float64 as its histogram
// bucket: buckets are 2^-10 wide relative to their value (0.1 %).
const histogramShift = 52 - 10

// SampleSet gathers non-negative samples (milliseconds) for nearest-rank
// percentiles in bounded memory. Up to its limit (maxExactSamples) it keeps
// every sample and its percentiles are exact; past it, it counts samples
// in a log histogram instead, and a percentile is the middle of the
// bucket holding that rank, within 0.05 % of the exact one (count and
// max stay exact).
type SampleSet struct {
	exact []float64
	hist  map[uint64]int64 // bucket -> samples; nil while exact
	n     int
	max   float64
	limit int // 0: maxExactSamples (tests shrink it)
}

func (s *SampleSet) Add(v float64) {
	s.n++
	s.max = max(s.max, v)
	if s.hist == nil {
		s.exact = append(s.exact, v)
		if len(s.exact) > s.cap() {
			s.toHistogram()
		}
		return
	}
	s.hist[bucketOf(v)]++
}

func (s *SampleSet) cap() int {
	if s.limit > 0 {
		return s.limit
	}
	return maxExactSamples
}

// merge adds every sample of o.
func (s *SampleSet) Merge(o *SampleSet) {
	if o.hist == nil {
		for _, v := range o.exact {
			s.Add(v)
		}
		return
	}
	if s.hist == nil {
		s.toHistogram()
	}
	for b, c := range o.hist {
		s.hist[b] += c
	}
	s.n += o.n
	s.max = max(s.max, o.max)
}

func (s *SampleSet) toHistogram() {
	s.hist = map[uint64]int64{}
	for _, v := range s.exact {
		s.hist[bucketOf(v)]++
	}
	s.exact = nil
}

// bucketOf orders like v for v >= 0: the sign, exponent and top mantissa
// bits of a float64 grow with it.
func bucketOf(v float64) uint64 { return math.Float64bits(max(v, 0)) >> histogramShift }

// bucketMiddle is the middle of a bucket's range.
func bucketMiddle(b uint64) float64 {
	lo := math.Float64frombits(b << histogramShift)
	hi := math.Float64frombits((b + 1) << histogramShift)
	return lo + (hi-lo)/2
}

// percentiles are the nearest-rank percentiles (see percentiles).
func (s *SampleSet) Percentiles() Percentiles {
	if s.hist == nil {
		return PercentilesOf(s.exact)
	}
	buckets := make([]uint64, 0, len(s.hist))
	for b := range s.hist {
		buckets = append(buckets, b)
	}
	slices.Sort(buckets)
	rank := func(p float64) float64 {
		want := max(int64(math.Ceil(p*float64(s.n))), 1)
		seen := int64(0)
		for _, b := range buckets {
			if seen += s.hist[b]; seen >= want {
				return min(bucketMiddle(b), s.max)
			}
		}
		return s.max
	}
	return Percentiles{Count: s.n, P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: s.max}
}

// median is the nearest-rank median; 0 without samples.
func (s *SampleSet) Median() float64 { return s.Percentiles().P50 }
