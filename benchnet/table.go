package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"chunklease/client"
)

// tablePart is the per-op table: every benchmark at every client count,
// against ours and both etcd configurations, in alternating runs (each
// row runs ours, etcd, etcd-fsync in turn, the order reversed every other
// round), then the tables, the ratios and the goals.
type tablePart struct {
	ops, warm, rounds int
	clients, benchOps string
	limit             time.Duration
	profile           string
	noFsyncOnly       bool
	leaseMs           int64
}

func (t *tablePart) flags(fs *flag.FlagSet) {
	fs.IntVar(&t.ops, "ops", 2000, "measured ops per run")
	fs.IntVar(&t.warm, "warm", 5, "ops per client before each run, not measured")
	fs.IntVar(&t.rounds, "rounds", 1, "runs per row and system; the table shows the median of each figure")
	fs.StringVar(&t.clients, "clients", "1,16,64", "client counts")
	fs.StringVar(&t.benchOps, "benchmarks", strings.Join(benchmarks, ","), "the benchmarks to run (e.g. renew for a profile)")
	fs.DurationVar(&t.limit, "limit", 60*time.Second, "the most one run's measured phase may take")
	fs.StringVar(&t.profile, "profile", "", "write a CPU profile of each of our members to this directory (at the end)")
	fs.BoolVar(&t.noFsyncOnly, "no-fsync-only", false, "leave out etcd with fsync")
	fs.Int64Var(&t.leaseMs, "lease-ms", 60000, "every lease's length (etcd: rounded up to whole seconds)")
}

func (t *tablePart) run(ctx context.Context, env *benchEnv) error {
	clients, err := intList(t.clients)
	if err != nil {
		return err
	}
	systems, stop, err := t.start(env)
	defer stop()
	if err != nil {
		return err
	}
	ops, err := benchList(t.benchOps)
	if err != nil {
		return err
	}
	var results []result
	for round := range t.rounds {
		for _, op := range ops {
			for _, n := range clients {
				for _, sys := range alternate(systems, round) {
					r, err := t.runRow(ctx, env, sys, op, n, round)
					if err != nil {
						return err
					}
					results = append(results, r)
				}
			}
		}
	}
	t.report(env, results, systems, clients)
	return nil
}

// benchList parses a list of benchmarks.
func benchList(s string) ([]string, error) {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if !slices.Contains(benchmarks, b) {
			return nil, fmt.Errorf("-benchmarks: %q is not one of %v", b, benchmarks)
		}
		out = append(out, b)
	}
	return out, nil
}

// runRow makes one run and logs it.
func (t *tablePart) runRow(ctx context.Context, env *benchEnv, sys system, op string, n, round int) (result, error) {
	id := fmt.Sprintf("%d%s%d", round, op[:2], n)
	r, err := runOnce(ctx, sys, runSpec{Op: op, Clients: n, Ops: t.ops, Warm: t.warm, Limit: t.limit}, id)
	if err != nil {
		return r, fmt.Errorf("%s %s with %d clients: %w", sys.Name(), op, n, err)
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	r.Round, r.MemberProcs = round, env.memberProcs()
	env.save("results.jsonl", r)
	all := r.Kinds["all"]
	env.logf("%-10s %-7s %2d clients: %d/%d ok in %.2f s, %.0f ops/s, p50 %.2f ms, p99 %.2f ms; per op: CPU µs servers %.0f client %.0f, read+write calls servers %.1f client %.1f (load %.2f -> %.2f)%s",
		r.System, op, n, all.OK, r.Measured, r.ElapsedS, all.OpsPerS, all.P50Ms, all.P99Ms,
		perOp(r.ServerCPUS, all.OK), perOp(r.ClientCPUS, all.OK), float64(r.ServerIOCalls)/float64(max(all.OK, 1)),
		float64(r.ClientIOCalls)/float64(max(all.OK, 1)), r.Load[0], r.Load[1], firstErr(all))
	return r, nil
}

// perOp is seconds spread over n ops, in microseconds.
func perOp(seconds float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return seconds * 1e6 / float64(n)
}

func firstErr(s summary) string {
	if s.FirstErr == "" {
		return ""
	}
	return "; first error: " + s.FirstErr
}

// alternate is the systems in order on even rounds, reversed on odd ones.
func alternate(systems []system, round int) []system {
	if round%2 == 0 {
		return systems
	}
	out := make([]system, len(systems))
	for i, s := range systems {
		out[len(systems)-1-i] = s
	}
	return out
}

// start brings up our three members and both etcd clusters, and makes
// their clients; stop ends every process (always call it).
func (t *tablePart) start(env *benchEnv) ([]system, func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	extra := env.memberEnv()
	if t.profile != "" {
		abs, err := filepath.Abs(t.profile)
		if err != nil {
			return nil, stop, err
		}
		extra = append(extra, "MAELSTROM_CPUPROFILE_DIR="+abs)
	}
	env.logf("starting 3 lease-node serve members (scripts/cluster.sh, peer TLS)")
	oc, err := upOurs(env.repo, filepath.Join(env.work, "ours"), extra, env.pids, "-max-lease-ms", fmt.Sprint(t.leaseMs))
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, func() {
		if err := oc.down(); err != nil {
			env.logf("%v", err)
		}
	})
	c, err := client.New(client.Config{Endpoints: oc.endpoints, Seed: env.seed, Batching: true})
	if err != nil {
		return nil, stop, err
	}
	stops = append(stops, c.Close)
	ids, err := oc.pids()
	if err != nil {
		return nil, stop, err
	}
	us := &ours{c: c, leaseMs: t.leaseMs}
	for _, pid := range ids {
		us.pids = append(us.pids, pid)
	}
	systems := []system{us}
	configs := []struct {
		name  string
		fsync bool
	}{{"etcd", false}, {"etcd-fsync", true}}
	for _, cf := range configs {
		if cf.fsync && t.noFsyncOnly {
			continue
		}
		sys, stopEtcd, err := startEtcdSystem(env, cf.name, cf.fsync, (t.leaseMs+999)/1000)
		stops = append(stops, stopEtcd)
		if err != nil {
			return nil, stop, err
		}
		systems = append(systems, sys)
	}
	return systems, stop, nil
}

// startEtcdSystem starts one etcd cluster and its client; the returned
// stop closes the client and stops the members, and is never nil.
func startEtcdSystem(env *benchEnv, name string, fsync bool, ttlS int64) (system, func(), error) {
	env.logf("starting 3 etcd members (%s, %s)", name, map[bool]string{true: "fsync on", false: "--unsafe-no-fsync"}[fsync])
	ec, err := startEtcd(env.etcdBin, filepath.Join(env.work, name), name, fsync, env.memberEnv(), env.ports, env.pids)
	if err != nil {
		return nil, func() {}, err
	}
	cli, err := newEtcdClient(ec.endpoints())
	if err != nil {
		ec.stop()
		return nil, func() {}, err
	}
	stop := func() { cli.Close(); ec.stop() }
	return &etcdSystem{name: name, c: cli, ttlS: ttlS, ec: ec}, stop, nil
}

// report prints the tables, the comparison and the goals.
func (t *tablePart) report(env *benchEnv, results []result, systems []system, clients []int) {
	rows := aggregate(results)
	w := env.out
	fmt.Fprintf(w, "\nbench_net: %d measured ops per run, %d run(s) per row (medians), clients %v; load average now %.2f\n",
		t.ops, t.rounds, clients, loadAverage())
	fmt.Fprintf(w, "bench_net: every member, ours and etcd's, ran with %s\n", memberProcsText(results))
	var others []string
	for _, s := range systems {
		fmt.Fprintf(w, "\n%s\n\n", describe(s.Name()))
		systemTable(w, rows, s.Name(), clients)
		if s.Name() != "ours" {
			others = append(others, s.Name())
		}
	}
	fmt.Fprintf(w, "\nours / etcd, row by row (ops/s: higher is better for ours above 1; p50: lower is better for ours below 1)\n\n")
	compareTable(w, rows, others, clients)
	fmt.Fprintln(w)
	for _, g := range goals(rows, "etcd") {
		fmt.Fprintln(w, g)
	}
}

// memberProcsText says what GOMAXPROCS the members of the results ran
// with (the first result's: one table part runs with one setting).
func memberProcsText(results []result) string {
	if len(results) == 0 || results[0].MemberProcs == 0 {
		return "Go's default GOMAXPROCS (every core; -member-cpus -1)"
	}
	return fmt.Sprintf("GOMAXPROCS=%d (-member-cpus: its share of this machine's cores, which all 3 members and the clients share)", results[0].MemberProcs)
}

// describe says what a system is, above its table.
func describe(name string) string {
	switch name {
	case "ours":
		return "ours: 3 lease-node serve members, peer TLS, through chunklease/client with Batching (HTTP/1.1 keep-alive; calls that find 2 requests in flight to the member go together as one /v1/batch)"
	case "etcd":
		return "etcd: 3 etcd 3.4 members, --unsafe-no-fsync, through go.etcd.io/etcd/client/v3 (gRPC over every member's endpoint)"
	case "etcd-fsync":
		return "etcd-fsync: 3 etcd 3.4 members, fsync on (as shipped), through go.etcd.io/etcd/client/v3 (gRPC over every member's endpoint)"
	}
	return name
}
