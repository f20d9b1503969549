package lease_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"chunklease/history"
)

var contention = flag.Bool("contention", false, "print latency figures of the contention scenario (a measurement, not a test)")

// contentionScenario is the floor check's contention row in virtual time:
// 5 nodes, 15 workers, 200 ops/s, 500 ms leases, one chunk wanted by 8
// servers, 10 ms constant latency, no faults.
func contentionScenario(seed uint64) scenario {
	return scenario{seed: seed, profile: "contention", nodes: 5, servers: 8, chunks: 1, workers: 15,
		leaseMs: 500, rate: 200, duration: 60 * time.Second,
		latency: latency{kind: "constant", mean: 10 * time.Millisecond}, spikeMax: time.Millisecond,
		weakening: "none"}
}

// TestContentionFigures prints won-grant latency percentiles and the renew
// success of the contention scenario (run with -contention).
func TestContentionFigures(t *testing.T) {
	if !*contention {
		t.Skip("a measurement: run with -contention")
	}
	for _, w := range []string{"none", "no-sticky"} {
		for seed := uint64(1); seed <= 5; seed++ {
			sc := contentionScenario(seed)
			sc.weakening = w
			printContention(t, w, seed, runSchedule(sc))
		}
	}
}

func printContention(t *testing.T, w string, seed uint64, o outcome) {
	{
		if len(o.violations)+len(o.problems) > 0 {
			t.Fatalf("seed %d: %d violations", seed, len(o.violations))
		}
		ops, _ := history.ReadHistory(bytes.NewReader(o.history))
		pairs, _ := history.PairOps(ops)
		lat := map[string][]float64{}
		count := map[string]map[string]int{}
		for _, p := range pairs {
			if p.Completion == nil {
				continue
			}
			f := p.Invoke.F
			var v struct {
				Server, Primary string
			}
			_ = json.Unmarshal(p.Completion.Value, &v)
			if f == "grant" && p.Completion.Type == "ok" {
				f = map[bool]string{true: "grant-won", false: "grant-other"}[v.Primary == v.Server]
			}
			if count[f] == nil {
				count[f] = map[string]int{}
			}
			count[f][p.Completion.Type]++
			if p.Completion.Type == "ok" {
				lat[f] = append(lat[f], float64(p.Completion.Time-p.Invoke.Time)/1e6)
			}
		}
		for _, f := range []string{"grant-won", "grant-other", "renew", "check", "release", "grant"} {
			l := lat[f]
			slices.Sort(l)
			pct := func(q float64) float64 {
				if len(l) == 0 {
					return 0
				}
				return l[min(len(l)-1, int(q*float64(len(l))))]
			}
			fmt.Printf("%s seed %d %-12s %v p50 %.1f p99 %.1f max %.1f\n", w, seed, f, count[f], pct(0.5), pct(0.99), pct(1))
		}
	}
}
