package lease

import (
	"slices"

	"chunklease/history"
	"chunklease/workloads"
)

// (a LeaseResult), for pictures that zoom in on it.
func FirstViolation(details any) (Violation, bool) {
	lr, ok := details.(LeaseResult)
	if p, isPtr := details.(*LeaseResult); isPtr && p != nil {
		lr, ok = *p, true
	}
	if !ok || len(lr.Violations) == 0 {
		return Violation{}, false
	}
	first := lr.Violations[0]
	for _, v := range lr.Violations[1:] {
		if v.StartNs < first.StartNs {
			first = v
		}
	}
	return first, true
}

// FocusOf is the earliest violation in the lease checker's details
// (CheckLease's result) and the span of the ops it names, read from a
// history held in memory; nil without violations.
func FocusOf(ops []history.Op, checker any) *workloads.Focus {
	v, ok := FirstViolation(checker)
	if !ok {
		return nil
	}
	f := &workloads.Focus{Kind: v.Kind, Key: v.Chunk, StartNs: v.StartNs, FromNs: v.StartNs, ToNs: v.EndNs}
	for _, op := range ops {
		if slices.Contains(v.Ops, op.Index) {
			f.FromNs, f.ToNs = min(f.FromNs, op.Time), max(f.ToNs, op.Time)
		}
	}
	pairs, _ := history.PairOps(ops)
	for i := 0; i+1 < len(v.Ops); i += 2 {
		for _, p := range pairs {
			if p.Invoke.Index == v.Ops[i] {
				f.Ops = append(f.Ops, focusOp(p))
			}
		}
	}
	return f
}
