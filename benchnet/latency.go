package main

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// latencyPart: the latency-bound benchmark. Every member of both
// systems and the benchmark's clients run in network namespaces of their
// own (maelstrom/netns, the real-network harness's lab), with a fixed
// delay on every packet between any two of them (-delay-ms one way,
// 5 by default: the lab's userspace delay path), so that a renew costs
// about four delays whatever the CPU does, and 64 clients stay far below
// what the CPU can serve. What is left to see is queueing: a client or
// member that makes calls wait for each other shows it as a p50 that
// grows with the clients. The goal: ours at 16 and 64 clients within
// 1.2x of its 1-client p50 (etcd's shown as a reference). Linux only,
// as root (latency_linux.go).
type latencyPart struct {
	delayMs           int
	duration, warm    time.Duration
	rounds            int
	clients, benchOps string
	leaseMs           int64
}

func (l *latencyPart) flags(fs *flag.FlagSet) {
	fs.IntVar(&l.delayMs, "delay-ms", 5, "the delay of every packet between two processes, one way")
	fs.DurationVar(&l.duration, "duration", 3*time.Second, "each run's measured phase")
	fs.DurationVar(&l.warm, "warm", time.Second, "each run's warm-up before it, not measured")
	fs.IntVar(&l.rounds, "rounds", 3, "runs per row and system")
	fs.StringVar(&l.clients, "clients", "1,16,64", "client counts (the first is the base of the goal)")
	fs.StringVar(&l.benchOps, "benchmarks", "renew", "the benchmarks to run")
	fs.Int64Var(&l.leaseMs, "lease-ms", 60000, "every lease's length (etcd: whole seconds)")
}

// latencyMaxRatio is the goal: p50 at 16 and 64 clients at most this
// times the p50 at 1 client.
const latencyMaxRatio = 1.2

// report prints one row per benchmark, system and clients, with the p50
// against the first client count's, and the goals.
func (l *latencyPart) report(env *benchEnv, results []result, ops []string, clients []int, pathNote string) {
	rows := aggregate(results)
	w := env.out
	fmt.Fprintf(w, "\nlatency-bound: %d ms one way on every packet between two processes (members, clients; the lab's userspace delay path), runs of %v after %v of warm-up, %d rounds (medians, spread: least-most); every member with %s; load average now %.2f\n",
		l.delayMs, l.duration, l.warm, l.rounds, memberProcsText(results), loadAverage())
	if pathNote != "" {
		fmt.Fprintf(w, "the delay path: %s\n", pathNote)
	}
	fmt.Fprintf(w, "\n| benchmark | system | clients | ok / done | ops/s | p50 ms | p50 spread | p99 ms | p50 / %d-client p50 |\n|---|---|---|---|---|---|---|---|---|\n", clients[0])
	for _, op := range ops {
		for _, sys := range []string{"ours", "etcd"} {
			base, ok := rows[rowKey{sys, op, clients[0], "all"}]
			for _, n := range clients {
				r, found := rows[rowKey{sys, op, n, "all"}]
				if !found {
					continue
				}
				rel := "-"
				if ok && base.P50Ms > 0 {
					rel = fmt.Sprintf("%.2f", r.P50Ms/base.P50Ms)
				}
				fmt.Fprintf(w, "| %s | %s | %d | %d / %d | %.0f | %.2f | %.2f-%.2f | %.2f | %s |%s\n", op, sys, n, r.OK, r.done, r.OpsPerS, r.P50Ms, r.p50Min, r.p50Max, r.P99Ms, rel, note(r))
			}
		}
	}
	fmt.Fprintln(w)
	for _, g := range latencyGoals(rows, ops, clients, l.delayMs) {
		env.goal(g)
	}
}

// latencyGoals: for each benchmark, ours p50 at every client count but
// the first within latencyMaxRatio of its p50 at the first; etcd's
// ratios as a reference. A missing or incomplete run misses.
func latencyGoals(rows map[rowKey]row, ops []string, clients []int, delayMs int) []goal {
	var out []goal
	for _, op := range ops {
		base, ok := rows[rowKey{"ours", op, clients[0], "all"}]
		pass := ok && base.incomplete == 0 && base.P50Ms > 0
		text := fmt.Sprintf("%s latency-bound (%d ms a hop): p50 at %v clients within %.1fx of the %d-client p50:", op, delayMs, clients[1:], latencyMaxRatio, clients[0])
		if ok {
			text += fmt.Sprintf(" ours %.2f ms at %d", base.P50Ms, clients[0])
		}
		for _, n := range clients[1:] {
			r, found := rows[rowKey{"ours", op, n, "all"}]
			if !found || r.incomplete > 0 || !pass {
				pass = false
				text += fmt.Sprintf("; %d clients: a run is missing or incomplete", n)
				continue
			}
			pass = pass && r.P50Ms <= latencyMaxRatio*base.P50Ms
			text += fmt.Sprintf(", %.2f ms at %d (%.3fx)", r.P50Ms, n, r.P50Ms/base.P50Ms)
		}
		if eb, ok := rows[rowKey{"etcd", op, clients[0], "all"}]; ok && eb.P50Ms > 0 {
			var parts []string
			for _, n := range clients[1:] {
				if r, ok := rows[rowKey{"etcd", op, n, "all"}]; ok {
					parts = append(parts, fmt.Sprintf("%.3fx at %d", r.P50Ms/eb.P50Ms, n))
				}
			}
			text += fmt.Sprintf(" (etcd, for reference: %.2f ms at %d, %s)", eb.P50Ms, clients[0], strings.Join(parts, ", "))
		}
		out = append(out, goal{pass, text})
	}
	return out
}
