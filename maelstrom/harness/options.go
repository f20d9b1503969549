package harness

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"chunklease/maelstrom/nemesis"
	"chunklease/workloads"
)

// Options is one test run, as the CLI parsed it.
type Options struct {
	Workload workloads.Workload // owned by the run: one goroutine drives it
	Nodes    []string           // node ids in CLI order ("n0".. with --node-count)
	// Network is the nodes and the network between them (package simnet:
	// Maelstrom's process model over a simulated network).
	Network Network

	TimeLimit       time.Duration  // no op is invoked after first op + TimeLimit
	Concurrency     int            // client workers; worker i talks to Nodes[i % n]
	Faults          nemesis.Faults // --nemesis partition,kill,pause,clock,packet
	NemesisInterval time.Duration  // mean gap between nemesis ops of each package
	// RecoveryTime is how long the final phase waits after healing every
	// fault before the workload's final ops; zero means DefaultRecoveryTime
	// of the workload's longest lease.
	RecoveryTime time.Duration
	// KillWithoutBootWait restarts killed nodes without LEASE_BOOT_WAIT_MS:
	// the negative control of the kill nemesis, which lets a restarted
	// acceptor forget the leases it accepted while they still run.
	KillWithoutBootWait bool
	// ClockDriftPPM and ClockMaxOffsetMs, when not nil, replace the clock
	// nemesis's bounds (--clock-drift-ppm, --clock-max-offset-ms): every
	// rate it draws is within 1 +- ClockDriftPPM/1e6, every offset within
	// +-ClockMaxOffsetMs. By default they are the nodes' own bounds
	// (clockBounds); beyond them a run is the clock nemesis's negative
	// control, which the checkers must catch.
	ClockDriftPPM    *int64
	ClockMaxOffsetMs *int64
	// AvailabilityMin, when set, is --availability: the least ok fraction
	// of client ops for a valid run (1 for "total"); nil means any.
	AvailabilityMin *float64

	Seed     uint64 // fixes latencies, nemesis targets, grudges and times
	StoreDir string // runs go to <StoreDir>/<workload>/<timestamp>/

	Command []string // the command line, recorded in results.json
	Config  any      // the parsed flags, recorded in results.json

	Stdout io.Writer // start banner and final summary
	Stderr io.Writer // warnings, mirrored node stderr, progress line on a terminal
}

// validate reports every problem with the options at once.
func (o *Options) validate() error {
	var errs []error
	if o.Workload == nil {
		errs = append(errs, errors.New("no workload"))
	}
	if o.Network == nil {
		errs = append(errs, errors.New("no network"))
	} else {
		for _, f := range nemesis.KnownFaults {
			if o.Faults.Has(f) && !o.Network.Supports(f) {
				errs = append(errs, fmt.Errorf("--nemesis %s: the %s network cannot apply %s faults", f, o.Network.Name(), f))
			}
		}
	}
	errs = append(errs, validateNodes(o.Nodes)...)
	if o.TimeLimit <= 0 {
		errs = append(errs, fmt.Errorf("--time-limit must be > 0, got %v", o.TimeLimit))
	}
	if o.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("--concurrency must be >= 1, got %d", o.Concurrency))
	}
	if o.Faults.Any() && o.NemesisInterval <= 0 {
		errs = append(errs, fmt.Errorf("--nemesis-interval must be > 0, got %v", o.NemesisInterval))
	}
	if o.RecoveryTime < 0 {
		errs = append(errs, fmt.Errorf("--recovery-time must be >= 0, got %v", o.RecoveryTime))
	}
	if o.AvailabilityMin != nil && (*o.AvailabilityMin < 0 || *o.AvailabilityMin > 1) {
		errs = append(errs, fmt.Errorf("--availability must be total or a number in [0, 1], got %v", *o.AvailabilityMin))
	}
	if o.StoreDir == "" {
		errs = append(errs, errors.New("no store directory"))
	}
	errs = append(errs, o.validateClock()...)
	return errors.Join(errs...)
}

// validateClock checks the clock nemesis's bounds, and the drift bound
// the nodes will run with.
func (o *Options) validateClock() []error {
	var errs []error
	if !o.Faults.Clock {
		if o.ClockDriftPPM != nil {
			errs = append(errs, errors.New("--clock-drift-ppm bounds the clock nemesis: it needs clock in --nemesis"))
		}
		if o.ClockMaxOffsetMs != nil {
			errs = append(errs, errors.New("--clock-max-offset-ms bounds the clock nemesis: it needs clock in --nemesis"))
		}
		return errs
	}
	if v := o.ClockDriftPPM; v != nil && (*v < 0 || *v >= 1_000_000) {
		errs = append(errs, fmt.Errorf("--clock-drift-ppm must be in 0..999999 (a rate stays above 0), got %d", *v))
	}
	if v := o.ClockMaxOffsetMs; v != nil && (*v < 0 || *v > maxClockOffsetMs) {
		errs = append(errs, fmt.Errorf("--clock-max-offset-ms must be in 0..%d (about 10 years), got %d", int64(maxClockOffsetMs), *v))
	}
	if _, err := nodeDriftPPM(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// validateNodes rejects empty, duplicate and client-like node ids: a
// name starting with 'c' would be treated as a client by the network
// (zero latency, never partitioned), as in Maelstrom.
func validateNodes(nodes []string) []error {
	if len(nodes) == 0 {
		return []error{errors.New("no nodes: use --node-count N or --nodes n1,n2,...")}
	}
	var errs []error
	seen := map[string]bool{}
	for _, id := range nodes {
		switch {
		case id == "":
			errs = append(errs, errors.New("empty node id"))
		case strings.HasPrefix(id, "c"):
			errs = append(errs, fmt.Errorf("node id %q starts with 'c', which marks clients (zero latency, never partitioned): choose another name", id))
		case seen[id]:
			errs = append(errs, fmt.Errorf("node id %q given twice", id))
		}
		seen[id] = true
	}
	return errs
}

// DefaultRecoveryTime is the final phase's wait when --recovery-time is
// not given: twice the workload's longest lease, at least 1 s. A node
// restarted by the final start stays silent for about one longest lease
// (its boot wait), and leases granted before the heal run out within
// another; Maelstrom waits a fixed 10 s, which suits its workloads but
// would dwarf a test of 1 s leases.
func DefaultRecoveryTime(longestLeaseMs int64) time.Duration {
	return max(time.Second, 2*time.Duration(longestLeaseMs)*time.Millisecond)
}

// WorkloadSeed derives the workload's seed from the run's seed, so that
// the workload's choices do not correlate with the network's.
func WorkloadSeed(seed uint64) int64 {
	return int64(StreamSeed(seed, 4) >> 1)
}

// StreamSeed derives the seed of one of the run's independent random
// streams (splitmix64 of seed + stream): 1 the network's (latency
// draws), 2 partition shapes and times, 3 grudges, 4 the workload
// (WorkloadSeed), 5 the process faults' schedule, 6 the nodes they hit,
// 7 the clock faults' schedule, 8 their nodes and settings, 9 the packet
// faults' schedule and settings, 10 the nodes they hit.
func StreamSeed(seed, stream uint64) uint64 {
	z := seed + stream*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
