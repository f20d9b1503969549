package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// The load generator: one run is one row of the table for one system,
// as scripts/bench.sh runs one op type at a time: every client set up
// (not measured), warmed for a while (not measured), a barrier, then
// every client doing ops one at a time for the run's duration (an op
// started before the end is counted when it is answered), then the
// clients give back what they hold (not measured). ops/s is the ok ops
// over the time from the barrier to the last op's answer.

// benchmarks are the table's rows, in order: each op type alone, then
// mixed (each client grants, renews, checks and releases in turn).
var benchmarks = []string{"grant", "renew", "check", "release", "mixed"}

// kinds are the op types; a mixed run reports each, and "all".
var kinds = []string{"grant", "renew", "check", "release"}

// system is a lease service under test: it makes the clients of a run.
type system interface {
	// Name labels the system's rows.
	Name() string
	// Version says what runs, for the report (e.g. "3.7.3").
	Version() string
	// Servers are the PIDs of the system's server processes, whose CPU
	// time each run reports.
	Servers() []int
	// Worker returns client k (of clients) for a run of benchmark op. id
	// is new for every run and warm-up, so names never collide with an
	// earlier run's.
	Worker(id, op string, k, clients int) worker
}

// worker is one client of one run.
type worker interface {
	// Setup prepares the run, not measured: the leases that renew, check
	// and mixed runs cycle over, and the pool of grants that a release
	// run gives back (pool of them; a release client stops when its pool
	// is used up, and the run is then incomplete).
	Setup(ctx context.Context, pool int) error
	// Do is op i (from 0) of the client; it says which kind of op it was
	// (a mixed run cycles through the four); errPoolEmpty when a release
	// client has given back its whole pool.
	Do(ctx context.Context, i int) (kind string, err error)
	// Teardown gives back what the client still holds, not measured.
	Teardown(ctx context.Context)
}

// errPoolEmpty ends a release client whose pool is used up.
var errPoolEmpty = errors.New("the release pool is used up: it was sized from a lower rate")

// runSpec is one run.
type runSpec struct {
	Op       string        // a benchmark
	Clients  int           // concurrent clients
	Duration time.Duration // the measured phase: ops are started until then
	Warm     time.Duration // ops before the run, not measured (connections, buffers, caches)
	// Pool, WarmPool: leases granted beforehand per release client, for
	// the measured phase and the warm-up (0 for other benchmarks).
	Pool, WarmPool int
}

// result is one run of one system.
type result struct {
	System    string             `json:"system"`
	Version   string             `json:"version"`
	Op        string             `json:"op"`
	Clients   int                `json:"clients"`
	Round     int                `json:"round"`
	DurationS float64            `json:"duration_s"` // the measured phase asked for
	Done      int                `json:"done"`       // the ops answered (ok or not)
	Exhausted int                `json:"exhausted"`  // clients that ran out of their release pool
	ElapsedS  float64            `json:"elapsed_s"`
	Load      [2]float64         `json:"load"`  // the 1-minute load average before and after
	Kinds     map[string]summary `json:"kinds"` // by kind of op, and "all"
	// CPU time over the measured phase (10 ms resolution): the servers'
	// processes together, and this process (the clients).
	ServerCPUS float64 `json:"server_cpu_s"`
	ClientCPUS float64 `json:"client_cpu_s"`
	// Read and write system calls over the measured phase, the servers'
	// together and this process's: on loopback they are most of the cost.
	ServerIOCalls int64 `json:"server_io_calls"`
	ClientIOCalls int64 `json:"client_io_calls"`
	// MemberProcs is the GOMAXPROCS every member ran with (-member-cpus);
	// 0: Go's default (every core).
	MemberProcs int `json:"member_gomaxprocs"`
}

// complete reports whether every op answered was ok and every client
// worked for the whole duration.
func (r result) complete() bool {
	all := r.Kinds["all"]
	return all.OK > 0 && all.Failed == 0 && r.Exhausted == 0
}

// record is what one client saw in the measured phase.
type record struct {
	lat       map[string][]time.Duration // ok ops by kind
	failed    map[string]int
	firstErr  string
	done      int
	exhausted bool
	end       time.Duration // since the barrier, at the last answer
}

// runOnce makes one run of spec against sys: the warm-up (a run of its
// own with the same clients' settings, not measured), then the measured
// run.
func runOnce(ctx context.Context, sys system, spec runSpec, id string) (result, error) {
	res := result{System: sys.Name(), Version: sys.Version(), Op: spec.Op, Clients: spec.Clients, DurationS: spec.Duration.Seconds()}
	res.Load[0] = loadAverage()
	if spec.Warm > 0 {
		warm := spec
		warm.Duration, warm.Warm, warm.Pool = spec.Warm, 0, spec.WarmPool
		if _, err := runOnce(ctx, sys, warm, id+"w"); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
	}
	ws := make([]worker, spec.Clients)
	for k := range ws {
		ws[k] = sys.Worker(id, spec.Op, k, spec.Clients)
	}
	defer teardownAll(ctx, ws)
	if err := setupAll(ctx, ws, spec.Pool); err != nil {
		return res, fmt.Errorf("%s setup: %w", sys.Name(), err)
	}
	server0, client0 := cpuOf(sys.Servers()), cpuTime(os.Getpid())
	serverIO0, clientIO0 := ioCallsOf(sys.Servers()), ioCalls(os.Getpid())
	recs, elapsed := measure(ctx, ws, spec.Duration)
	res.ServerCPUS = (cpuOf(sys.Servers()) - server0).Seconds()
	res.ClientCPUS = (cpuTime(os.Getpid()) - client0).Seconds()
	res.ServerIOCalls = ioCallsOf(sys.Servers()) - serverIO0
	res.ClientIOCalls = ioCalls(os.Getpid()) - clientIO0
	res.ElapsedS = elapsed.Seconds()
	res.Done, res.Kinds = collect(recs, elapsed)
	for _, r := range recs {
		if r.exhausted {
			res.Exhausted++
		}
	}
	res.Load[1] = loadAverage()
	return res, nil
}

// cpuOf is the CPU time the processes have used together.
func cpuOf(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		sum += cpuTime(pid)
	}
	return sum
}

// ioCallsOf is the read and write system calls the processes have made.
func ioCallsOf(pids []int) int64 {
	var sum int64
	for _, pid := range pids {
		sum += ioCalls(pid)
	}
	return sum
}

// setupAll sets every client up at once; the first error is returned.
func setupAll(ctx context.Context, ws []worker, pool int) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for k, w := range ws {
		wg.Go(func() { errs[k] = w.Setup(ctx, pool) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// teardownAll gives back what the clients hold, each within 30 s; not at
// all when ctx was cancelled (the benchmark was interrupted: its clusters
// are stopped next).
func teardownAll(ctx context.Context, ws []worker) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() { w.Teardown(ctx) })
	}
	wg.Wait()
}

// measure starts every client at one instant and lets each do ops one
// at a time until d has passed (an op started before then is counted
// when answered; one cut off by the end of ctx is not). It returns each
// client's record and the time from the start to the last answer.
func measure(ctx context.Context, ws []worker, d time.Duration) ([]record, time.Duration) {
	recs := make([]record, len(ws))
	start := make(chan struct{})
	var t0 time.Time
	var wg sync.WaitGroup
	for k, w := range ws {
		wg.Go(func() {
			<-start
			recs[k] = oneClient(ctx, w, t0, t0.Add(d))
		})
	}
	t0 = time.Now()
	close(start)
	wg.Wait()
	var elapsed time.Duration
	for _, r := range recs {
		elapsed = max(elapsed, r.end)
	}
	return recs, elapsed
}

// oneClient is one client's measured phase: ops until the deadline.
// Every op gets at most opTimeout, so that a stuck op cannot stretch the
// run.
func oneClient(ctx context.Context, w worker, t0, deadline time.Time) record {
	r := record{lat: map[string][]time.Duration{}, failed: map[string]int{}}
	for i := 0; ctx.Err() == nil; i++ {
		begin := time.Now()
		if !begin.Before(deadline) {
			break
		}
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		kind, err := w.Do(octx, i)
		cancel()
		end := time.Now()
		if errors.Is(err, errPoolEmpty) {
			r.exhausted = true
			break
		}
		if err != nil && ctx.Err() != nil {
			break // the benchmark was interrupted: neither ok nor failed
		}
		r.done++
		r.end = end.Sub(t0)
		if err != nil {
			r.failed[kind]++
			if r.firstErr == "" {
				r.firstErr = fmt.Sprintf("%s: %v", kind, err)
			}
			continue
		}
		r.lat[kind] = append(r.lat[kind], end.Sub(begin))
	}
	return r
}

// opTimeout bounds one op of the table: far above any healthy answer.
const opTimeout = 10 * time.Second

// collect sums the clients' records into a summary per kind and "all".
func collect(recs []record, elapsed time.Duration) (done int, by map[string]summary) {
	lat := map[string][]time.Duration{}
	failed := map[string]int{}
	firstErr := ""
	for _, r := range recs {
		done += r.done
		for k, l := range r.lat {
			lat[k] = append(lat[k], l...)
			lat["all"] = append(lat["all"], l...)
		}
		for k, f := range r.failed {
			failed[k] += f
			failed["all"] += f
		}
		if firstErr == "" {
			firstErr = r.firstErr
		}
	}
	by = map[string]summary{}
	for _, k := range append([]string{"all"}, kinds...) {
		if len(lat[k]) > 0 || failed[k] > 0 {
			by[k] = summarize(lat[k], failed[k], elapsed)
		}
	}
	if s, ok := by["all"]; ok {
		s.FirstErr = firstErr
		by["all"] = s
	}
	return done, by
}
