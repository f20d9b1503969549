// Package workloads holds what a test run does and how it is judged: the
// history format, Maelstrom-style workload generators (echo and the chunk
// lease), their checkers, the statistics for results.json and the lease
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
// index is dense from 0 (Writer assigns it in append order); time is
// nanoseconds since the test started (the caller's clock); process is a
// worker's integer or "nemesis"; type is invoke, ok, fail (definitely did
// not happen) or info (unknown); node and error are written only when
// set; value is written null when absent. A client op is an invoke and
// the next completion of the same process (PairOps). ReadHistory checks
// each line (dense index, time >= 0, known type, non-empty f) and names
// the line of the first defect.
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
// Both workloads use Maelstrom's stagger: one schedule shared by all
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
//	release {"type":"lease_release","chunk_handle":c,"server":s}               value {"chunk":c,"server":s}
//
// An ok completion appends the reply's fields: grant primary and
// expires_in_ms; renew new_expires_in_ms; check primary (null when the
// node reports null), remaining_ms and expired. Replies may carry extra
// keys; a wrong type name, a missing or ill-typed field (integers must be
// JSON integers, durations >= 0), or a chunk_handle other than the one
// asked for is info. check is idempotent (a read), so its timeouts and
// errors are fail; grant, renew and release are not.
//
// The generator learns only from its own ok replies. A server believes it
// holds a chunk from an ok grant naming it primary (until invoke time +
// expires_in_ms) or an ok renew (until invoke time + new_expires_in_ms).
// Each holding gets a random plan: renew 0..MaxRenewals times, then
// release it or abandon it (stop renewing, so it expires and another
// server can take over). Renewals and plan-ending releases go out at the
// half-life (reply time + (end - reply time)/2) on the first free worker,
// not limited by the rate. A grant answered with another primary ends the
// belief; a failed or unknown grant changes nothing (an info grant never
// creates a belief); a failed or unknown renew stops renewing and the
// belief lasts until its known end (no retry, so a fail storm adds at most
// one op per held pair to the rate); a release ends the belief when it is
// sent. Scheduled ops follow the stagger: grants half the time (half of
// those for a chunk another server is believed to hold, the rest for a
// random pair), checks of a random chunk 40%, releases of a pair the
// server does not hold 10% (they must change nothing). At most one grant,
// renew or release is in flight per (server, chunk) pair; when a draw hits
// a busy pair the op becomes a check. Worker i is served by node i mod n
// (the harness's mapping), so renewals pass through different nodes.
//
// # Lease checker (CheckLease)
//
// Chunk by chunk (Jepsen's independent checking); nemesis ops pass
// through; info, fail and unfinished ops create no holding and no read.
//
//   - Holdings: every ok grant whose primary is its own requested server
//     holds [completion time, invoke time + expires_in_ms); every ok renew
//     holds [completion time, invoke time + new_expires_in_ms). A holding
//     is cut at the invoke time of the first release by the same server on
//     the same chunk invoked at or after the holding op's invoke, whatever
//     that release's outcome (ok, fail, info or none). Empty holdings are
//     dropped. A grant answered with another primary is a read, not a
//     holding.
//   - two-primaries: holdings of two different servers overlap,
//     max(starts) < min(ends). Every overlapping pair is reported.
//   - Reads: every ok check over [invoke, completion] reports its primary
//     when expired is false and primary is not null, and no holder
//     otherwise; every ok grant answered with another primary reports that
//     primary. A holding covers a read when start <= read invoke and read
//     completion < end. read-wrong-holder: the read reported X while a
//     holding of another server covers it. read-no-holder: the read
//     reported no holder while some holding covers it.
//   - A structural defect (a completion without an invoke, an ok value
//     without its fields, an unknown f) is listed in Problems and makes the
//     result invalid.
//
// LeaseResult carries per-chunk counts, every violation (kind, chunk,
// servers, op indices, interval) and the holdings.
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
// ops per f; messages per client invocation. LeaseStats adds failover:
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
// gives nodes as LEASE_MAX_MS and restarted nodes as LEASE_BOOT_WAIT_MS
// under the kill nemesis (the lease workload: LeaseOptions.LeaseMs).
//
// # Reports (Reporter)
//
// The lease workload writes lease-timeline.html: a self-contained page
// (inline SVG, no network, well-formed XML) with one lane per chunk, a bar
// per holding coloured by server, partitions shaded across all lanes and
// violations marked in red; hovering shows server, interval and op
// indices.
//
// # Tests
//
//   - history_test.go: line format and key order, dense indices, the
//     reader's line-numbered errors, concurrent appends.
//   - errors_test.go: the whole error table, idempotent ops, timeouts.
//   - echo_test.go: stagger timing, closed schema, the echo checker and its
//     negative controls.
//   - lease_check_test.go: hand-built valid histories and a negative
//     control per violation kind, release cutting and late releases.
//   - lease_learn_test.go: the generator's learning rules, call by call.
//   - lease_gen_test.go, sim_test.go: the generator driven in virtual time
//     against an ideal lease service (valid) and a broken one (invalid):
//     determinism, one op per pair in flight, half-life renewals, the fail
//     storm bound, wire encodings against encoding/json.
//   - flatjson_test.go: FuzzFlatDecoders holds the fast decoders to
//     encoding/json.
//   - stats_test.go, timeline_test.go: statistics (fault intervals, heals,
//     the inside/outside splits, heal to grant, the final ops) and the
//     picture.
//   - bench_test.go: one simulated schedule, the checker, one op.
//
// Randomized tests print their seed and take it back with -seed.
package workloads
