// Package leasebench is the lease benchmark workload (-w lease-bench).
//
// It measures the cost of each lease op alone, uncontended, as etcd's
// `benchmark` measures one request type at a time with a fixed number of
// requests and clients.
//
// Worker w is chunk server cs<w+1> and owns the chunks ch_k with
// k-1 ≡ w (mod workers): no two workers touch one chunk, so nothing
// contends and every op takes the protocol's common path. The plan is a
// list of rounds; a round gives each worker at most one pass over its
// chunks, and no worker starts round r+1 before every op of round r has
// completed, so a round is a phase of one op type only:
//
//	grant    (measured grant pass, release pass) repeated: grants on free chunks
//	renew    grant pass, then renew passes: renews by the holder (fast path)
//	check    grant pass, then check passes: checks of held chunks
//	release  (grant pass, measured release pass) repeated: releases by token
//	mixed    per chunk grant, renew, check, release in turn; no barriers,
//	         so the workers are at different ops at once; everything measured
//
// Ops measured: the ops of the benchmarked type (all of them for mixed),
// BenchOps in total, spread evenly over the workers; the other ops warm up
// or reset the chunks and are never measured. Every grant and renew asks
// for LeaseMs, which must outlast the run. Releases carry the token of the
// chunk's latest ok grant or renew. The history is judged by the lease
// checker, so a benchmark run is also a safety run. LeaseBenchSummary
// computes the figures from the history alone.
//
// It reuses the lease workload's calls, reply checks and checker
// (lease.Call, lease.CheckLease) and is judged in memory (no streamed
// analysis: a benchmark run is short). scripts/bench.sh runs it and
// scripts/benchreport turns the histories into the table of docs/performance.md.
//
// Tests: leasebench_test.go (the plans and their rounds, against the
// ideal lease service of package workloadtest; the figures of
// hand-built histories).
package leasebench
