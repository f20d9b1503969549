package main

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var ten []time.Duration
	for i := 1; i <= 10; i++ {
		ten = append(ten, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    int
		want time.Duration
	}{{50, 5 * time.Millisecond}, {90, 9 * time.Millisecond}, {99, 10 * time.Millisecond}, {100, 10 * time.Millisecond}, {1, time.Millisecond}} {
		if got := percentile(ten, c.p); got != c.want {
			t.Errorf("p%d of 1..10 ms = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile([]time.Duration{7}, 50); got != 7 {
		t.Errorf("p50 of one value = %v", got)
	}
}

func TestSummarize(t *testing.T) {
	lat := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	s := summarize(lat, 1, 2*time.Second)
	if s.OK != 4 || s.Failed != 1 || s.OpsPerS != 2 || s.P50Ms != 2 || s.MaxMs != 4 {
		t.Errorf("summary %+v: want 4 ok, 1 failed, 2 ops/s (ok only), p50 2 ms, max 4 ms", s)
	}
	if lat[0] != 4*time.Millisecond {
		t.Error("summarize sorted its argument in place")
	}
	if s := summarize(nil, 3, time.Second); s.OK != 0 || s.Failed != 3 || s.OpsPerS != 0 {
		t.Errorf("no ok ops: %+v", s)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
