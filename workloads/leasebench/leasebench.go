package leasebench

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/lease"
)

// Benchmark op names (-bench-op).
const (
	BenchGrant   = "grant"
	BenchRenew   = "renew"
	BenchCheck   = "check"
	BenchRelease = "release"
	BenchMixed   = "mixed"
)

// LeaseBenchOptions configures the lease benchmark.
type LeaseBenchOptions struct {
	Op      string // BenchGrant, BenchRenew, BenchCheck, BenchRelease or BenchMixed
	Ops     int    // measured ops across all workers
	Chunks  int    // chunk handles ch_1..ch_Chunks, split among the workers
	Workers int    // concurrent clients; each must own at least one chunk
	LeaseMs int64  // lease_ms of every grant and renew
}

// Validate reports options NewLeaseBench would refuse.
func (o LeaseBenchOptions) Validate() error {
	var errs []error
	switch o.Op {
	case BenchGrant, BenchRenew, BenchCheck, BenchRelease, BenchMixed:
	default:
		errs = append(errs, fmt.Errorf("bench op must be grant, renew, check, release or mixed, got %q", o.Op))
	}
	if o.Ops < 1 {
		errs = append(errs, fmt.Errorf("ops must be >= 1, got %d", o.Ops))
	}
	if o.Workers < 1 || o.Chunks < o.Workers {
		errs = append(errs, fmt.Errorf("every worker needs its own chunk: chunks (%d) must be >= workers (%d) >= 1", o.Chunks, o.Workers))
	}
	if o.LeaseMs < 1 {
		errs = append(errs, fmt.Errorf("lease_ms must be >= 1, got %d", o.LeaseMs))
	}
	return errors.Join(errs...)
}

// benchStep is one planned op of one worker.
type benchStep struct {
	f     string
	chunk int // index into chunk names
	round int
}

// LeaseBench is the lease benchmark workload.
type LeaseBench struct {
	opts    LeaseBenchOptions
	chunks  []string
	plans   [][]benchStep // per worker, in order
	next    []int         // per worker: index of its next step
	left    []int         // per round: ops not yet completed
	round   int           // the lowest round with ops left
	tokens  []int64       // per chunk: token of its latest ok grant or renew
	current []benchStep   // per worker: the step in flight
}

// NewLeaseBench returns the benchmark. It panics on options that Validate
// rejects: the caller validates user input first.
func NewLeaseBench(opts LeaseBenchOptions) *LeaseBench {
	if err := opts.Validate(); err != nil {
		panic("workloads.NewLeaseBench: " + err.Error())
	}
	b := &LeaseBench{opts: opts, tokens: make([]int64, opts.Chunks),
		next: make([]int, opts.Workers), current: make([]benchStep, opts.Workers)}
	for c := range opts.Chunks {
		b.chunks = append(b.chunks, "ch_"+strconv.Itoa(c+1))
	}
	for w := range opts.Workers {
		share := opts.Ops / opts.Workers
		if w < opts.Ops%opts.Workers {
			share++
		}
		b.plans = append(b.plans, benchPlan(opts.Op, workerChunks(w, opts.Workers, opts.Chunks), share))
	}
	for _, plan := range b.plans {
		for _, s := range plan {
			for s.round >= len(b.left) {
				b.left = append(b.left, 0)
			}
			b.left[s.round]++
		}
	}
	return b
}

// workerChunks are the chunk indexes worker w owns.
func workerChunks(w, workers, chunks int) []int {
	var own []int
	for c := w; c < chunks; c += workers {
		own = append(own, c)
	}
	return own
}

// benchPlan is one worker's steps: `measured` ops of type op over its
// chunks, with the warm-up and reset ops the op needs (see the top of the
// file).
func benchPlan(op string, own []int, measured int) []benchStep {
	var plan []benchStep
	pass := func(f string, round int, chunks []int) {
		for _, c := range chunks {
			plan = append(plan, benchStep{f: f, chunk: c, round: round})
		}
	}
	switch op {
	case BenchMixed:
		for i := range measured {
			f := [...]string{lease.FGrant, lease.FRenew, lease.FCheck, lease.FRelease}[i%4]
			plan = append(plan, benchStep{f: f, chunk: own[(i/4)%len(own)]})
		}
	case BenchRenew, BenchCheck:
		pass(lease.FGrant, 0, own)
		for i := range measured {
			plan = append(plan, benchStep{f: op, chunk: own[i%len(own)], round: 1})
		}
	case BenchGrant, BenchRelease:
		// A grant pass then a release pass, as often as needed; the last
		// pass of the measured type may cover only part of the chunks.
		for round := 0; measured > 0; round += 2 {
			chunks := own[:min(measured, len(own))]
			measured -= len(chunks)
			pass(lease.FGrant, round, chunks)
			pass(lease.FRelease, round+1, chunks)
		}
	}
	return plan
}

// Name is "lease-bench".
func (b *LeaseBench) Name() string { return "lease-bench" }

// LongestLeaseMs is LeaseMs (LeaseBounded).
func (b *LeaseBench) LongestLeaseMs() int64 { return b.opts.LeaseMs }

// Next hands worker its next step once the step's round has begun.
func (b *LeaseBench) Next(now time.Duration, worker int) (workloads.Invocation, bool) {
	if worker < 0 || worker >= len(b.plans) || b.next[worker] >= len(b.plans[worker]) {
		return workloads.Invocation{}, false
	}
	s := b.plans[worker][b.next[worker]]
	if s.round > b.round {
		return workloads.Invocation{}, false // the barrier: a completion will lift it
	}
	b.next[worker]++
	b.current[worker] = s
	return b.call(s).Invocation(), true
}

// Wake is Never: every op that can start is handed out when a worker is
// free, and the rest wait for a completion.
func (b *LeaseBench) Wake() time.Duration { return workloads.Never }

// call is the lease call of step s.
func (b *LeaseBench) call(s benchStep) lease.Call {
	w := s.chunk % b.opts.Workers
	c := lease.Call{F: s.f, Chunk: b.chunks[s.chunk], Server: "cs" + strconv.Itoa(w+1)}
	switch s.f {
	case lease.FGrant, lease.FRenew:
		c.LeaseMs = b.opts.LeaseMs
	case lease.FRelease:
		c.Token = b.tokens[s.chunk]
	case lease.FCheck:
		c.Server = ""
	}
	return c
}

// Request renders an invocation as its Maelstrom request body.
func (b *LeaseBench) Request(inv workloads.Invocation) json.RawMessage {
	c, err := lease.DecodeCall(inv)
	if err != nil {
		return json.RawMessage(`{"type":"lease_bench_bad_invocation"}`) // the node answers with an error
	}
	return c.Request()
}

// Complete maps the reply as the lease workload does, keeps the chunk's
// token and counts the step done.
func (b *LeaseBench) Complete(now time.Duration, worker int, inv workloads.Invocation, reply json.RawMessage) workloads.Completion {
	c, err := lease.DecodeCall(inv)
	if err != nil {
		return workloads.Completion{Type: history.Info, Value: inv.Value, Error: "workload: " + err.Error()}
	}
	out, token := c.Complete(inv, reply)
	if worker >= 0 && worker < len(b.current) {
		s := b.current[worker]
		if token != 0 {
			b.tokens[s.chunk] = token
		}
		b.left[s.round]--
		for b.round < len(b.left) && b.left[b.round] == 0 {
			b.round++
		}
	}
	return out
}

// Check runs the lease checker.
func (b *LeaseBench) Check(ops []history.Op) workloads.Result {
	r := lease.CheckLease(ops)
	return workloads.Result{Valid: r.Valid, Details: r}
}

// Focus is the lease checker's first violation (workloads.Focuser).
func (b *LeaseBench) Focus(ops []history.Op, res workloads.Result) *workloads.Focus {
	return lease.FocusOf(ops, res.Details)
}

// LeaseBenchStats is the benchmark's entry in results.json.
type LeaseBenchStats struct {
	Op      string      `json:"op"`
	Ops     int         `json:"ops"`
	Chunks  int         `json:"chunks"`
	Workers int         `json:"workers"`
	LeaseMs int64       `json:"lease_ms"`
	Summary BenchResult `json:"summary"`
}

// Stats reports the options and LeaseBenchSummary (StatsReporter).
func (b *LeaseBench) Stats(ops []history.Op, _ workloads.Result, _ int) any {
	o := b.opts
	return LeaseBenchStats{Op: o.Op, Ops: o.Ops, Chunks: o.Chunks, Workers: o.Workers, LeaseMs: o.LeaseMs,
		Summary: LeaseBenchSummary(ops, o.Op)}
}

var (
	_ workloads.Workload      = (*LeaseBench)(nil)
	_ workloads.StatsReporter = (*LeaseBench)(nil)
	_ workloads.LeaseBounded  = (*LeaseBench)(nil)
	_ workloads.Focuser       = (*LeaseBench)(nil)
)

// BenchResult is what a benchmark run measured.
type BenchResult struct {
	// WindowS is the time the measured ops took, in seconds: for each
	// stretch of consecutive measured invocations (a measured phase), from
	// its first invoke to its last completion, summed. Warm-up and reset
	// phases in between do not count.
	WindowS float64    `json:"window_s"`
	Rows    []BenchRow `json:"rows"` // per kind of op, in GrantWon, renew, check, release order; mixed adds "all"
}

// BenchRow is one kind of measured op. Latencies are of ok ops, in
// milliseconds, nearest rank.
type BenchRow struct {
	Op        string  `json:"op"`
	Invoked   int     `json:"invoked"`
	OK        int     `json:"ok"`
	Errors    int     `json:"errors"` // fail, info, or never completed
	OpsPerSec float64 `json:"ops_per_s"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

// Kinds of benchmark rows beside the lease fs. Row "grant" is a won grant
// of a chunk its server did not hold; a grant by the holder (a renewal,
// which may take the one-round-trip path) and a grant that answered with
// another primary are other costs. Mixed gets a total.
const (
	kindGrantHolder = "grant (holder)"
	kindGrantOther  = "grant (other primary)"
	kindAll         = "all"
)

// LeaseBenchSummary computes the figures of the ops of type op (every op
// for BenchMixed) from a history.
func LeaseBenchSummary(ops []history.Op, op string) BenchResult {
	pairs, _ := history.PairOps(ops)
	var res BenchResult
	lat := map[string][]float64{}
	rows := map[string]*BenchRow{}
	row := func(kind string) *BenchRow {
		if rows[kind] == nil {
			rows[kind] = &BenchRow{Op: kind}
		}
		return rows[kind]
	}
	var segStart, segEnd int64
	inSeg := false
	held := heldBeliefs{}
	for _, p := range pairs {
		kind := held.kind(p)
		if op != BenchMixed && p.Invoke.F != op {
			if inSeg {
				res.WindowS += float64(segEnd-segStart) / 1e9
				inSeg = false
			}
			continue
		}
		end := p.Invoke.Time
		if p.Completion != nil {
			end = p.Completion.Time
		}
		if !inSeg {
			segStart, segEnd, inSeg = p.Invoke.Time, end, true
		}
		segEnd = max(segEnd, end)
		for _, k := range []string{kind, kindAll} {
			r := row(k)
			r.Invoked++
			if p.Completion != nil && p.Completion.Type == history.OK {
				r.OK++
				lat[k] = append(lat[k], float64(p.Completion.Time-p.Invoke.Time)/1e6)
			} else {
				r.Errors++
			}
		}
	}
	if inSeg {
		res.WindowS += float64(segEnd-segStart) / 1e9
	}
	for _, k := range []string{lease.FGrant, kindGrantHolder, kindGrantOther, lease.FRenew, lease.FCheck, lease.FRelease, kindAll} {
		r := rows[k]
		if r == nil || (k == kindAll && op != BenchMixed) {
			continue
		}
		if res.WindowS > 0 {
			r.OpsPerSec = float64(r.OK) / res.WindowS
		}
		l := lat[k]
		slices.Sort(l)
		r.P50Ms, r.P90Ms, r.P99Ms, r.MaxMs = workloads.NearestRank(l, 0.50), workloads.NearestRank(l, 0.90), workloads.NearestRank(l, 0.99), workloads.NearestRank(l, 1)
		res.Rows = append(res.Rows, *r)
	}
	return res
}

// heldBeliefs is what each server believes it holds, from its own ok
// replies, as the lease workload's generator learns it: chunk/server ->
// the end (ns since the start) of the latest lease it was told of. Pairs
// are fed in invoke order; a server has one op in flight per chunk, so its
// previous op on the chunk has completed by then.
type heldBeliefs map[string]int64

// kind is the row of pair p (its f, or a kind of grant), and learns from
// p's completion.
func (h heldBeliefs) kind(p history.Pair) string {
	v, err := lease.DecodeValue(p.Invoke.Value)
	if err != nil || p.Invoke.F == lease.FCheck {
		return p.Invoke.F
	}
	key := v.Chunk + "/" + v.Server
	holds := h[key] > p.Invoke.Time
	var done lease.LeaseValue
	ok := p.Completion != nil && p.Completion.Type == history.OK
	if ok {
		done, _ = lease.DecodeValue(p.Completion.Value)
	}
	switch {
	case p.Invoke.F == lease.FRelease:
		delete(h, key)
	case ok && p.Invoke.F == lease.FRenew && done.NewExpiresInMs != nil:
		h[key] = max(h[key], workloads.EndAfterMs(p.Invoke.Time, *done.NewExpiresInMs))
	case ok && p.Invoke.F == lease.FGrant && done.Primary != nil && *done.Primary == v.Server && done.ExpiresInMs != nil:
		h[key] = max(h[key], workloads.EndAfterMs(p.Invoke.Time, *done.ExpiresInMs))
	}
	switch {
	case p.Invoke.F != lease.FGrant:
		return p.Invoke.F
	case ok && done.Primary != nil && *done.Primary != v.Server:
		return kindGrantOther
	case holds:
		return kindGrantHolder
	}
	return lease.FGrant
}

// FromParams builds the lease benchmark from the CLI's settings:
// --bench-op, --ops, --chunks, --concurrency and --lease-ms.
func FromParams(p workloads.Params) (workloads.Workload, error) {
	o := LeaseBenchOptions{Op: p.BenchOp, Ops: p.Ops, Chunks: p.Chunks, Workers: p.Workers, LeaseMs: p.LeaseMs}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("lease-bench workload: %w", err)
	}
	return NewLeaseBench(o), nil
}
