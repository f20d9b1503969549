package master

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"chunklease/history"
	"chunklease/workloads"
)

// Master f values in the history (contract section 2: start, stop,
// status). Nemesis ops may use the same names (the kill nemesis's "start");
// their process ("nemesis") tells them apart.
const (
	FMasterStart  = "start"
	FMasterStop   = "stop"
	FMasterStatus = "status"
)

// MasterMix weighs the three master ops among scheduled ops. Weights are
// relative (they need not sum to 1); all zero is the zero value, which
// means the default. Statuses are the reads the checker
// judges, so they should dominate; starts should outnumber stops so that
// most nodes want mastership most of the time and the lease moves when a
// stop hits the master.
type MasterMix struct {
	Status float64 `json:"status"`
	Start  float64 `json:"start"`
	Stop   float64 `json:"stop"`
}

// DefaultMasterMix is the mix a zero MasterMix stands for: 75% status, 20%
// start, 5% stop. At 50 ops/s on 5 nodes a stop reaches the master about
// every 2 s, while every node is started again within about half a second.
func DefaultMasterMix() MasterMix { return MasterMix{Status: 0.75, Start: 0.20, Stop: 0.05} }

// MasterOptions configures the master workload.
type MasterOptions struct {
	// Rate is the mean number of ops per second across all workers
	// (Maelstrom's --rate). Zero means no ops at all.
	Rate float64
	// Mix weighs status, start and stop. The zero value means
	// DefaultMasterMix.
	Mix MasterMix
	// LeaseMs is the master lease's length in milliseconds. The requests
	// carry no length, so it is the nodes' own (LEASE_MS): the harness
	// starts every node with LEASE_MAX_MS set to it and LEASE_MS the same
	// (unless the environment names a shorter one), and restarted nodes
	// under the kill nemesis with LEASE_BOOT_WAIT_MS too (NodeLeased).
	// Zero means the default, 1000.
	LeaseMs int64
}

// DefaultMasterLeaseMs is the master lease length a zero
// MasterOptions.LeaseMs stands for (the CLI's --lease-ms default).
const DefaultMasterLeaseMs = 1000

// withDefaults fills a zero mix.
func (o MasterOptions) withDefaults() MasterOptions {
	if o.Mix == (MasterMix{}) {
		o.Mix = DefaultMasterMix()
	}
	if o.LeaseMs == 0 {
		o.LeaseMs = DefaultMasterLeaseMs
	}
	return o
}

// Validate reports options NewMaster would refuse, after defaults apply.
func (o MasterOptions) Validate() error {
	o = o.withDefaults()
	var errs []error
	if !masterWeightOK(o.Rate) {
		errs = append(errs, fmt.Errorf("rate must be a finite number >= 0, got %v", o.Rate))
	}
	if o.LeaseMs < 1 {
		errs = append(errs, fmt.Errorf("lease length must be >= 1 ms, got %d", o.LeaseMs))
	}
	m := o.Mix
	for _, w := range []struct {
		name  string
		value float64
	}{{"status", m.Status}, {"start", m.Start}, {"stop", m.Stop}} {
		if !masterWeightOK(w.value) {
			errs = append(errs, fmt.Errorf("mix weight %s must be a finite number >= 0, got %v", w.name, w.value))
		}
	}
	return errors.Join(errs...)
}

// masterWeightOK accepts a rate or a mix weight: finite and >= 0.
func masterWeightOK(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// Master is the master-lease workload: workers send master_start,
// master_stop and master_status to their nodes at random; the checker
// finds two nodes that believed they were master at the same instant. See
// doc.go ("Master").
type Master struct {
	rng     *rand.Rand
	stagger workloads.Stagger
	// statusBelow and startBelow cut [0, 1) by the normalised mix: a draw
	// below statusBelow is a status, below startBelow a start, else a stop.
	statusBelow, startBelow float64
	leaseMs                 int64 // MasterOptions.LeaseMs
}

// NewMaster returns the master workload; seed fixes every random choice.
// A zero Mix takes the default. It panics on options that Validate
// rejects: the caller validates user input first.
func NewMaster(opts MasterOptions, seed int64) workloads.Workload {
	return newMaster(opts, seed)
}

func newMaster(opts MasterOptions, seed int64) *Master {
	if err := opts.Validate(); err != nil {
		panic("workloads.NewMaster: " + err.Error())
	}
	opts = opts.withDefaults()
	m := opts.Mix
	sum := m.Status + m.Start + m.Stop
	return &Master{rng: workloads.NewRand(seed), stagger: workloads.NewStagger(opts.Rate),
		statusBelow: m.Status / sum, startBelow: (m.Status + m.Start) / sum, leaseMs: opts.LeaseMs}
}

// Name is "master".
func (m *Master) Name() string { return "master" }

// LongestLeaseMs is MasterOptions.LeaseMs, the one length every master
// lease has (LeaseBounded).
func (m *Master) LongestLeaseMs() int64 { return m.leaseMs }

// NodeLeases marks the master workload's leases as the nodes' own length
// (NodeLeased): master_start names none.
func (m *Master) NodeLeases() {}

// Next returns an op when the stagger schedule has one due. The op goes to
// whichever node serves the worker (the harness's worker i mod n), so ops
// spread over the nodes as the workers do. Invoke values are null: the
// requests carry no fields.
func (m *Master) Next(now time.Duration, _ int) (workloads.Invocation, bool) {
	if !m.stagger.Due(now) {
		return workloads.Invocation{}, false
	}
	m.stagger.Fire(now, m.rng)
	r := m.rng.Float64()
	switch {
	case r < m.statusBelow:
		return workloads.Invocation{F: FMasterStatus}, true
	case r < m.startBelow:
		return workloads.Invocation{F: FMasterStart}, true
	}
	return workloads.Invocation{F: FMasterStop}, true
}

// Wake is when the next op is due.
func (m *Master) Wake() time.Duration { return m.stagger.NextAt() }

// Check runs CheckMaster.
func (m *Master) Check(ops []history.Op) workloads.Result {
	r := CheckMaster(ops)
	return workloads.Result{Valid: r.Valid, Details: r}
}

// Stats computes MasterStats for results.json from the checker's tenures.
func (m *Master) Stats(ops []history.Op, res workloads.Result, messages int) any {
	check, ok := res.Details.(MasterResult)
	if !ok {
		check = CheckMaster(ops)
	}
	return MasterStats(ops, check.Tenures, messages)
}

// The harness looks for these interfaces.
var (
	_ workloads.Workload      = (*Master)(nil)
	_ workloads.StatsReporter = (*Master)(nil)
	_ workloads.NodeLeased    = (*Master)(nil)
	_ workloads.Analyzer      = (*Master)(nil)
)

// FromParams builds the master workload from the CLI's settings: --rate
// and --lease-ms (the master lease's length).
func FromParams(p workloads.Params) (workloads.Workload, error) {
	o := MasterOptions{Rate: p.Rate, LeaseMs: p.LeaseMs}
	if p.LeaseMs < 1 {
		return nil, fmt.Errorf("--lease-ms must be >= 1 (got %d)", p.LeaseMs)
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("master workload: %w", err)
	}
	return NewMaster(o, p.Seed), nil
}
