package lease

import (
	"chunklease/workloads"
)

// The lease workload's final phase and lease bound (workloads.Finisher
// and LeaseBounded). It lives in its own file beside the generator
// (gen.go) and only builds calls in the generator's existing shape.

// FinalOps checks once every chunk the generator ever sent a grant or
// renew for, in natural order (ch_1 first): after the harness healed
// every fault and waited for recovery, each check shows whether the
// service answers again, and the checker judges what it reports like any
// other check. A chunk nobody ever asked to hold has no holding a read of
// it could contradict, so reading it would tell the checker nothing: at
// 100 000 chunks a long run asks for most of them, a short one for few.
func (l *Lease) FinalOps() []workloads.Invocation {
	var ops []workloads.Invocation
	for c, chunk := range l.chunkNames {
		if l.granted[c/64]&(1<<(c%64)) != 0 {
			ops = append(ops, leaseCall{f: FCheck, chunk: chunk}.invocation())
		}
	}
	return ops
}

// LongestLeaseMs is LeaseOptions.LeaseMs: no grant or renew asks for more.
func (l *Lease) LongestLeaseMs() int64 { return l.opts.LeaseMs }
