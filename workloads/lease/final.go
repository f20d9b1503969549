package lease

import (
	"chunklease/workloads"
)

// The lease workload's final phase and lease bound (workload.go's
// Finisher and LeaseBounded). It lives in its own file beside the
// generator (lease_gen.go) and only builds calls in the generator's
// existing shape.

// FinalOps checks every chunk once, ch_1 first: after the harness healed
// every fault and waited for recovery, each check shows whether the
// service answers again, and the checker judges what it reports like any
// other check.
func (l *Lease) FinalOps() []workloads.Invocation {
	ops := make([]workloads.Invocation, 0, len(l.chunkNames))
	for _, chunk := range l.chunkNames {
		ops = append(ops, leaseCall{f: FCheck, chunk: chunk}.invocation())
	}
	return ops
}

// LongestLeaseMs is LeaseOptions.LeaseMs: no grant or renew asks for more.
func (l *Lease) LongestLeaseMs() int64 { return l.opts.LeaseMs }
