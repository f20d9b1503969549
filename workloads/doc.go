// Package workloads holds what a test run does and how it is judged: the
// history format, Maelstrom-style workload generators (echo, the chunk
// lease and the master lease), their checkers, the statistics for results.json and the lease
// timeline picture. The harness drives a Workload in real time; the lease
// core's simulation drives the same code in virtual time.
//
// # History (history.jsonl)
//
// One JSON object a line, keys in this order:
//
//	{"index":0,"time":123456789,"process":3,"type":"invoke","f":"grant","node":"n1","value":{...}}
//	{"index":1,"time":125000000,"process":3,"type":"ok","f":"grant","node":"n1","value":{...},"error":"..."}
//
// index is dense from 0 (Writer assigns it in append order; NewWriter
// also keeps the ops for a simulation, NewStreamWriter keeps none, for the
// harness); time is
// nanoseconds since the test started (the caller's clock); process is a
// worker's integer or "nemesis"; type is invoke, ok, fail (definitely did
// not happen) or info (unknown); node and error are written only when
// set; value is written null when absent. A client op is an invoke and
// the next completion of the same process (PairOps). ReadHistory checks
// each line (dense index, time >= 0, known type, non-empty f) and names
// the line of the first defect; ScanHistory does the same op by op,
// without keeping them. Lines in the Writer's own subset (string values
// printable ASCII without escapes, integers, a value that is a scalar or
// a flat object of scalars) are decoded by hand, ten times faster than
// encoding/json; any other line falls back to encoding/json, whose
// meaning and errors are the reference (FuzzOpLine).
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
// # Echo
//
// Maelstrom's echo: {"type":"echo","echo":"Please echo N"}, N uniform in
// 0..127, history value the string. The reply must fit the closed echo_ok
// schema {type: "echo_ok", echo: any, msg_id?: int, in_reply_to: int}; an
// extra key or a wrong type is info naming the violation. The ok value is
// the whole reply body, as in Maelstrom. No op is idempotent. CheckEcho:
// every invoke must have an ok completion whose value's echo equals the
// invoked value as JSON; a timed-out, failed, unknown or unfinished echo
// makes the history invalid.
//
// # Lease generator
//
// K chunk servers "cs1".."csK" contend for C chunks "ch_1".."ch_C"
// (LeaseOptions). Requests and history values:
//
//	grant   {"type":"lease_grant","chunk_handle":c,"server":s,"lease_ms":L}   value {"chunk":c,"server":s,"lease_ms":L}
//	renew   {"type":"lease_renew",...same...}                                  value as grant
//	check   {"type":"lease_check","chunk_handle":c}                            value {"chunk":c}
//	release {"type":"lease_release","chunk_handle":c,"server":s,"token":T}     value {"chunk":c,"server":s,"token":T}
//
// Every grant and renew asks for its own lease_ms, uniform in
// [MinLeaseMs, LeaseMs] (MinLeaseMs 0 means LeaseMs/4, at least 1), so
// renewals and re-grants come both shorter and longer than the lease they
// extend; LeaseMs is the longest lease of the workload. A release carries
// a token always, except a plan-ending release of a server that never got
// one (only a node that omits tokens causes that; it answers error 12).
//
// An ok completion appends the reply's fields: grant primary,
// expires_in_ms and, when primary is the requesting server, token; renew
// new_expires_in_ms and token; check primary (null when the node reports
// null), remaining_ms and expired. A token missing from an ok grant to the
// requester or an ok renew is recorded as missing (the checker judges it);
// a grant naming another primary may carry the holder's token, which is
// ignored. Replies may carry extra keys; a wrong type name, a missing or
// ill-typed field (integers must be JSON integers, durations >= 0, a
// token 0 < token < 2^53), or a chunk_handle other than the one asked for
// is info. check is idempotent (a read), so its timeouts and errors are
// fail; grant, renew and release are not.
//
// The generator learns only from its own ok replies. A server believes it
// holds a chunk from an ok grant naming it primary (until invoke time +
// expires_in_ms) or an ok renew (until invoke time + new_expires_in_ms);
// the belief lasts until the latest end of all the leases it was told
// about (a shorter renewal does not shorten it). Each pair remembers the
// last token such a reply carried (a reply without one keeps the last).
// Each holding gets a random plan: renew 0..MaxRenewals times, then
// release it or abandon it (stop renewing, so it expires and another
// server can take over). Renewals and plan-ending releases go out at the
// half-life (reply time + (that reply's end - reply time)/2) on the first
// free worker, not limited by the rate. A renewal is a renew, or with
// probability 1/4 a re-grant: a grant by the holder for the same chunk,
// whose ok reply counts as the renewal (same plan) and whose failure
// stops renewing as a renew's does. A plan-ending release sends the pair's
// last token; a quarter of them are followed at once by a grant of the
// same pair (a server that hands its lease back and takes it again). A
// grant answered with another primary ends the belief; a failed or unknown
// grant changes nothing (an info grant never creates a belief); a failed
// or unknown renewal stops renewing and the belief lasts until its known
// end (no retry, so a fail storm adds at most one op per held pair to the
// rate); a release ends the belief when it is sent. Scheduled ops follow
// the stagger: grants half the time (half of those for a chunk another
// server is believed to hold, the rest for a random pair not held), checks
// of a random chunk 40%, releases of a pair the server does not hold 10%:
// they must change nothing, and send in random choice the pair's stale
// last token, a token another server got for the same chunk (right token,
// wrong server), or a random token in [1, 2^40) (also the fallback when
// the choice has no token to offer). At most one grant, renew or release
// is in flight per (server, chunk) pair; when a draw hits a busy pair the
// op becomes a check. Worker i is served by node i mod n (the harness's
// mapping), so renewals pass through different nodes.
//
// # Lease checker (CheckLease)
//
// Chunk by chunk (Jepsen's independent checking); nemesis ops pass
// through; info, fail and unfinished ops create no holding and no read.
//
//   - Holdings: every ok grant whose primary is its own requested server
//     holds [completion time, invoke time + expires_in_ms); every ok renew
//     holds [completion time, invoke time + new_expires_in_ms). Each
//     holding is one lease instance, named by its token. It is cut at the
//     invoke time of the first release by the same server on the same
//     chunk that carries a token >= that holding's token and was invoked
//     at or after the holding op's invoke, whatever that release's outcome
//     (ok, fail, info or none): a release gives back every instance of its
//     server up to its token (the contract's rule 6), so releasing a
//     renewal's token also ends the older lease it extended. A release
//     with a smaller token, or none, cuts nothing: a late release never
//     ends a newer lease. Empty holdings are dropped. A grant answered
//     with another primary is a read, not a holding.
//   - two-primaries: holdings of two different servers overlap,
//     max(starts) < min(ends), by even 1 ns; touching holdings do not.
//     Every overlapping pair is reported.
//   - Reads: every ok check over [invoke, completion] reports its primary
//     when expired is false and primary is not null, and no holder
//     otherwise; every ok grant answered with another primary reports that
//     primary. A holding covers a read when start <= read invoke and read
//     completion < end. read-wrong-holder: the read reported X while a
//     holding of another server covers it. read-no-holder: the read
//     reported no holder while some holding covers it. One violation per
//     read at most.
//   - Fencing, over every ok grant to the requester and ok renew (empty
//     holdings included): token-missing: it carries no token, or one
//     outside 0 < token < 2^53 (a token that is not an integer makes the
//     value undecodable: a problem, below). token-two-servers: one token
//     value carried by ops of two different servers (reported once per
//     token and other server). token-order: an op invoked strictly after
//     another op completed carries a token not larger than that op's (one
//     violation per later op): rule 3 for another server's op, and the
//     contract's "a renew or re-grant gets a new, larger one" for the same
//     server's.
//   - Remaining times, over the same ops: expires-out-of-range: the op was
//     told a time below 0, at or beyond 2^53, or longer than the lease_ms
//     its request asked for (the proposer's timer starts before it sends
//     propose, so no honest node can know more). The holding is built
//     from the time as told, saturating at the largest time, so an absurd
//     time lengthens it and its overlaps are reported too.
//   - A structural defect (a completion without an invoke, an ok value
//     without its fields, an unknown f) is listed in Problems and makes the
//     result invalid.
//
// Cost per chunk: sorting, then sweeps, O(n log n), except the overlap
// loop, which stops at the first holding that starts after the current
// one ends (linear in the pairs reported). The read and token-order
// sweeps keep the largest value (end, token) seen and the largest of any
// other server, so "largest of a server other than S" is O(1).
//
// LeaseResult carries per-chunk counts, every violation (kind, chunk,
// servers, op indices, interval, text) and the holdings (with their
// tokens). RouteLeasePair and CheckLeaseChunk are the same checker one
// chunk at a time: the chunk an op belongs to (its ok value's, else its
// invoke's; an op with none is a problem), and one chunk's ops judged
// alone; the problems of all chunks, sorted back into op order, are
// CheckLease's.
//
// # Reading a history back (ReadBack, Analyzer)
//
// The harness keeps no op in memory during a run; it judges history.jsonl
// read back from disk, in memory that does not grow with the history.
// ReadBack reads the file twice: first only the lines that mention
// "nemesis" (so every analysis knows the partitions and faults before the
// first client op, as each key's sub-history does in Jepsen's
// independent checker), then every line, as ReadHistory reads it,
// pairing client ops with PairStream: PairOps's pairs in PairOps's order
// (invoke order) and its problems, a completed pair held back only while
// an earlier invoke is still open (bounded by the client timeout, not by
// the run). A workload implementing Analyzer gets every pair and problem
// and then the facts (op count, first and last op time, the client ops'
// node names, the nemesis ops), and reaches the same verdict and figures
// as its in-memory Check and Stats:
//
//   - lease: each op goes to a spill file chosen by its chunk (FNV of
//     the name; one shard per 8 MiB of history, at most 1024), the shards
//     are checked on AnalysisEnv.Parallel goroutines, chunk by chunk in
//     natural order (CheckLeaseChunk), and what they found is merged:
//     totals, violations by kind, the earliest violations (by start, then
//     CheckLease's order), the first problems, the statistics (per-chunk
//     sums, tenure ends, the first grant after each heal), the timeline's
//     lanes (lanePicker keeps only the chunks that can still get one).
//     results.json gets a LeaseSummary (chunk count, totals, violations
//     by kind, the earliest SummaryViolations violations, the first
//     SummaryProblems problems, the detail file's name): kilobytes
//     whatever the run's length. LeaseDetailsFile (lease-details.jsonl)
//     has one line per chunk in natural order, {"chunk", "counts",
//     "holdings", "violations"}, CheckLease's, then one {"problem"} line
//     per problem. Memory: one shard per goroutine and the timeline's
//     few hundred chunks.
//   - master: the checker keeps each node's beliefs and stops (not the
//     ops); the statistics are sums; MasterFaults reads the nemesis ops.
//   - echo: each pair is judged as it comes.
//
// A workload without Analyzer is judged by the harness from the history
// held in memory.
//
// # Master generator
//
// The master lease (contract section 1): a started node keeps trying to
// hold one cluster-wide lease for itself. NewMaster(MasterOptions{Rate,
// Mix, LeaseMs}, seed) draws each stagger op from the mix, by default 75%
// status, 20% start, 5% stop (MasterMix weights, relative; the zero mix
// is the default; LeaseMs is the lease length, see "Final phase and lease
// bound"): statuses are what the checker judges, and starts outnumber
// stops so that most nodes want mastership most of the time while a stop
// still reaches the master every few seconds and makes the lease move.
// The op goes to the worker's node (the harness's worker i mod n); the
// generator learns nothing from replies. Requests and history:
//
//	start   {"type":"master_start"}    invoke value null, ok value null
//	stop    {"type":"master_stop"}     invoke value null, ok value null
//	status  {"type":"master_status"}   invoke value null, ok value {"is_master":b,"master":m,"remaining_ms":r}
//
// with node set to the answering node by the harness. Replies must fit
// closed schemas: {type: "master_<f>_ok", msg_id?: int, in_reply_to: int}
// for start and stop, and {type: "master_status_ok", is_master: bool,
// master: string | null, remaining_ms: int >= 0, msg_id?: int,
// in_reply_to: int} for status (master, when a string, is not empty); an
// extra key or a wrong type is info naming the schema and the violation.
// status is a read (idempotent): a timeout or any error is fail. start and
// stop are not: a timeout is info, an error fail or info by its code.
//
// # Master checker (CheckMaster)
//
//   - Beliefs: a node that answered status with is_master true and
//     remaining_ms r believes it is master during [completion time,
//     invoke time + r). The node is the op's node; every ok status and
//     every stop must name one.
//   - A stop does not shorten a belief: the status told a client the node
//     is master for r ms and the client may act on it, so a node gives its
//     lease back only once the masterships it announced have run out (a
//     stop that reaches a paused node late must not end one early).
//     Empty beliefs (reply after invoke + r) are dropped.
//   - two-masters: beliefs of two different nodes overlap, max(starts) <
//     min(ends). Every overlapping pair is reported (kind, nodes, the
//     statuses' invoke and completion indices, the overlap, a text);
//     intervals that only touch do not overlap. One node's own beliefs
//     may overlap freely.
//   - A structural defect (a completion without an invoke, an unknown f,
//     an ok status value without the exact fields and types above, an ok
//     status or a stop without node, a node that changes between invoke
//     and completion) is listed in Problems and makes the result invalid.
//   - Anomalies, reported without changing the verdict: is_master true
//     naming another master or null, and is_master false with
//     remaining_ms > 0 (the contract says 0).
//
// MasterResult carries per-f counts, the is_master answers, the number
// of beliefs (and empty ones), the violations and the tenures: each
// node's beliefs that overlap or touch, merged, in start order, each
// naming the first stop sent to its node while it ran, if one was.
//
// # Master statistics (MasterStats)
//
// The generic statistics below plus, over the run (first op to last op):
//
//   - mastership: the time some node believed it was master (the union of
//     the tenures) over the run's duration, overall and split into the
//     time outside and inside faults (fraction null when a stretch is
//     empty); the time from the run's start to the first master; master
//     changes (consecutive tenures of different nodes); tenures; mastered
//     time per node.
//   - failover: a tenure end (the end of a node's last belief before a gap,
//     before the run's end) followed by another node's tenure gives a
//     failover time from that end to that tenure's start, counted inside
//     faults when a fault was in force at some instant of that gap, else
//     outside; nearest-rank percentiles in ms of each, how many followed a
//     stop, and how many ends were retaken by the same node or never.
//   - faults (MasterFaults): start-partition/stop-partition,
//     kill/start and pause/resume nemesis ops, one stretch per kind while
//     some node of that kind is affected. Ops name nodes in their value (a
//     node id or a list; only ids that client ops name count, so targets
//     such as "majority" or "all" name none); a begin with no node affects
//     an unknown node, an end with no node ends every node of its kind. A
//     nemesis op that directly follows one with the same f is its
//     completion: a fault runs from the invoke that begins it to the
//     completion that ends it.
//
// # Statistics (StatsReporter)
//
// ComputeStats: partitions run from a start-partition nemesis op to the
// next stop-partition op (when both an invoke and a completion are
// written, the later, the completion, counts; an unhealed partition runs
// to the end). FaultIntervals are the times some fault was in force: a
// partition, a node killed (from the completion of a kill that hit nodes
// to the completion of the next start) or paused (to the next resume),
// merged where they overlap. Availability is ok completions over
// invocations per f and overall, for all ops and split by whether the op
// was invoked inside a partition and inside a fault (1 when nothing was
// invoked, as Maelstrom); latency percentiles (nearest rank, ms) of ok
// ops per f (exact while an f has at most 2^20 samples, 8 MiB; past that
// from a log histogram, within 0.05 %, count and max exact, so memory
// stays bounded); messages per client invocation. Each figure is a sum
// over ops or chunks, so a history read back op by op gives the same
// statistics (statsBuilder, leaseStatsAcc). LeaseStats adds failover:
// for each chunk, a tenure ends at the end of a holding that no other
// holding of the same server covers; its failover time runs to the start
// of the next holding of the chunk when that holding is another server's
// (grant or renew); count, nearest-rank median and max in ms, plus how
// many ends were retaken by the same server or never retaken; overall and
// split by whether the tenure ended inside a fault. It counts holdings
// and grants that began inside faults, and for each heal (Heals: a
// stop-partition that healed a partition, a start or resume that brought
// nodes back) the time to the completion of the first successful grant
// invoked after it.
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
// # Reports (Reporter)
//
// The lease workload writes lease-timeline.html: a self-contained page
// (inline SVG, no network, well-formed XML) with one lane per chunk, a bar
// per holding coloured by server, partitions shaded across all lanes and
// violations marked in red; hovering shows server, interval and op
// indices. The page is drawn from a TimelineInput, which needs only the
// chunks that get a lane (TimelineInputOf gathers it from a history in
// memory, the lease analysis chunk by chunk).
//
// # Tests
//
//   - history_test.go: line format and key order, dense indices, the
//     reader's line-numbered errors, concurrent appends.
//   - errors_test.go: the whole error table, idempotent ops, timeouts.
//   - echo_test.go: stagger timing, closed schema, the echo checker and its
//     negative controls.
//   - lease_check_test.go: hand-built valid histories and a negative
//     control per violation kind, release cutting up to its token (a node
//     that ends a newer instance is caught; the cut held to a brute-force
//     version on random histories), late releases, overlaps of 1 ms and
//     1 ns, reads ending 1 ns before and at a holding's end.
//   - lease_fencing_test.go: a valid history with growing tokens and a
//     negative control per fencing kind; the read and token-order sweeps
//     held to brute-force versions on random chunks.
//   - lease_learn_test.go: the generator's learning rules, call by call:
//     tokens, re-grants, stray release tokens, shorter renewals.
//   - lease_gen_test.go, sim_test.go: the generator driven in virtual time
//     against an ideal lease service (valid) and broken ones (invalid:
//     blind grants, shrinking renewals, a release that ignores its server,
//     tokens per server, no tokens): determinism, one op per pair in
//     flight, half-life renewals and re-grants, the fail storm bound,
//     lease_ms variety, replies with and without tokens, wire encodings
//     against encoding/json.
//   - flatjson_test.go: FuzzFlatDecoders holds the fast decoders to
//     encoding/json.
//   - stats_test.go, timeline_test.go: statistics (fault intervals, heals,
//     the inside/outside splits, heal to grant, the final ops) and the
//     picture.
//   - master_test.go: the master generator's stagger and mix, options,
//     requests, closed schemas, errors and timeouts.
//   - master_check_test.go: hand-built master histories: a touching
//     handover is valid; negative controls: overlaps of 1 ms and of 1 ns,
//     a node that gave its lease away on stop inside an announced
//     mastership; structural problems, anomalies.
//   - master_stats_test.go: faults of every kind, and every figure worked
//     out by hand for one run.
//   - master_sim_test.go: the master generator in virtual time, rotating
//     through workers as the harness does, against an ideal master service
//     with lost and failed replies and outages (valid, figures in bounds)
//     and two broken ones (a node saying is_master after it lost the
//     lease, a node always claiming it: invalid); determinism.
//   - bench_test.go: one simulated schedule, the checker, one op.
//   - opline_test.go: FuzzOpLine holds the hand-written line decoder to
//     encoding/json.
//   - analysis_test.go: the lease analysis of simulated histories (a
//     correct service and four broken ones, with partitions, kills and
//     pauses; one with malformed ops), split over 41 shards on two
//     goroutines, against CheckLease and LeaseStats: summary, statistics,
//     every line of the detail file, the timeline page byte for byte, the
//     focus; the master and echo analyses against CheckMaster,
//     MasterStats, CheckEcho and ComputeStats; ReadBack's line errors.
//   - bounded_test.go: the lane picker and the earliest violations, fed
//     in any order and merged, against the choice made from a whole
//     result; PairStream against the plain PairOps loop on histories
//     that break the process discipline; sampleSet exact under its limit
//     and within 2^-11 past it.
//
// Randomized tests print their seed and take it back with -seed.
package workloads
