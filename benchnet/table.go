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
	rounds            int
	duration, warm    time.Duration
	clients, benchOps string
	profile           string
	fsync             bool
	leaseMs           int64
	// rates are the ops/s measured so far, by system, benchmark and
	// clients: a release run's pool is sized from them.
	rates map[string]float64
}

func (t *tablePart) flags(fs *flag.FlagSet) {
	fs.DurationVar(&t.duration, "duration", 3*time.Second, "each run's measured phase")
	fs.DurationVar(&t.warm, "warm", time.Second, "each run's warm-up before it, not measured")
	fs.IntVar(&t.rounds, "rounds", 3, "runs per row and system; the table shows the median of each figure and the spread")
	fs.StringVar(&t.clients, "clients", "1,16,64", "client counts")
	fs.StringVar(&t.benchOps, "benchmarks", strings.Join(benchmarks, ","), "the benchmarks to run (e.g. renew for a profile)")
	fs.StringVar(&t.profile, "profile", "", "write a CPU profile of each of our members to this directory (at the end)")
	fs.BoolVar(&t.fsync, "fsync", false, "also run etcd 3.7 with fsync on (as it ships)")
	fs.Int64Var(&t.leaseMs, "lease-ms", 60000, "every lease's length (etcd: rounded up to whole seconds)")
}

func (t *tablePart) run(ctx context.Context, env *benchEnv) error {
	clients, err := intList(t.clients)
	if err != nil {
		return err
	}
	t.rates = map[string]float64{}
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
	spec := runSpec{Op: op, Clients: n, Duration: t.duration, Warm: t.warm}
	if op == "release" {
		spec.Pool, spec.WarmPool = t.pool(sys.Name(), n, t.duration), t.pool(sys.Name(), n, t.warm)
	}
	r, err := runOnce(ctx, sys, spec, id)
	if err != nil {
		return r, fmt.Errorf("%s %s with %d clients: %w", sys.Name(), op, n, err)
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	r.Round, r.MemberProcs = round, env.memberProcs()
	env.save("results.jsonl", r)
	all := r.Kinds["all"]
	t.rates[rateKey(sys.Name(), op, n)] = all.OpsPerS
	env.logf("%-10s %-7s %2d clients: %d/%d ok in %.2f s, %.0f ops/s, p50 %.2f ms, p99 %.2f ms; per op: CPU µs servers %.0f client %.0f, read+write calls servers %.1f client %.1f (load %.2f -> %.2f)%s",
		r.System, op, n, all.OK, r.Done, r.ElapsedS, all.OpsPerS, all.P50Ms, all.P99Ms,
		perOp(r.ServerCPUS, all.OK), perOp(r.ClientCPUS, all.OK), float64(r.ServerIOCalls)/float64(max(all.OK, 1)),
		float64(r.ClientIOCalls)/float64(max(all.OK, 1)), r.Load[0], r.Load[1], firstErr(all))
	return r, nil
}

// pool is how many leases each of n release clients of sys needs for d:
// three times the grant rate measured (a release costs one round, a
// grant two or more; at twice, ours used up its pools at 1 and 16
// clients in a first round, its release 2.2x its grant), or half again
// the last release rate, whichever is more;
// before either was measured, 20 000 ops/s. A pool used up ends the
// client early, and the run counts as incomplete.
func (t *tablePart) pool(sys string, n int, d time.Duration) int {
	rate := max(3*t.rates[rateKey(sys, "grant", n)], 1.5*t.rates[rateKey(sys, "release", n)])
	if rate == 0 {
		rate = 20000
	}
	return int(rate*d.Seconds()/float64(n)) + 20
}

func rateKey(sys, op string, n int) string { return fmt.Sprintf("%s/%s/%d", sys, op, n) }

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
	for _, e := range env.etcds(t.fsync) {
		sys, stopEtcd, err := startEtcdSystem(env, e, (t.leaseMs+999)/1000)
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
func startEtcdSystem(env *benchEnv, e etcdKind, ttlS int64) (system, func(), error) {
	env.logf("starting 3 etcd %s members (%s, %s)", e.version, e.name, map[bool]string{true: "fsync on", false: "--unsafe-no-fsync"}[e.fsync])
	ec, err := startEtcd(e.bin, filepath.Join(env.work, e.name), e.name, e.fsync, env.memberEnv(), loopback(env.ports), env.pids)
	if err != nil {
		return nil, func() {}, err
	}
	cli, err := newEtcdClient(ec.endpoints())
	if err != nil {
		ec.stop()
		return nil, func() {}, err
	}
	stop := func() { cli.Close(); ec.stop() }
	return &etcdSystem{name: e.name, version: e.version, c: cli, ttlS: ttlS, ec: ec}, stop, nil
}

// report prints the tables, the comparison and the goals.
func (t *tablePart) report(env *benchEnv, results []result, systems []system, clients []int) {
	rows := aggregate(results)
	w := env.out
	fmt.Fprintf(w, "\nbench_net: runs of %v measured after %v of warm-up, %d round(s) per row (the median of each figure, and its spread: the least and the most of the rounds), clients %v; load average now %.2f\n",
		t.duration, t.warm, t.rounds, clients, loadAverage())
	fmt.Fprintf(w, "bench_net: every member, ours and etcd's, ran with %s\n", memberProcsText(results))
	versions := map[string]string{}
	for _, r := range results {
		versions[r.System] = r.Version
	}
	var others []string
	for _, s := range systems {
		fmt.Fprintf(w, "\n%s\n\n", describe(s.Name(), versions[s.Name()]))
		systemTable(w, rows, s.Name(), clients)
		if s.Name() != "ours" {
			others = append(others, s.Name())
		}
	}
	fmt.Fprintf(w, "\nours / etcd, row by row (ops/s: higher is better for ours above 1; p50: lower is better for ours below 1)\n\n")
	compareTable(w, rows, others, clients)
	fmt.Fprintln(w)
	for _, g := range goals(rows, "etcd") {
		env.goal(g)
	}
}

// memberProcsText says what GOMAXPROCS the members of the results ran
// with (the first result's: one part runs with one setting).
func memberProcsText(results []result) string {
	if len(results) == 0 || results[0].MemberProcs == 0 {
		return "Go's default GOMAXPROCS (every core; -member-cpus default)"
	}
	return fmt.Sprintf("GOMAXPROCS=%d (-member-cpus)", results[0].MemberProcs)
}

// describe says what a system is, above its table.
func describe(name, version string) string {
	switch name {
	case "ours":
		return "ours: 3 lease-node serve members, peer TLS, through chunklease/client with Batching (HTTP/1.1 keep-alive, no cap of requests in flight; calls made while the client is busy writing a request to the member go together as one /v1/batch)"
	case "etcd-fsync":
		return fmt.Sprintf("%s: 3 etcd %s members, fsync on (as shipped), through go.etcd.io/etcd/client/v3 (gRPC over every member's endpoint)", name, version)
	}
	return fmt.Sprintf("%s: 3 etcd %s members, --unsafe-no-fsync, through go.etcd.io/etcd/client/v3 (gRPC over every member's endpoint)", name, version)
}
