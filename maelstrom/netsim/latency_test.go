package netsim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// draws samples n delays from the model with a seeded generator.
func draws(lat Latency, seed uint64, n int) []int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]int64, n)
	for i := range out {
		d := lat.sample(rng)
		out[i] = int64(d / time.Millisecond)
		if d%time.Millisecond != 0 {
			panic("delay is not a whole number of milliseconds")
		}
	}
	return out
}

func mean(xs []int64) float64 {
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	return sum / float64(len(xs))
}

func TestConstantLatencyIsTheMean(t *testing.T) {
	for _, x := range draws(Latency{MeanMs: 37, Dist: Constant}, testSeed(t), 1000) {
		if x != 37 {
			t.Fatalf("constant 37 ms gave %d ms", x)
		}
	}
}

func TestUniformLatency(t *testing.T) {
	const meanMs, n = 100, 40000
	xs := draws(Latency{MeanMs: meanMs, Dist: Uniform}, testSeed(t), n)
	seen := make([]int, 2*meanMs)
	for _, x := range xs {
		if x < 0 || x >= 2*meanMs {
			t.Fatalf("uniform 100 ms gave %d ms, outside [0, 200)", x)
		}
		seen[x]++
	}
	// Every integer in [0, 200) is drawn about n/200 = 200 times; 100 is
	// more than 7 standard deviations below that.
	for v, c := range seen {
		if c < 100 {
			t.Errorf("value %d ms drawn %d times of %d, want about %d", v, c, n, n/(2*meanMs))
		}
	}
	// The mean of U{0..199} is 99.5; the standard error is 57.7/sqrt(n) = 0.29.
	if m := mean(xs); math.Abs(m-99.5) > 2 {
		t.Errorf("uniform mean %.2f ms, want 99.5 +- 2", m)
	}
}

func TestExponentialLatency(t *testing.T) {
	const meanMs, n = 100, 40000
	xs := draws(Latency{MeanMs: meanMs, Dist: Exponential}, testSeed(t), n)
	counts := map[int64]int{}
	var maxX int64
	for _, x := range xs {
		if x < 0 {
			t.Fatalf("negative delay %d", x)
		}
		counts[x]++
		maxX = max(maxX, x)
	}
	// Truncating Exp(1/100) to whole ms gives a geometric law with mean
	// 1/(e^(1/100)-1) = 99.5; the standard error is about 0.5.
	want := 1 / (math.Exp(1.0/meanMs) - 1)
	if m := mean(xs); math.Abs(m-want) > 3 {
		t.Errorf("exponential mean %.2f ms, want %.2f +- 3", m, want)
	}
	// Kolmogorov-Smirnov against P(X <= k) = 1 - exp(-(k+1)/mean). The
	// bound is the 1e-6 critical value, so a correct sampler fails about
	// once in a million seeds.
	var cum int
	var d float64
	for k := int64(0); k <= maxX; k++ {
		cum += counts[k]
		cdf := 1 - math.Exp(-float64(k+1)/meanMs)
		d = max(d, math.Abs(float64(cum)/n-cdf))
	}
	if bound := math.Sqrt(-math.Log(0.5e-6) / (2 * n)); d > bound {
		t.Errorf("KS distance %.4f > %.4f: not exponential with mean %d ms", d, bound, meanMs)
	}
}

func TestLatencyValidate(t *testing.T) {
	bad := []Latency{
		{MeanMs: 0, Dist: Exponential},
		{MeanMs: 0, Dist: Uniform},
		{MeanMs: -1, Dist: Constant},
		{MeanMs: 10, Dist: "normal"},
	}
	for _, l := range bad {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v accepted", l)
		}
	}
	good := []Latency{{0, Constant}, {10, Uniform}, {10, Exponential}}
	for _, l := range good {
		if err := l.Validate(); err != nil {
			t.Errorf("%+v rejected: %v", l, err)
		}
	}
}

func TestIsClient(t *testing.T) {
	for name, want := range map[string]bool{"c0": true, "c12": true, "n1": false, "lin-kv": false, "": false} {
		if got := IsClient(name); got != want {
			t.Errorf("IsClient(%q) = %v", name, got)
		}
	}
}
