package lease_test

import (
	"encoding/json"
	"fmt"
	"time"

	"chunklease/history"
	leasewl "chunklease/workloads/lease"
)

// Properties the simulation checks beyond the contract's checker, because
// they are promises of this node, stated in the README.

// fenced returns the checker's violations less the fencing ones when the
// schedule left the fencing guarantee (doc.go "Fencing tokens"), and
// whether it did. Tokens keep their order across restarts when the nodes'
// wall-clock estimates stayed within the bound (any two within M - L,
// measured over the run: skew and drift), or when every restarted acceptor
// recovered before it served (the recovery guard). A schedule with
// neither, where a restarted acceptor served on a floor its wall clock
// cannot vouch for, is outside the promise: its fencing violations are
// not counted (the beyond-the-bound control asserts them anyway).
func (w *world) fenced(vs []leasewl.Violation) ([]leasewl.Violation, bool) {
	boundMs := w.sc.leaseMs - w.sc.leaseMs/4 // the boot wait M less L = M/4
	within := w.sc.wallClock && w.offMax-w.offMin < time.Duration(boundMs)*time.Millisecond
	if w.sc.assertFencing || w.restarts == 0 || within || !w.unrecovered {
		return vs, false
	}
	kept := vs[:0:0]
	for _, v := range vs {
		if v.Kind != leasewl.TokenOrder && v.Kind != leasewl.TokenTwoServers {
			kept = append(kept, v)
		}
	}
	return kept, true
}

// readValue is the part of a check's or a grant's ok value that names a
// holder and its remaining time.
type readValue struct {
	Chunk       string  `json:"chunk"`
	Server      string  `json:"server"`
	Primary     *string `json:"primary"`
	RemainingMs *int64  `json:"remaining_ms"`
	ExpiresInMs *int64  `json:"expires_in_ms"`
	Expired     *bool   `json:"expired"`
}

// checkProtectedPromise verifies what a check's remaining_ms (and a
// grant's expires_in_ms when it names another primary) promises: counted
// from the reply on the client's own clock (scaleBelief), no other server
// is newly granted the chunk within that time, unless the holder released
// meanwhile. The promise is tight: a majority that grants another server
// includes an acceptor that reported at least the proven time, and keeps
// it live for that long stretched by the drift factor, which covers every
// clock within rho (the proposer's, counting from its read, and the
// client's). So the bound allows only one rho of slack and a millisecond
// of rounding, and with clients slower than rho by what the drift margin
// covers, a check that leaves the margin out breaks it.
func checkProtectedPromise(ops []history.Op, holdings []leasewl.Holding, driftPPM int64) []string {
	pairs, _ := history.PairOps(ops)
	releases := map[string][]int64{} // chunk/server -> release invoke times
	for _, p := range pairs {
		if p.Invoke.F == leasewl.FRelease {
			var v readValue
			_ = json.Unmarshal(p.Invoke.Value, &v)
			releases[v.Chunk+"/"+v.Server] = append(releases[v.Chunk+"/"+v.Server], p.Invoke.Time)
		}
	}
	var bad []string
	for _, p := range pairs {
		holder, chunk, until, ok := promisedHolder(p, driftPPM)
		if !ok {
			continue
		}
		for _, h := range holdings {
			if h.Chunk != chunk || h.Server == holder || h.StartNs <= p.Completion.Time || h.StartNs >= until {
				continue
			}
			if releasedBetween(releases[chunk+"/"+holder], p.Invoke.Time-int64(3*clientTimeout), h.StartNs) {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s (ops %d-%d) promised %s protected until %.3f ms, but %s was granted it at %.3f ms (%s ops %d-%d)",
				p.Invoke.F, p.Invoke.Index, p.Completion.Index, holder, float64(until)/1e6, h.Server,
				float64(h.StartNs)/1e6, h.F, h.InvokeIndex, h.CompletionIndex))
		}
	}
	return bad
}

// promisedHolder extracts from an ok check or another-primary grant the
// holder it named and the time until which it promised it protected (the
// reply's time plus the remaining time the client believes), shortened by
// one rho and a millisecond.
func promisedHolder(p history.Pair, driftPPM int64) (holder, chunk string, until int64, ok bool) {
	if p.Completion == nil || p.Completion.Type != history.OK {
		return "", "", 0, false
	}
	var v readValue
	if json.Unmarshal(p.Completion.Value, &v) != nil || v.Primary == nil {
		return "", "", 0, false
	}
	var ms int64
	switch {
	case p.Invoke.F == leasewl.FCheck && v.Expired != nil && !*v.Expired && v.RemainingMs != nil:
		ms = *v.RemainingMs
	case p.Invoke.F == leasewl.FGrant && *v.Primary != v.Server && v.ExpiresInMs != nil:
		ms = *v.ExpiresInMs
	default:
		return "", "", 0, false
	}
	d := time.Duration(ms) * time.Millisecond
	d -= d*time.Duration(driftPPM)/1_000_000 + time.Millisecond
	return *v.Primary, v.Chunk, p.Completion.Time + int64(d), d > 0
}

func releasedBetween(times []int64, from, to int64) bool {
	for _, t := range times {
		if t >= from && t <= to {
			return true
		}
	}
	return false
}
