package main

import (
	"strings"
	"testing"
)

// latencyRows is one renew run of ours and of etcd at 1, 16 and 64
// clients with the given p50s.
func latencyRows(ours, etcd [3]float64) map[rowKey]row {
	var rs []result
	for i, n := range []int{1, 16, 64} {
		rs = append(rs, fakeResult("ours", "renew", n, 1000, ours[i]), fakeResult("etcd", "renew", n, 1000, etcd[i]))
	}
	return aggregate(rs)
}

func TestLatencyGoal(t *testing.T) {
	clients := []int{1, 16, 64}
	cases := []struct {
		name string
		ours [3]float64
		pass bool
	}{
		{"flat", [3]float64{20, 20.5, 21}, true},
		{"1.2x exactly", [3]float64{20, 24, 24}, true},
		{"1.25x at 64 clients", [3]float64{20, 21, 25}, false},
		{"1.25x at 16 clients", [3]float64{20, 25, 21}, false},
	}
	for _, c := range cases {
		gs := latencyGoals(latencyRows(c.ours, [3]float64{20, 30, 40}), []string{"renew"}, clients, 5)
		if len(gs) != 1 || gs[0].pass != c.pass {
			t.Errorf("%s: %v, want pass %v", c.name, gs, c.pass)
		}
		if !strings.Contains(gs[0].text, "etcd, for reference: 20.00 ms at 1, 1.500x at 16, 2.000x at 64") {
			t.Errorf("%s: %q shows no etcd reference", c.name, gs[0].text)
		}
	}
	// A missing or incomplete run misses.
	rows := latencyRows([3]float64{20, 20, 20}, [3]float64{20, 20, 20})
	delete(rows, rowKey{"ours", "renew", 64, "all"})
	if gs := latencyGoals(rows, []string{"renew"}, clients, 5); gs[0].pass {
		t.Errorf("a missing run passed: %v", gs)
	}
	rows = latencyRows([3]float64{20, 20, 20}, [3]float64{20, 20, 20})
	r := rows[rowKey{"ours", "renew", 1, "all"}]
	r.incomplete = 1
	rows[rowKey{"ours", "renew", 1, "all"}] = r
	if gs := latencyGoals(rows, []string{"renew"}, clients, 5); gs[0].pass {
		t.Errorf("an incomplete base run passed: %v", gs)
	}
}

func TestOpenLoopGoal(t *testing.T) {
	med := map[string][2]float64{"ours25": {1, 5}, "etcd25": {2, 5}, "ours50": {1, 6}, "etcd50": {2, 5}, "ours75": {3, 4}, "etcd75": {2, 5}}
	gs := openGoals(med, map[string]bool{}, []int{25, 50, 75}, "3.7.3")
	if len(gs) != 3 || !gs[0].pass || gs[1].pass || gs[2].pass {
		t.Fatalf("goals %v: want PASS (equal p99), MISS (p99 higher), MISS (p50 higher)", gs)
	}
	if gs := openGoals(med, map[string]bool{"etcd25": true}, []int{25}, "3.7.3"); gs[0].pass {
		t.Errorf("a rate with failed or dropped renewals passed: %v", gs)
	}
	if gs := openGoals(med, nil, []int{90}, "3.7.3"); gs[0].pass {
		t.Errorf("a rate never run passed: %v", gs)
	}
}

func TestFailoverGoal(t *testing.T) {
	if g := failoverGoal([]float64{60, 70, 65}, []float64{1400, 1200, 1600}, "3.7.3"); !g.pass {
		t.Errorf("faster failover missed: %v", g)
	}
	if g := failoverGoal([]float64{1500, 1500, 1500}, []float64{1400, 1200, 1600}, "3.7.3"); g.pass {
		t.Errorf("slower failover passed: %v", g)
	}
	if g := failoverGoal([]float64{60, -1, 65}, []float64{1400, 1200, 1600}, "3.7.3"); g.pass {
		t.Errorf("a try that never renewed passed: %v", g)
	}
	if g := failoverGoal(nil, []float64{1400}, "3.7.3"); g.pass {
		t.Errorf("no tries passed: %v", g)
	}
}
