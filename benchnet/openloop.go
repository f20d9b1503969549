package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/client"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// openloopPart: holders renewing on a schedule, as a fleet of chunk
// servers does: renewals arrive at a fixed offered rate with Poisson
// arrivals (exponential gaps), each renewing the next of -holders leases
// in turn, whether or not earlier ones were answered (an open loop: a
// slow answer does not slow the arrivals, as it does a closed loop's
// clients). Each latency counts from the renewal's scheduled arrival,
// so a late start counts too. The rates are 25, 50 and 75 % of etcd's
// saturation rate: the renew rate 64 clients in a closed loop get from
// etcd 3.7 (measured first, the median of the rounds). Ours and etcd
// run in turn at each rate, every round; the report gives p50 and p99
// (medians over the rounds, with the spread) and the goals: ours no
// higher than etcd's at every rate.
type openloopPart struct {
	duration, warm time.Duration
	rounds         int
	fractions      string
	satClients     int
	holders        int
	maxOutstanding int
	leaseMs        int64
}

func (o *openloopPart) flags(fs *flag.FlagSet) {
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "each run's measured phase")
	fs.DurationVar(&o.warm, "warm", time.Second, "each run's warm-up at the same rate, not measured")
	fs.IntVar(&o.rounds, "rounds", 3, "runs per rate and system")
	fs.StringVar(&o.fractions, "fractions", "25,50,75", "offered rates, in % of etcd's saturation rate")
	fs.IntVar(&o.satClients, "sat-clients", 64, "closed-loop clients that measure etcd's saturation rate")
	fs.IntVar(&o.holders, "holders", 1000, "leases renewed in turn")
	fs.IntVar(&o.maxOutstanding, "max-outstanding", 20000, "renewals in flight at most; an arrival beyond it is dropped and the run incomplete")
	fs.Int64Var(&o.leaseMs, "lease-ms", 60000, "every lease's length (etcd: whole seconds)")
}

// openResult is one open-loop run.
type openResult struct {
	System   string  `json:"system"`
	Version  string  `json:"version"`
	Fraction int     `json:"fraction_pct"`
	Round    int     `json:"round"`
	Offered  float64 `json:"offered_per_s"`
	summary
	Dropped     int        `json:"dropped"`
	DurationS   float64    `json:"duration_s"`
	Load        [2]float64 `json:"load"`
	MemberProcs int        `json:"member_gomaxprocs"`
}

// fleet is a system's holders: renew renews holder h; close gives every
// lease back.
type fleet interface {
	renew(ctx context.Context, h int) error
	close(ctx context.Context)
}

func (o *openloopPart) run(ctx context.Context, env *benchEnv) error {
	fractions, err := intList(o.fractions)
	if err != nil {
		return err
	}
	env.logf("starting 3 lease-node serve members and 3 etcd %s members (--unsafe-no-fsync)", env.etcdVersion)
	oc, err := upOurs(env.repo, filepath.Join(env.work, "ours-openloop"), env.memberEnv(), env.pids, "-max-lease-ms", fmt.Sprint(o.leaseMs))
	if err != nil {
		return err
	}
	defer oc.down()
	oursPIDs, err := oc.pids()
	if err != nil {
		return err
	}
	c, err := client.New(client.Config{Endpoints: oc.endpoints, Seed: env.seed, Batching: true})
	if err != nil {
		return err
	}
	defer c.Close()
	us := &ours{c: c, leaseMs: o.leaseMs}
	for _, pid := range oursPIDs {
		us.pids = append(us.pids, pid)
	}
	anchor := env.etcds(false)[0]
	etcdSys, stopEtcd, err := startEtcdSystem(env, anchor, (o.leaseMs+999)/1000)
	defer stopEtcd()
	if err != nil {
		return err
	}
	sat, err := o.saturation(ctx, env, etcdSys)
	if err != nil {
		return err
	}
	fleets := map[string]fleet{}
	for _, sys := range []system{us, etcdSys} {
		f, err := newFleet(ctx, sys, o.holders, env.seed)
		if err != nil {
			return fmt.Errorf("%s: the holders' leases: %w", sys.Name(), err)
		}
		defer f.close(context.Background())
		fleets[sys.Name()] = f
	}
	var results []openResult
	for round := range o.rounds {
		for _, pct := range fractions {
			for _, sys := range alternate([]system{us, etcdSys}, round) {
				rate := sat * float64(pct) / 100
				r := o.runOpen(ctx, fleets[sys.Name()], rate, env.seed+uint64(round*1000+pct))
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r.System, r.Version, r.Fraction, r.Round, r.MemberProcs = sys.Name(), sys.Version(), pct, round, env.memberProcs()
				results = append(results, r)
				env.save("openloop.jsonl", r)
				env.logf("open loop %-5s %d%% (%.0f/s offered): %d ok, %d failed, %d dropped, %.0f ok/s, p50 %.2f ms, p99 %.2f ms (load %.2f -> %.2f)%s",
					r.System, pct, rate, r.OK, r.Failed, r.Dropped, r.OpsPerS, r.P50Ms, r.P99Ms, r.Load[0], r.Load[1], firstErr(r.summary))
			}
		}
	}
	o.report(env, results, sat, fractions)
	return nil
}

// saturation is etcd's renew rate with satClients clients in a closed
// loop, the median over the rounds.
func (o *openloopPart) saturation(ctx context.Context, env *benchEnv, sys system) (float64, error) {
	var rates []float64
	for round := range o.rounds {
		r, err := runOnce(ctx, sys, runSpec{Op: "renew", Clients: o.satClients, Duration: o.duration, Warm: o.warm}, fmt.Sprintf("sat%d", round))
		if err != nil {
			return 0, fmt.Errorf("etcd's saturation: %w", err)
		}
		if !r.complete() {
			return 0, fmt.Errorf("etcd's saturation run did not answer every renew: %s", r.Kinds["all"].FirstErr)
		}
		rates = append(rates, r.Kinds["all"].OpsPerS)
		env.logf("etcd %s saturation, round %d: renew at %d clients, closed loop: %.0f ops/s (load %.2f)", sys.Version(), round, o.satClients, r.Kinds["all"].OpsPerS, r.Load[1])
	}
	return median(rates), nil
}

// runOpen offers rate renewals a second with Poisson arrivals for the
// warm-up (not counted), then for the duration; it waits for every
// renewal started.
func (o *openloopPart) runOpen(ctx context.Context, f fleet, rate float64, seed uint64) openResult {
	res := openResult{Offered: rate, DurationS: o.duration.Seconds()}
	res.Load[0] = loadAverage()
	rng := rand.New(rand.NewPCG(seed, 0x6f70656e))
	var mu sync.Mutex
	var lat []time.Duration
	var failed, dropped int
	var firstErr string
	var outstanding atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	measureFrom, end := start.Add(o.warm), start.Add(o.warm+o.duration)
	next, h := start, 0
	for next.Before(end) && ctx.Err() == nil {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		at, counted := next, !next.Before(measureFrom)
		holder := h % o.holders
		h++
		next = next.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		if outstanding.Load() >= int64(o.maxOutstanding) {
			if counted {
				dropped++
			}
			continue
		}
		outstanding.Add(1)
		wg.Go(func() {
			defer outstanding.Add(-1)
			octx, cancel := context.WithTimeout(ctx, opTimeout)
			err := f.renew(octx, holder)
			cancel()
			took := time.Since(at)
			if !counted || ctx.Err() != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if firstErr == "" {
					firstErr = err.Error()
				}
				return
			}
			lat = append(lat, took)
		})
	}
	wg.Wait()
	res.summary = summarize(lat, failed, o.duration)
	res.FirstErr, res.Dropped = firstErr, dropped
	res.Load[1] = loadAverage()
	return res
}

// report prints the saturation rate, one table row per rate and system,
// and the goals.
func (o *openloopPart) report(env *benchEnv, results []openResult, sat float64, fractions []int) {
	w := env.out
	fmt.Fprintf(w, "\nopen loop: renewals of %d holders in turn, Poisson arrivals at %v%% of etcd %s's saturation rate (%.0f renews/s: %d clients in a closed loop, median of %d rounds); runs of %v after %v of warm-up, %d rounds (medians, spread: least-most); every member with %s; load average now %.2f\n\n",
		o.holders, fractions, env.etcdVersion, sat, o.satClients, o.rounds, o.duration, o.warm, o.rounds, openProcsText(results), loadAverage())
	fmt.Fprintf(w, "| offered | system | ok/s | p50 ms | p50 spread | p99 ms | p99 spread | failed | dropped |\n|---|---|---|---|---|---|---|---|---|\n")
	med := map[string][2]float64{}
	bad := map[string]bool{}
	for _, pct := range fractions {
		for _, name := range []string{"ours", "etcd"} {
			var ok, p50, p99 []float64
			failed, dropped := 0, 0
			for _, r := range results {
				if r.System == name && r.Fraction == pct {
					ok, p50, p99 = append(ok, r.OpsPerS), append(p50, r.P50Ms), append(p99, r.P99Ms)
					failed, dropped = failed+r.Failed, dropped+r.Dropped
				}
			}
			if len(ok) == 0 {
				continue
			}
			key := fmt.Sprint(name, pct)
			med[key] = [2]float64{median(p50), median(p99)}
			bad[key] = failed > 0 || dropped > 0
			fmt.Fprintf(w, "| %d%% (%.0f/s) | %s | %.0f | %.2f | %.2f-%.2f | %.2f | %.2f-%.2f | %d | %d |\n", pct, sat*float64(pct)/100, name,
				median(ok), median(p50), slices.Min(p50), slices.Max(p50), median(p99), slices.Min(p99), slices.Max(p99), failed, dropped)
		}
	}
	fmt.Fprintln(w)
	for _, g := range openGoals(med, bad, fractions, env.etcdVersion) {
		env.goal(g)
	}
}

// openGoals: at every rate, ours p50 and p99 no higher than etcd's; a
// rate with a failed or dropped renewal, or a system missing, misses.
func openGoals(med map[string][2]float64, bad map[string]bool, fractions []int, version string) []goal {
	var out []goal
	for _, pct := range fractions {
		us, ok1 := med[fmt.Sprint("ours", pct)]
		them, ok2 := med[fmt.Sprint("etcd", pct)]
		text := fmt.Sprintf("open loop at %d%% of etcd %s's saturation: p50 and p99 <= etcd's: ", pct, version)
		switch {
		case !ok1 || !ok2:
			out = append(out, goal{false, text + "a run is missing"})
		case bad[fmt.Sprint("ours", pct)] || bad[fmt.Sprint("etcd", pct)]:
			out = append(out, goal{false, text + fmt.Sprintf("renewals failed or were dropped (p50 %.2f vs %.2f ms, p99 %.2f vs %.2f ms)", us[0], them[0], us[1], them[1])})
		default:
			out = append(out, goal{us[0] <= them[0] && us[1] <= them[1],
				text + fmt.Sprintf("p50 %.2f vs %.2f ms (%.3fx), p99 %.2f vs %.2f ms (%.3fx)", us[0], them[0], us[0]/them[0], us[1], them[1], us[1]/them[1])})
		}
	}
	return out
}

func openProcsText(results []openResult) string {
	if len(results) == 0 || results[0].MemberProcs == 0 {
		return "Go's default GOMAXPROCS"
	}
	return fmt.Sprintf("GOMAXPROCS=%d", results[0].MemberProcs)
}

// newFleet grants n leases of sys, 64 at a time.
func newFleet(ctx context.Context, sys system, n int, seed uint64) (fleet, error) {
	switch s := sys.(type) {
	case *ours:
		f := &oursFleet{o: s, chunks: make([]string, n), tokens: make([]atomic.Int64, n), server: "cs_openloop"}
		return f, grantEach(ctx, n, func(ctx context.Context, h int) error {
			f.chunks[h] = fmt.Sprintf("openloop_%d_%d", seed, h)
			l, err := s.c.Grant(ctx, f.chunks[h], f.server, s.leaseMs)
			switch {
			case err != nil:
				return err
			case !l.Granted():
				return fmt.Errorf("%s is held by %s", f.chunks[h], l.Primary)
			}
			f.tokens[h].Store(l.Token)
			return nil
		})
	case *etcdSystem:
		f := &etcdFleet{e: s, ids: make([]clientv3.LeaseID, n)}
		return f, grantEach(ctx, n, func(ctx context.Context, h int) error {
			r, err := s.c.Grant(ctx, s.ttlS)
			if err != nil {
				return err
			}
			f.ids[h] = r.ID
			return nil
		})
	}
	return nil, errors.New("no fleet for " + sys.Name())
}

// grantEach runs grant for 0..n-1, 64 at a time; the first error wins.
func grantEach(ctx context.Context, n int, grant func(ctx context.Context, h int) error) error {
	errs := make([]error, 64)
	var wg sync.WaitGroup
	for k := range 64 {
		wg.Go(func() {
			for h := k; h < n && errs[k] == nil; h += 64 {
				errs[k] = grant(ctx, h)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

type oursFleet struct {
	o      *ours
	server string
	chunks []string
	tokens []atomic.Int64 // the latest token of each, for the release
}

func (f *oursFleet) renew(ctx context.Context, h int) error {
	l, err := f.o.c.Renew(ctx, f.chunks[h], f.server, f.o.leaseMs)
	if err == nil {
		f.tokens[h].Store(max(f.tokens[h].Load(), l.Token))
	}
	return err
}

func (f *oursFleet) close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	grantEach(ctx, len(f.chunks), func(ctx context.Context, h int) error {
		if f.chunks[h] != "" {
			f.o.c.Release(ctx, f.chunks[h], f.server, f.tokens[h].Load())
		}
		return nil
	})
}

type etcdFleet struct {
	e   *etcdSystem
	ids []clientv3.LeaseID
}

func (f *etcdFleet) renew(ctx context.Context, h int) error {
	r, err := f.e.c.KeepAliveOnce(ctx, f.ids[h])
	if err == nil && r.TTL <= 0 {
		err = fmt.Errorf("LeaseKeepAliveOnce of %x answered TTL %d", f.ids[h], r.TTL)
	}
	return err
}

func (f *etcdFleet) close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	grantEach(ctx, len(f.ids), func(ctx context.Context, h int) error {
		if f.ids[h] != 0 {
			f.e.c.Revoke(ctx, f.ids[h])
		}
		return nil
	})
}
