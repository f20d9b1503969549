// Command benchreport prints the throughput and latency of one harness run
// from its history.jsonl: ok operations per second and p50/p99 latency for
// grants that won the lease, grants answered with another primary, renews,
// checks and releases, then the node-to-node messages per op from
// results.json.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"chunklease/workloads"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreport STORE_RUN_DIR (e.g. store/latest)")
		os.Exit(2)
	}
	dir := os.Args[1]
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		fail(err)
	}
	ops, err := workloads.ReadHistory(f)
	if err != nil {
		fail(err)
	}
	lat, spanNs := latencies(ops)
	for _, k := range []string{"grant (won)", "grant (other primary)", "renew", "check", "release"} {
		l := lat[k]
		slices.Sort(l)
		fmt.Printf("  %-22s %8.1f ok/s   p50 %7.2f ms   p99 %7.2f ms\n",
			k, float64(len(l))/(float64(spanNs)/1e9), pct(l, 0.50), pct(l, 0.99))
	}
	fmt.Printf("  node-to-node messages per op: %.1f\n", msgsPerOp(filepath.Join(dir, "results.json")))
}

// latencies pairs invokes with ok completions and groups their latencies
// in ms by kind of operation.
func latencies(ops []workloads.Op) (map[string][]float64, int64) {
	pairs, _ := workloads.PairOps(ops)
	out := map[string][]float64{}
	var last int64
	for _, p := range pairs {
		if p.Completion == nil || p.Completion.Type != workloads.OK {
			continue
		}
		last = max(last, p.Completion.Time)
		out[kind(p)] = append(out[kind(p)], float64(p.Completion.Time-p.Invoke.Time)/1e6)
	}
	return out, last
}

func kind(p workloads.Pair) string {
	if p.Invoke.F != workloads.FGrant {
		return p.Invoke.F
	}
	var v struct{ Server, Primary string }
	json.Unmarshal(p.Completion.Value, &v)
	if v.Primary == v.Server {
		return "grant (won)"
	}
	return "grant (other primary)"
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func msgsPerOp(path string) float64 {
	var r struct {
		Net struct {
			Servers struct {
				MsgsPerOp float64 `json:"msgs_per_op"`
			} `json:"servers"`
		} `json:"net"`
	}
	if data, err := os.ReadFile(path); err == nil {
		json.Unmarshal(data, &r)
	}
	return r.Net.Servers.MsgsPerOp
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchreport:", err)
	os.Exit(1)
}
