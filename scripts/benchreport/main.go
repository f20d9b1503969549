// Command benchreport turns harness runs into docs/performance.md's
// tables, computing every figure from the runs' history.jsonl
// (workloads.LeaseBenchSummary) and results.json.
//
//	benchreport table RUN_DIR...
//
// prints one Markdown table for lease-bench runs (-w lease-bench): per run
// and kind of op, ok/measured ops, ok ops per second over the measured
// phases, and p50/p90/p99/max latency of the ok ops. It exits 1 when a run
// is not valid or did not complete its measured ops (raise its time limit).
//
//	benchreport floor LIGHT_RUN_DIR CONTENTION_RUN_DIR
//
// prints the floor check: from a lease run at light load, the p50 of won
// grants (floor 4 one-way latencies), renews and checks (2 each) against
// the floor; from a contention run, the renew success rate and the won
// grants' p99 against their p50. Each row says PASS or FAIL against its
// goal. It exits 0 whether goals are met or not (a missed goal is a
// figure, not a broken run), and 1 when a run is not valid or lacks ops.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"chunklease/history"
	"chunklease/workloads/lease"
	"chunklease/workloads/leasebench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

const usage = "usage: benchreport table RUN_DIR... | benchreport floor LIGHT_RUN_DIR CONTENTION_RUN_DIR"

func run(args []string, out io.Writer) error {
	switch {
	case len(args) >= 2 && args[0] == "table":
		return table(args[1:], out)
	case len(args) == 3 && args[0] == "floor":
		return floor(args[1], args[2], out)
	}
	return errors.New(usage)
}

// runData is what a report needs of one run.
type runData struct {
	dir     string
	history []history.Op
	results struct {
		Valid         bool   `json:"valid"`
		Workload      string `json:"workload"`
		WorkloadStats struct {
			Op      string `json:"op"`
			Ops     int    `json:"ops"`
			Workers int    `json:"workers"`
		} `json:"workload_stats"`
		Config struct {
			LatencyMs int `json:"latency_ms"`
			NodeCount int `json:"node_count"`
		} `json:"config"`
	}
}

// load reads a run's results.json and history.jsonl; a run that is not
// valid is an error: figures from a broken run are not figures.
func load(dir string) (*runData, error) {
	r := &runData{dir: dir}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &r.results); err != nil {
		return nil, fmt.Errorf("%s: results.json: %w", dir, err)
	}
	if !r.results.Valid {
		return nil, fmt.Errorf("%s: the run is not valid (see its results.json)", dir)
	}
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if r.history, err = history.ReadHistory(f); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return r, nil
}

// table prints the lease-bench runs as one Markdown table.
func table(dirs []string, out io.Writer) error {
	fmt.Fprintln(out, "| benchmark | clients | op | ok / measured | ops/s | p50 ms | p90 ms | p99 ms | max ms |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|")
	for _, dir := range dirs {
		r, err := load(dir)
		if err != nil {
			return err
		}
		ws := r.results.WorkloadStats
		if r.results.Workload != "lease-bench" {
			return fmt.Errorf("%s: a %s run, not lease-bench", dir, r.results.Workload)
		}
		sum := leasebench.LeaseBenchSummary(r.history, ws.Op)
		measured := 0
		for _, row := range sum.Rows {
			if row.Op != "all" {
				measured += row.Invoked
			}
			fmt.Fprintf(out, "| %s | %d | %s | %d / %d | %.0f | %.2f | %.2f | %.2f | %.2f |\n",
				ws.Op, ws.Workers, row.Op, row.OK, row.Invoked, row.OpsPerSec, row.P50Ms, row.P90Ms, row.P99Ms, row.MaxMs)
		}
		if measured != ws.Ops {
			return fmt.Errorf("%s: %d of %d measured ops were invoked before the time limit; give the run more time", dir, measured, ws.Ops)
		}
	}
	return nil
}

// Goals of the floor check (scripts/floor.sh; docs/performance.md).
const (
	floorGoal    = 1.10 // p50 at most this many times the floor
	renewGoal    = 0.95 // renew success at least
	tailGoal     = 4.0  // won grant p99 at most this many times its p50
	minFloorOps  = 20   // fewer ok ops of a kind make no median
	minRenewsRun = 20
)

// floor prints the floor table for a light-load run and a contention run.
func floor(lightDir, contentionDir string, out io.Writer) error {
	light, err := load(lightDir)
	if err != nil {
		return err
	}
	cont, err := load(contentionDir)
	if err != nil {
		return err
	}
	l := float64(light.results.Config.LatencyMs)
	rows := byKind(leasebench.LeaseBenchSummary(light.history, leasebench.BenchMixed))
	crow := byKind(leasebench.LeaseBenchSummary(cont.history, leasebench.BenchMixed))
	fmt.Fprintf(out, "| case | measured | floor | ratio | goal | verdict |\n|---|---|---|---|---|---|\n")
	for _, c := range []struct {
		name, kind string
		hops       float64
	}{
		{"won grant p50", lease.FGrant, 4},
		{"renew p50", lease.FRenew, 2},
		{"check p50", lease.FCheck, 2},
	} {
		row := rows[c.kind]
		if row.OK < minFloorOps {
			return fmt.Errorf("%s: only %d ok %s ops; run longer", lightDir, row.OK, c.kind)
		}
		fl := c.hops * l
		ratio := row.P50Ms / fl
		fmt.Fprintf(out, "| %s, %d nodes, %g ms latency, light load | %.1f ms | %.0f ms | %.3f | <= %.2f | %s |\n",
			c.name, light.results.Config.NodeCount, l, row.P50Ms, fl, ratio, floorGoal, verdict(ratio <= floorGoal))
	}
	renew, grant := crow[lease.FRenew], crow[lease.FGrant]
	if renew.Invoked < minRenewsRun || grant.OK < minFloorOps {
		return fmt.Errorf("%s: only %d renews and %d ok won grants; run longer", contentionDir, renew.Invoked, grant.OK)
	}
	success := float64(renew.OK) / float64(renew.Invoked)
	fmt.Fprintf(out, "| renew success, %d nodes, contention | %.1f %% (%d/%d) | - | - | >= %.0f %% | %s |\n",
		cont.results.Config.NodeCount, 100*success, renew.OK, renew.Invoked, 100*renewGoal, verdict(success >= renewGoal))
	tail := grant.P99Ms / grant.P50Ms
	fmt.Fprintf(out, "| won grant p99 in that run | %.1f ms (p50 %.1f ms) | - | %.2f x p50 | <= %.0f x p50 | %s |\n",
		grant.P99Ms, grant.P50Ms, tail, tailGoal, verdict(tail <= tailGoal))
	return nil
}

func byKind(sum leasebench.BenchResult) map[string]leasebench.BenchRow {
	m := map[string]leasebench.BenchRow{}
	for _, r := range sum.Rows {
		m[r.Op] = r
	}
	return m
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
