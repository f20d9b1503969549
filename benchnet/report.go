package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The report: one Markdown table per system in the format of
// scripts/bench.sh, a comparison table with the ratios ours / etcd per
// row, and one PASS or MISS line per goal of the issue.

// row is one (system, benchmark, clients, kind) over the rounds: the
// median of each figure over the rounds' runs.
type row struct {
	summary
	done, rounds int
	incomplete   int // runs that did not answer every op ok, or ran short
	// the spread over the rounds: the least and the most ops/s and p50
	opsMin, opsMax, p50Min, p50Max float64
}

// rowKey names a row.
type rowKey struct {
	system, op string
	clients    int
	kind       string
}

// aggregate takes the median of every figure over the rounds.
func aggregate(results []result) map[rowKey]row {
	groups := map[rowKey][]result{}
	for _, r := range results {
		for kind := range r.Kinds {
			k := rowKey{r.System, r.Op, r.Clients, kind}
			groups[k] = append(groups[k], r)
		}
	}
	rows := map[rowKey]row{}
	for k, rs := range groups {
		var ops, p50, p90, p99, mx, ok, done []float64
		rw := row{rounds: len(rs)}
		for _, r := range rs {
			s := r.Kinds[k.kind]
			ops, p50, p90, p99, mx = append(ops, s.OpsPerS), append(p50, s.P50Ms), append(p90, s.P90Ms), append(p99, s.P99Ms), append(mx, s.MaxMs)
			ok = append(ok, float64(s.OK))
			done = append(done, float64(s.OK+s.Failed))
			rw.Failed += s.Failed
			if !r.complete() {
				rw.incomplete++
			}
			if rw.FirstErr == "" {
				rw.FirstErr = s.FirstErr
			}
			if rw.FirstErr == "" && r.Exhausted > 0 {
				rw.FirstErr = fmt.Sprintf("%d of %d clients used up their pools of leases to release before the run's end (table.go pool)", r.Exhausted, r.Clients)
			}
		}
		rw.OpsPerS, rw.P50Ms, rw.P90Ms, rw.P99Ms, rw.MaxMs = median(ops), median(p50), median(p90), median(p99), median(mx)
		rw.OK, rw.done = int(median(ok)), int(median(done))
		rw.opsMin, rw.opsMax = slices.Min(ops), slices.Max(ops)
		rw.p50Min, rw.p50Max = slices.Min(p50), slices.Max(p50)
		rows[k] = rw
	}
	return rows
}

// systemTable prints one system's rows as scripts/bench.sh does: the
// mixed benchmark also by kind of op.
func systemTable(w io.Writer, rows map[rowKey]row, system string, clients []int) {
	fmt.Fprintf(w, "| benchmark | clients | op | ok / done | ops/s | ops/s spread | p50 ms | p50 spread | p90 ms | p99 ms | max ms |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, op := range benchmarks {
		for _, n := range clients {
			ks := []string{"all"}
			if op == "mixed" {
				ks = append(slices.Clone(kinds), "all")
			}
			for _, kind := range ks {
				r, ok := rows[rowKey{system, op, n, kind}]
				if !ok {
					continue
				}
				label := op
				if kind != "all" {
					label = kind
				} else if op == "mixed" {
					label = "all"
				}
				fmt.Fprintf(w, "| %s | %d | %s | %d / %d | %.0f | %.0f-%.0f | %.2f | %.2f-%.2f | %.2f | %.2f | %.2f |%s\n",
					op, n, label, r.OK, r.done, r.OpsPerS, r.opsMin, r.opsMax, r.P50Ms, r.p50Min, r.p50Max, r.P90Ms, r.P99Ms, r.MaxMs, note(r))
			}
		}
	}
}

// note flags a row whose runs did not all answer every op ok.
func note(r row) string {
	if r.incomplete == 0 {
		return ""
	}
	return fmt.Sprintf(" INCOMPLETE in %d of %d runs: %s", r.incomplete, r.rounds, r.FirstErr)
}

// compareTable prints ours against each other system, row by row.
func compareTable(w io.Writer, rows map[rowKey]row, others []string, clients []int) {
	head, rule := "| benchmark | clients | ours ops/s (spread) |", "|---|---|---|"
	for _, o := range others {
		head += fmt.Sprintf(" %s ops/s (spread) | ratio |", o)
		rule += "---|---|"
	}
	head += " ours p50 ms |"
	rule += "---|"
	for _, o := range others {
		head += fmt.Sprintf(" %s p50 ms | ratio |", o)
		rule += "---|---|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, op := range benchmarks {
		for _, n := range clients {
			us, ok := rows[rowKey{"ours", op, n, "all"}]
			if !ok {
				continue
			}
			line := fmt.Sprintf("| %s | %d | %.0f (%.0f-%.0f) |", op, n, us.OpsPerS, us.opsMin, us.opsMax)
			for _, o := range others {
				them := rows[rowKey{o, op, n, "all"}]
				line += fmt.Sprintf(" %.0f (%.0f-%.0f) | %s |", them.OpsPerS, them.opsMin, them.opsMax, ratio(us.OpsPerS, them.OpsPerS))
			}
			line += fmt.Sprintf(" %.2f |", us.P50Ms)
			for _, o := range others {
				them := rows[rowKey{o, op, n, "all"}]
				line += fmt.Sprintf(" %.2f | %s |", them.P50Ms, ratio(us.P50Ms, them.P50Ms))
			}
			fmt.Fprintln(w, line)
		}
	}
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// goal is one PASS or MISS line.
type goal struct {
	pass bool
	text string
}

func (g goal) String() string {
	if g.pass {
		return "PASS  " + g.text
	}
	return "MISS  " + g.text
}

// goals judges the goals against etcd (the system named base):
// every benchmark's ops/s at least twice etcd's at 16 and at 64 clients,
// and its p50 at 1 client no higher than etcd's. A row that is missing
// or whose runs did not all answer every op ok misses its goal.
func goals(rows map[rowKey]row, base string) []goal {
	var out []goal
	for _, op := range benchmarks {
		var parts []string
		pass, any := true, false
		for _, n := range []int{16, 64} {
			us, ok1 := rows[rowKey{"ours", op, n, "all"}]
			them, ok2 := rows[rowKey{base, op, n, "all"}]
			if !ok1 && !ok2 {
				continue
			}
			any = true
			switch {
			case !ok1 || !ok2 || us.incomplete > 0 || them.incomplete > 0:
				pass = false
				parts = append(parts, fmt.Sprintf("%d clients: a run is missing or incomplete", n))
			default:
				pass = pass && us.OpsPerS >= 2*them.OpsPerS
				parts = append(parts, fmt.Sprintf("%d clients %.0f vs %.0f ops/s (%.3fx)", n, us.OpsPerS, them.OpsPerS, us.OpsPerS/them.OpsPerS))
			}
		}
		if any {
			out = append(out, goal{pass, fmt.Sprintf("%s ops/s >= 2x %s's at 16 and 64 clients: %s", op, base, strings.Join(parts, "; "))})
		}
		if g, ok := p50Goal(rows, base, op); ok {
			out = append(out, g)
		}
	}
	return out
}

// p50Goal: ours p50 at 1 client no higher than base's.
func p50Goal(rows map[rowKey]row, base, op string) (goal, bool) {
	us, ok1 := rows[rowKey{"ours", op, 1, "all"}]
	them, ok2 := rows[rowKey{base, op, 1, "all"}]
	switch {
	case !ok1 && !ok2:
		return goal{}, false
	case !ok1 || !ok2 || us.incomplete > 0 || them.incomplete > 0:
		return goal{false, fmt.Sprintf("%s p50 at 1 client <= %s's: a run is missing or incomplete", op, base)}, true
	}
	return goal{us.P50Ms <= them.P50Ms, fmt.Sprintf("%s p50 at 1 client <= %s's: %.2f vs %.2f ms (%.3fx)", op, base, us.P50Ms, them.P50Ms, us.P50Ms/them.P50Ms)}, true
}
