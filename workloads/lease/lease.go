package lease

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"chunklease/history"
	"chunklease/workloads"
)

// LeaseOptions configures the lease workload.
type LeaseOptions struct {
	// Servers is K: chunk servers "cs1".."csK" contend for leases.
	// Zero means the default, 3.
	Servers int
	// Chunks is C: chunk handles "ch_1".."ch_C", each an independent lease.
	// Zero means the default, 3.
	Chunks int
	// LeaseMs is the longest lease_ms a grant or renew asks for: the
	// workload's longest lease, which the harness passes to nodes as
	// LEASE_MAX_MS. Zero means the default, 1000.
	LeaseMs int64
	// MinLeaseMs is the shortest lease_ms. Each grant and renew asks for a
	// lease_ms drawn uniformly from [MinLeaseMs, LeaseMs], so renewals come
	// both shorter and longer than the lease they extend (a shorter one must
	// not shrink the protection). Zero means LeaseMs/4, at least 1; set it
	// to LeaseMs for leases of one length.
	MinLeaseMs int64
	// Rate is the mean number of scheduled ops per second (grants, checks,
	// releases of leases not held) across all workers. Renewals and the
	// releases that end a holding come on top, as soon as a worker is free.
	// Zero means no scheduled ops at all.
	Rate float64
	// Workers is the number of client workers (Maelstrom's concurrency).
	// Zero means the default, 5. Larger worker numbers are still accepted.
	Workers int
	// MaxRenewals bounds how often one holding is renewed before its plan
	// releases or abandons it (uniform in 0..MaxRenewals). Zero means the
	// default, 3.
	MaxRenewals int
}

// DefaultLeaseOptions are the defaults that NewLease puts in zero fields,
// with a rate of 10 ops/s. MinLeaseMs stays zero: it follows LeaseMs.
func DefaultLeaseOptions() LeaseOptions {
	return LeaseOptions{Servers: 3, Chunks: 3, LeaseMs: 1000, Rate: 10, Workers: 5, MaxRenewals: 3}
}

// withDefaults fills zero fields (all but Rate, whose zero means "none").
func (o LeaseOptions) withDefaults() LeaseOptions {
	d := DefaultLeaseOptions()
	if o.Servers == 0 {
		o.Servers = d.Servers
	}
	if o.Chunks == 0 {
		o.Chunks = d.Chunks
	}
	if o.LeaseMs == 0 {
		o.LeaseMs = d.LeaseMs
	}
	if o.MinLeaseMs == 0 {
		o.MinLeaseMs = max(o.LeaseMs/4, 1)
	}
	if o.Workers == 0 {
		o.Workers = d.Workers
	}
	if o.MaxRenewals == 0 {
		o.MaxRenewals = d.MaxRenewals
	}
	return o
}

// Validate reports options NewLease would refuse, after defaults apply.
func (o LeaseOptions) Validate() error {
	o = o.withDefaults()
	var errs []error
	if o.Servers < 1 {
		errs = append(errs, fmt.Errorf("servers must be >= 1, got %d", o.Servers))
	}
	if o.Chunks < 1 {
		errs = append(errs, fmt.Errorf("chunks must be >= 1, got %d", o.Chunks))
	}
	if o.LeaseMs < 1 {
		errs = append(errs, fmt.Errorf("lease_ms must be >= 1, got %d", o.LeaseMs))
	}
	if o.LeaseMs >= 1 && (o.MinLeaseMs < 1 || o.MinLeaseMs > o.LeaseMs) {
		errs = append(errs, fmt.Errorf("min lease_ms must be in [1, lease_ms %d], got %d", o.LeaseMs, o.MinLeaseMs))
	}
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		errs = append(errs, fmt.Errorf("rate must be a finite number >= 0, got %v", o.Rate))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers must be >= 1, got %d", o.Workers))
	}
	if o.MaxRenewals < 0 {
		errs = append(errs, fmt.Errorf("max renewals must be >= 0, got %d", o.MaxRenewals))
	}
	return errors.Join(errs...)
}

// Lease f values in the history.
const (
	FGrant   = "grant"
	FRenew   = "renew"
	FCheck   = "check"
	FRelease = "release"
)

// Lease is the chunk-lease workload: K chunk servers contend for C chunks
// through every worker; see doc.go for the generator and the checker.
type Lease struct {
	opts        LeaseOptions
	rng         *rand.Rand
	stagger     workloads.Stagger
	serverNames []string
	chunkNames  []string
	serverIndex map[string]int
	chunkIndex  map[string]int
	pairs       pairTable        // index server*Chunks + chunk
	holders     []*holding       // pairs whose server believes it holds the chunk, oldest first
	holdingAt   map[int]*holding // the same, by pair
	granted     []uint64         // bit c: a grant or renew of chunk c was sent (FinalOps)
	regrants    []int            // pairs to grant again at once, after a plan-ending release
	inflight    []workerCall
	lastWorker  int // the worker of the last op handed out (Request usually follows Next)
}

// NewLease returns the lease workload; seed fixes every random choice.
// Zero option fields take their defaults. It panics on options that
// Validate rejects: the caller validates user input first.
func NewLease(opts LeaseOptions, seed int64) workloads.Workload {
	return newLease(opts, seed)
}

func newLease(opts LeaseOptions, seed int64) *Lease {
	if err := opts.Validate(); err != nil {
		panic("workloads.NewLease: " + err.Error())
	}
	opts = opts.withDefaults()
	l := &Lease{
		opts: opts, rng: workloads.NewRand(seed), stagger: workloads.NewStagger(opts.Rate),
		serverIndex: map[string]int{}, chunkIndex: map[string]int{},
		pairs:   make(pairTable, opts.Servers*opts.Chunks),
		granted: make([]uint64, (opts.Chunks+63)/64), holdingAt: map[int]*holding{},
		inflight: make([]workerCall, opts.Workers),
	}
	for s := range opts.Servers {
		name := "cs" + strconv.Itoa(s+1)
		l.serverNames = append(l.serverNames, name)
		l.serverIndex[name] = s
	}
	for c := range opts.Chunks {
		name := "ch_" + strconv.Itoa(c+1)
		l.chunkNames = append(l.chunkNames, name)
		l.chunkIndex[name] = c
	}
	return l
}

// Name is "lease".
func (l *Lease) Name() string { return "lease" }

// Check runs CheckLease.
func (l *Lease) Check(ops []history.Op) workloads.Result {
	r := CheckLease(ops)
	return workloads.Result{Valid: r.Valid, Details: r}
}

// Stats computes LeaseStats for results.json from the checker's holdings.
func (l *Lease) Stats(ops []history.Op, res workloads.Result, messages int) any {
	check, ok := res.Details.(LeaseResult)
	if !ok {
		check = CheckLease(ops)
	}
	return LeaseStats(ops, check.Holdings, messages)
}

// What the harness looks for.
var (
	_ workloads.Workload      = (*Lease)(nil)
	_ workloads.StatsReporter = (*Lease)(nil)
	_ workloads.Finisher      = (*Lease)(nil)
	_ workloads.LeaseBounded  = (*Lease)(nil)
	_ workloads.Analyzer      = (*Lease)(nil)
)

// FromParams builds the lease workload from the CLI's settings: --rate,
// --concurrency, --lease-ms, --servers and --chunks.
func FromParams(p workloads.Params) (workloads.Workload, error) {
	o := LeaseOptions{Servers: p.Servers, Chunks: p.Chunks, LeaseMs: p.LeaseMs, Rate: p.Rate, Workers: p.Workers}
	if p.Servers < 1 || p.Chunks < 1 || p.LeaseMs < 1 {
		return nil, fmt.Errorf("--servers, --chunks and --lease-ms must be >= 1 (got %d, %d, %d)", p.Servers, p.Chunks, p.LeaseMs)
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("lease workload: %w", err)
	}
	return NewLease(o, p.Seed), nil
}
