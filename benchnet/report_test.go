package main

import (
	"bytes"
	"strings"
	"testing"
)

// fakeResult is a complete run of system with the given ops/s and p50.
func fakeResult(system, op string, clients int, opsPerS, p50Ms float64) result {
	return result{System: system, Op: op, Clients: clients, DurationS: 3, Done: 2000,
		Kinds: map[string]summary{"all": {OK: 2000, OpsPerS: opsPerS, P50Ms: p50Ms}}}
}

// goalLines judges one benchmark's three rows for each system.
func goalLines(t *testing.T, ours, etcd [3]float64, oursP50, etcdP50 float64) []goal {
	t.Helper()
	var rs []result
	for i, n := range []int{1, 16, 64} {
		rs = append(rs, fakeResult("ours", "renew", n, ours[i], oursP50), fakeResult("etcd", "renew", n, etcd[i], etcdP50))
	}
	return goals(aggregate(rs), "etcd")
}

func TestGoalsPass(t *testing.T) {
	gs := goalLines(t, [3]float64{3000, 10000, 12000}, [3]float64{2000, 5000, 6000}, 0.3, 0.4)
	if len(gs) != 2 || !gs[0].pass || !gs[1].pass {
		t.Fatalf("goals %v: want two PASS lines (2.0x at 16 and 64, p50 0.3 <= 0.4)", gs)
	}
	if !strings.HasPrefix(gs[0].String(), "PASS  renew ops/s >= 2x etcd's") || !strings.Contains(gs[0].String(), "64 clients 12000 vs 6000 ops/s (2.000x)") {
		t.Errorf("line %q", gs[0])
	}
}

// The goals must bite: each way of missing one is a MISS.
func TestGoalsMiss(t *testing.T) {
	cases := []struct {
		name             string
		ours, etcd       [3]float64
		oursP50, etcdP50 float64
		missThroughput   bool
		missP50          bool
	}{
		{"1.9x at 64 clients", [3]float64{3000, 10000, 11400}, [3]float64{2000, 5000, 6000}, 0.3, 0.4, true, false},
		{"1.9x at 16 clients", [3]float64{3000, 9500, 12000}, [3]float64{2000, 5000, 6000}, 0.3, 0.4, true, false},
		{"1.998x, which rounds to 2.00", [3]float64{3000, 9990, 12000}, [3]float64{2000, 5000, 6000}, 0.3, 0.4, true, false},
		{"p50 higher at 1 client", [3]float64{3000, 10000, 12000}, [3]float64{2000, 5000, 6000}, 0.41, 0.4, false, true},
	}
	for _, c := range cases {
		gs := goalLines(t, c.ours, c.etcd, c.oursP50, c.etcdP50)
		if len(gs) != 2 || gs[0].pass == c.missThroughput || gs[1].pass == c.missP50 {
			t.Errorf("%s: goals %v", c.name, gs)
		}
	}
}

func TestGoalsMissIncompleteOrMissingRuns(t *testing.T) {
	rs := []result{fakeResult("ours", "grant", 16, 10000, 1), fakeResult("etcd", "grant", 16, 1000, 1),
		fakeResult("ours", "grant", 64, 10000, 1), fakeResult("etcd", "grant", 64, 1000, 1),
		fakeResult("ours", "grant", 1, 1000, 0.1)} // etcd's 1-client run is missing
	short := rs[2]
	short.Exhausted = 1 // a release client ran out of its pool
	rs[2] = short
	gs := goals(aggregate(rs), "etcd")
	if len(gs) != 2 || gs[0].pass || gs[1].pass {
		t.Fatalf("goals %v: want MISS for an incomplete run and for a missing one", gs)
	}
	if !strings.Contains(gs[0].text, "64 clients: a run is missing or incomplete") {
		t.Errorf("line %q", gs[0])
	}
	// The table's note says why: the pool, not an error.
	if n := note(aggregate(rs)[rowKey{"ours", "grant", 64, "all"}]); !strings.Contains(n, "used up their pools") {
		t.Errorf("note %q: want the pool named", n)
	}
}

// TestSpreadIsTheRoundsRange: the table shows each figure's median over
// the rounds and the least and the most of them.
func TestSpreadIsTheRoundsRange(t *testing.T) {
	var rs []result
	for i, ops := range []float64{9000, 7000, 8000} {
		r := fakeResult("ours", "renew", 16, ops, 1+float64(i)/10)
		r.Round = i
		rs = append(rs, r)
	}
	var b bytes.Buffer
	systemTable(&b, aggregate(rs), "ours", []int{16})
	if !strings.Contains(b.String(), "| renew | 16 | renew | 2000 / 2000 | 8000 | 7000-9000 | 1.10 | 1.00-1.20 |") {
		t.Errorf("the row shows no median and spread:\n%s", b.String())
	}
}

func TestTablesPrintEveryRow(t *testing.T) {
	var rs []result
	for _, op := range benchmarks {
		rs = append(rs, fakeResult("ours", op, 16, 8000, 1.5), fakeResult("etcd", op, 16, 4000, 2))
	}
	mixed := fakeResult("ours", "mixed", 1, 2000, 0.4)
	mixed.Kinds["grant"] = summary{OK: 500, OpsPerS: 500, P50Ms: 0.5}
	rs = append(rs, mixed)
	rows := aggregate(rs)
	var b bytes.Buffer
	systemTable(&b, rows, "ours", []int{1, 16})
	if got := strings.Count(b.String(), "\n"); got != 2+len(benchmarks)+2 {
		t.Errorf("ours table has %d lines, want header, rule, %d rows and mixed at 1 client by kind and all:\n%s", got, len(benchmarks), b.String())
	}
	if !strings.Contains(b.String(), "| mixed | 1 | grant | 500 / 500 | 500 | 500-500 | 0.50 | 0.50-0.50 |") {
		t.Errorf("mixed by kind missing:\n%s", b.String())
	}
	b.Reset()
	compareTable(&b, rows, []string{"etcd"}, []int{16})
	if !strings.Contains(b.String(), "| renew | 16 | 8000 (8000-8000) | 4000 (4000-4000) | 2.00 | 1.50 | 2.00 | 0.75 |") {
		t.Errorf("comparison row missing:\n%s", b.String())
	}
}
