package workloads

import (
	"encoding/json"
	"time"

	"chunklease/history"
)

// Workload is one Maelstrom-style workload: a pure generator of client
// calls with explicit time, the wire form of those calls, and a checker.
// The harness drives it in real time; the lease simulation drives the same
// code in virtual time. Implementations are not safe for concurrent use:
// one scheduler owns a Workload.
type Workload interface {
	// Name is the workload name used by -w and the store path ("lease", "echo").
	Name() string
	// Next asks for an operation for the free worker `worker` at time `now`
	// (time since the test started). ok=false means nothing is due for this
	// worker now; ask again at Wake().
	Next(now time.Duration, worker int) (inv Invocation, ok bool)
	// Wake is the earliest time at which Next may return an operation for
	// some free worker. The scheduler sleeps until then or until a
	// completion arrives, whichever is first.
	Wake() time.Duration
	// Request renders an invocation as the Maelstrom request body, with
	// "type" and the operation's fields; the client adds msg_id.
	Request(inv Invocation) json.RawMessage
	// Complete turns the node's reply body (nil when the client timed out)
	// into the completion op and lets the generator learn the outcome.
	Complete(now time.Duration, worker int, inv Invocation, reply json.RawMessage) Completion
	// Check judges a whole history (client and nemesis ops, in index order).
	Check(ops []history.Op) Result
}

// Invocation is what a generator asks a client to do.
type Invocation struct {
	F     string          // history "f": grant, renew, check, release, echo
	Value json.RawMessage // history "value" of the invoke op
}

// Completion is how a client op ended.
type Completion struct {
	Type  string          // "ok", "fail" or "info"
	Value json.RawMessage // history "value" of the completion op
	Error string          // why it failed or is unknown; empty on ok
}

// Result is a checker's verdict. Details is rendered into results.json
// under the workload's name.
type Result struct {
	Valid   bool
	Details any
}

// StatsReporter is implemented by workloads that add statistics to
// results.json (availability, latency, failover, messages per op). The
// harness calls Stats after checking, with the history, the checker's
// result (so nothing is checked twice) and the number of network messages
// it carried, and stores the value under "workload_stats".
type StatsReporter interface {
	Stats(ops []history.Op, res Result, messages int) any
}

// Finisher is implemented by workloads with a final phase, as
// Maelstrom's workloads with a final generator (broadcast, the counters)
// have: after the time limit the harness heals every fault, waits for
// recovery, and then invokes each of FinalOps once, in order, op i on
// worker i mod concurrency. The ops go through Request and Complete like
// any other and land in the history, so the checker judges them too.
// A workload without final ops has no final phase (Maelstrom's echo).
type Finisher interface {
	FinalOps() []Invocation
}

// Focuser is implemented by workloads judged in memory (without an
// Analyzer) whose checker names violations: Focus is the violation a
// picture should zoom in on first (the message diagram), nil for none.
type Focuser interface {
	Focus(ops []history.Op, res Result) *Focus
}

// LeaseBounded is implemented by workloads whose nodes hold leases of a
// known longest length. LongestLeaseMs is the longest lease any node may
// hold, in milliseconds: the harness passes it to nodes as LEASE_MAX_MS
// when it kills and restarts them, and a restarted node stays silent that
// long (LEASE_BOOT_WAIT_MS), so no lease can outlast its lost memory. For
// the lease workload it is the longest lease_ms a request asks for; for
// a NodeLeased workload it is the length the nodes are configured with.
type LeaseBounded interface {
	LongestLeaseMs() int64
}

// NodeLeased is implemented by LeaseBounded workloads whose leases have
// the nodes' own configured length (LEASE_MS) rather than one the
// requests carry: the master workload, whose master_start names no
// length. The harness then starts every node with LEASE_MAX_MS =
// LongestLeaseMs and LEASE_MS the same (unless the environment names a
// shorter LEASE_MS) in every run, with or without the kill nemesis, so the leases are as long as the workload says (a node left
// at its own default would hold 60 s leases) and, under kill, no longer
// than the restarted nodes' boot wait. NodeLeases only marks the
// interface.
type NodeLeased interface {
	LeaseBounded
	NodeLeases()
}

// LongestLeaseMs is w's longest lease, or 0 for a workload without
// leases.
func LongestLeaseMs(w Workload) int64 {
	if b, ok := w.(LeaseBounded); ok {
		return b.LongestLeaseMs()
	}
	return 0
}

// HasNodeLeases says whether w's leases have the nodes' configured
// length (NodeLeased).
func HasNodeLeases(w Workload) bool {
	_, ok := w.(NodeLeased)
	return ok
}
