// Package lease is the chunk-lease workload: the generator of lease_grant,
// lease_renew, lease_check and lease_release calls by chunk servers that
// contend for chunks, the wire form of those calls and the checks of the
// replies, the checker (two primaries, reads, fencing tokens), the
// statistics (availability, failover, recovery after heals) and the
// streamed analysis that judges a run of any length chunk by chunk. It
// knows nothing of the lease core (package chunklease/lease): it judges
// any node by its replies. It draws nothing: the lease timeline is drawn
// by package report from the TimelineInput the analysis gathers
// (lanes.go).
//
// # Generator
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
// # Checker (CheckLease)
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
//     server up to its token (rule 6 of package lease), so releasing a
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
//     violation per later op): another server's op (storage must refuse
//     the deposed holder) or the same server's (a renew or re-grant gets
//     a new, larger token).
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
// servers, op indices, the node that answered each op, interval, text)
// and the holdings (with their tokens and the node that answered the
// grant or renew). The node of an op is its completion's node field,
// else its invoke's (the harness writes the node each worker talks to);
// texts name each op as "grant ops 6-7 via n0", so a reader goes straight
// to the history and to that node's log: "cs1 (grant ops 6-7 via n0) and
// cs3 (renew ops 14-15 via n2) both held ch_1 for 120 ms". RouteLeasePair and CheckLeaseChunk are the same checker one
// chunk at a time: the chunk an op belongs to (its ok value's, else its
// invoke's; an op with none is a problem), and one chunk's ops judged
// alone; the problems of all chunks, sorted back into op order, are
// CheckLease's.
//
// # Statistics (LeaseStats)
//
// workloads.Stats plus failover: for each chunk, a tenure ends at the end
// of a holding that no other holding of the same server covers; its
// failover time runs to the start of the next holding of the chunk when
// that holding is another server's (grant or renew); count,
// nearest-rank median and max in ms, plus how many ends were retaken by
// the same server or never retaken; overall and split by whether the
// tenure ended inside a fault. It counts holdings and grants that began
// inside faults, and for each heal (workloads.Heals) the time to the
// completion of the first successful grant invoked after it. Every figure
// is a sum over chunks (leaseStatsAcc), so the analysis computes them one
// chunk at a time on several goroutines.
//
// # The streamed analysis (Lease.NewAnalysis)
//
// Each op goes to a spill file chosen by its chunk (history.ShardOf; one
// shard per 2 MiB of history, at most 1024), the shards are checked on
// AnalysisEnv.Parallel goroutines, chunk by chunk in natural order
// (CheckLeaseChunk), and what they found is merged: totals, violations by
// kind, the earliest violations (by start, then CheckLease's order), the
// first problems, the statistics, the timeline's lanes (lanePicker keeps
// only the chunks that can still get one). results.json gets a
// LeaseSummary (chunk count, totals, violations by kind, the earliest
// SummaryViolations violations, the first SummaryProblems problems, the
// detail file's name): kilobytes whatever the run's length.
// LeaseDetailsFile (lease-details.jsonl) has one line per chunk in
// natural order, {"chunk", "counts", "holdings", "violations"},
// CheckLease's (each holding with its "node", each violation with its
// "nodes"), then one {"problem"} line per problem. The focus (the
// earliest violation, for the message diagram) names each of its ops
// with its indices, node and times (workloads.FocusOp). Memory: one shard
// per goroutine and the timeline's few hundred chunks.
//
// Final phase: FinalOps checks once every chunk a grant or renew was
// sent for (after the harness healed every fault and waited for
// recovery; a chunk nobody asked to hold has no holding a read could
// contradict); LongestLeaseMs is LeaseOptions.LeaseMs. Call (call.go) lends the wire form and the reply
// checks to workloads that plan their own lease ops (package leasebench).
//
// # Tests
//
//   - check_test.go: hand-built valid histories and a negative control per
//     violation kind, release cutting up to its token (a node that ends a
//     newer instance is caught; the cut held to a brute-force version on
//     random histories), late releases, overlaps of 1 ms and 1 ns, reads
//     ending 1 ns before and at a holding's end.
//   - fencing_test.go: a valid history with growing tokens and a negative
//     control per fencing kind; the read and token-order sweeps held to
//     brute-force versions on random chunks.
//   - learn_test.go: the generator's learning rules, call by call: tokens,
//     re-grants, stray release tokens, shorter renewals.
//   - gen_test.go: the generator driven in virtual time
//     (workloadtest.Simulate) against an ideal lease service
//     (workloadtest.IdealLeases: valid) and broken ones (invalid: blind
//     grants, shrinking renewals, a release that ends every lease, tokens
//     per server, no tokens): determinism, one op per pair in flight,
//     half-life renewals and re-grants, the fail storm bound, lease_ms
//     variety, replies with and without tokens, wire encodings against
//     encoding/json.
//   - flatjson_test.go: FuzzFlatDecoders holds the fast decoders to
//     encoding/json.
//   - stats_test.go: failover, holdings inside faults, heal to grant, the
//     final ops and the lease bound.
//   - analysis_test.go: the analysis of simulated histories (a correct
//     service and four broken ones, with partitions, kills and pauses; one
//     with malformed ops), split over 41 shards on two goroutines, against
//     CheckLease and LeaseStats: summary, statistics, every line of the
//     detail file, the timeline input, the focus.
//   - bounded_test.go: the lane picker and the earliest violations, fed in
//     any order and merged, against the choice made from a whole result.
//   - bench_test.go: one simulated schedule, the checker, one op.
//
// Randomized tests print their seed and take it back with -seed.
package lease
