// Package workloads is what every workload shares: the small interfaces
// a workload implements for the harness (a generator of client calls with
// explicit time, the wire form of those calls, a checker; optionally
// statistics, final ops, a lease bound and a streamed analysis), and the
// pieces of analysis that are not any one workload's: how a reply maps to
// ok, fail or info, Maelstrom's stagger schedule, the generic statistics
// (availability, latency percentiles in bounded memory, messages per op),
// the fault periods read from the nemesis ops, time spans, natural
// order. It holds no workload; each lives in its own sub-package (echo,
// lease, master, leasebench), and package workloadtest helps their tests.
// It neither runs nor draws anything: the harness drives a Workload in
// real time, the lease core's simulation in virtual time, and package
// report draws what the analyses found.
//
// # A workload (workload.go)
//
// Workload is Name, Next(now, worker), Wake(), Request(inv),
// Complete(now, worker, inv, reply) and Check(history). Optional
// interfaces the harness looks for: StatsReporter (figures for
// results.json), Finisher (final ops after every fault is healed),
// LeaseBounded and NodeLeased (the lease length nodes must be given),
// Focuser (the violation a picture zooms in on, for workloads judged in
// memory) and Analyzer (analysis.go: a history read back op by op, in
// memory that does not grow with the run, reaching the same verdict and
// figures as Check and Stats). Params (params.go) are the CLI's settings
// a workload is built from (each sub-package's FromParams); adding a
// workload is docs/adding-a-workload.md.
//
// # Completions (errors.go)
//
// Completion types follow Maelstrom (ClassifyError, ClassifyTimeout):
// definite error codes 1, 10, 11, 12, 14, 20, 21, 22, 30 give fail; codes
// 0, 13, any other code, codes >= 1000, a missing code and non-integers
// such as 11.0 or "11" give info; an op in the workload's idempotent set
// fails on any error and on a timeout; other timeouts are info. The error
// is recorded as "name: text" ("temporarily-unavailable: no majority
// answered"), "net-timeout" for a timeout, "unknown: text (code X)" for an
// unknown code, and "malformed-rpc-response: ..." (info) for a reply that
// breaks its schema. Failed and unknown completions carry the invoke's
// value.
//
// # Scheduling
//
// Every workload uses Maelstrom's stagger: one schedule shared by all
// workers, the first op due at time 0, each next op due a uniform random
// gap in [0, 2/rate) after the previous one was actually emitted (a late
// op pushes the schedule back, no bursts). Rate 0 means no scheduled ops;
// Wake then returns Never. Next(now, worker) returns ok=false only when
// nothing is due at now, and then Wake() > now; Wake may be in the past
// when something is due but every worker was busy. All randomness comes
// from the seed passed to the constructor: the same seed, options and
// sequence of calls give the same ops.
//
// # Statistics (StatsReporter)
//
// ComputeStats: partitions run from a start-partition nemesis op to the
// next stop-partition op (when both an invoke and a completion are
// written, the later, the completion, counts; an unhealed partition runs
// to the end). FaultIntervals are the times some fault was in force: a
// partition, a node killed (from the completion of a kill that hit nodes
// to the completion of the next start) or paused (to the next resume),
// or a packet fault on some node's links (from a start-packet that named
// nodes to the next stop-packet), merged where they overlap. Availability is ok completions over
// invocations per f and overall, for all ops and split by whether the op
// was invoked inside a partition and inside a fault (1 when nothing was
// invoked, as Maelstrom); latency percentiles (nearest rank, ms) of ok
// ops per f (exact while an f has at most 2^20 samples, 8 MiB; past that
// from a log histogram, within 0.05 %, count and max exact, so memory
// stays bounded); messages per client invocation. Each figure is a sum
// over ops or chunks, so a history read back op by op gives the same
// statistics (StatsBuilder). The lease and master workloads add their
// own figures (failover, recovery, mastership) in their packages.
//
// # Final phase and lease bound
//
// A Finisher's FinalOps run once each after the harness healed every
// fault and waited for recovery (the lease workload: one check per
// chunk). A LeaseBounded workload's LongestLeaseMs is what the harness
// gives nodes as LEASE_MAX_MS (and LEASE_MS, unless the environment names
// one no longer) and restarted nodes as LEASE_BOOT_WAIT_MS under the kill
// nemesis (the lease workload: LeaseOptions.LeaseMs). A NodeLeased
// workload's leases have the nodes' own length, LEASE_MS, since its
// requests carry none (the master workload: MasterOptions.LeaseMs, the
// CLI's --lease-ms, default 1000); the harness gives its nodes
// LEASE_MAX_MS and LEASE_MS in every run, with or without kill, so the
// leases are the workload's length and never outlast a boot wait. The
// master workload has no final phase.
//
// # Tests
//
// errors_test.go (the whole error table, idempotent ops, timeouts),
// stats_test.go (partitions, fault intervals, heals, availability split
// inside and outside partitions), faults_test.go (fault periods and the
// nodes they hit, grudges described), samples_test.go (SampleSet exact
// under its limit and within 2^-11 past it). The workloads' own tests
// are in their packages. Randomized tests print their seed and take it
// back with -seed.
package workloads
