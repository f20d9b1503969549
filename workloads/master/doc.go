// Package master is the master-lease workload (contract section 1: a
// started node keeps trying to hold one cluster-wide lease for itself):
// the generator of master_start, master_stop and master_status calls,
// their closed reply schemas, the checker (two nodes must never both
// believe they are master, and a master's token must be above every
// token an earlier master was told) and the statistics (how much of the
// run had a master, failover inside and outside faults).
//
// # Generator
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
//	status  {"type":"master_status"}   invoke value null, ok value {"is_master":b,"master":m,"remaining_ms":r,"token":t}
//
// with node set to the answering node by the harness. Replies must fit
// closed schemas: {type: "master_<f>_ok", msg_id?: int, in_reply_to: int}
// for start and stop, and {type: "master_status_ok", is_master: bool,
// master: string | null, remaining_ms: int >= 0, token?: int > 0,
// msg_id?: int, in_reply_to: int} for status (master, when a string, is
// not empty; "token" is in the ok value only when the reply had one); an
// extra key or a wrong type is info naming the schema and the violation.
// status is a read (idempotent): a timeout or any error is fail. start and
// stop are not: a timeout is info, an error fail or info by its code.
//
// # Checker (CheckMaster)
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
//   - Fencing (tokens.go): token-missing, an is_master answer without a
//     token (empty beliefs included); token-shared, one token told to two
//     different nodes; token-back, a belief whose token is below one told
//     in a belief that ended before it began (one violation per belief,
//     naming the earlier belief with the largest token). Together: a
//     master's token is above every token an earlier master was told, as
//     the contract's master lease promises; a node's own statuses of one
//     instance repeat its token, and overlapping beliefs say nothing
//     about order.
//   - A structural defect (a completion without an invoke, an unknown f,
//     an ok status value without the exact fields and types above, an ok
//     status or a stop without node, a node that changes between invoke
//     and completion) is listed in Problems and makes the result invalid.
//   - Anomalies, reported without changing the verdict: is_master true
//     naming another master or null, and is_master false with
//     remaining_ms > 0 (the contract says 0) or with a token.
//
// MasterResult carries per-f counts, the is_master answers, the number
// of beliefs (and empty ones), the violations (with their count and
// count by kind; each text names the status ops and the node that
// answered them: "n2 (status ops 12-13 via n2, master during [0.135s,
// 1.053s)) and n1 (...) were both master for 870.7 ms from 0.182s"), the
// problems and anomalies (with their counts) and the tenures: each
// node's beliefs that overlap or touch, merged, in start order, each
// naming the first stop sent to its node while it ran, if one was.
//
// # What the analysis writes (analysis.go, timeline.go)
//
// results.json gets SummarizeMaster's summary: the result with at most
// SummaryViolations (20) violations, problems and anomalies listed (as
// the lease summary caps at 20), their counts whole, and "details", the
// detail file MasterDetailsFile (master-details.jsonl): one JSON object
// a line, every {"violation"}, then every {"problem"}, then every
// {"anomaly"}. The master timeline (drawn by package report) gets a
// TimelineInput: the node ids, the tenures, the faults, the first
// ListedViolations violations, and each node's violation marks (the
// union of the overlaps it took part in, with their count and the first).
//
// # Statistics (MasterStats)
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
// The streamed analysis (Analyzer) keeps each node's beliefs and stops,
// not the ops; the statistics are sums. The master workload has no final
// phase; its lease length is the nodes' own (NodeLeased).
//
// # Tests
//
//   - master_test.go: the generator's stagger and mix, options, requests,
//     closed schemas, errors and timeouts, the lease bound.
//   - check_test.go: hand-built histories: a touching handover is valid;
//     negative controls: overlaps of 1 ms and of 1 ns, a node that gave
//     its lease away on stop inside an announced mastership; structural
//     problems, anomalies. tokens_test.go: tokens that keep the rules
//     (repeated within an instance, overlapping beliefs of one node in
//     any order); negative controls: a token missing, shared, equal to
//     the last master's, below it, below a master two tenures back, one
//     node's going back; one violation per offending belief.
//   - stats_test.go: faults of every kind, and every figure worked out by
//     hand for one run.
//   - sim_test.go: the generator in virtual time
//     (workloadtest.SimulateRotating) against an ideal master service with
//     lost and failed replies and outages (valid, figures in bounds) and
//     three broken ones (a node saying is_master after it lost the lease,
//     a node always claiming it, masters numbering their own terms as
//     tokens: invalid); determinism.
//   - analysis_test.go: the streamed analysis against CheckMaster and
//     MasterStats, for an ideal service and one with a node always
//     claiming mastership (the summary lists 20 violations and counts
//     them all; the detail file has every one; the timeline's input), and
//     the violation marks merged per node.
//
// Randomized tests print their seed and take it back with -seed.
package master
