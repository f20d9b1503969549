// Package lease is the PaxosLease core of the chunk-lease service: a pure,
// deterministic state machine that grants, renews, checks and releases
// GFS-style chunk leases by majority agreement, without disk and without
// synchronized clocks.
//
// # Interface
//
// A Node is one process's core. It is driven by three calls, each taking
// the time now from the caller (a monotonic clock with any origin):
//
//	Request(now, Request) *Output   a client asks for grant, renew, check or release
//	Receive(now, Msg) *Output       a peer message arrives
//	Tick(now) *Output               time passes; call it at Output.Wake
//
// Output holds the messages for other nodes, the replies to clients and the
// next wake-up. Messages a node addresses to itself (its own acceptor) are
// delivered inside the same call, at the same now, so a single-acceptor
// node answers every request within the call that received it. Inside this
// package nothing reads a clock, performs I/O, starts a goroutine or draws
// global randomness (purity_test.go enforces it); the backoff's randomness
// comes from Config.Rand. The shell (the node binary, or the simulation)
// owns all of that.
//
// # Protocol
//
// Every node is a proposer and, if it is in Config.Acceptors, an acceptor.
// Each chunk handle is an independent PaxosLease instance (paper section
// 8). An acceptor keeps, per chunk and in memory only, the highest ballot
// it promised and the last lease it accepted: (server, ballot, end of the
// nominal lease, end of its protection). The owner of a lease is the chunk
// server named in the request; any node may grant or renew on its behalf.
//
// Grant and renew for server S with lease length T run attempts:
//
//  1. prepare: pick a ballot above every ballot seen, set the attempt
//     deadline d = now + T (rule 1), send prepare to every acceptor.
//  2. An acceptor promises a ballot not below its promise and, promise or
//     not, reports its live lease. The answer is open for S when the
//     acceptor promised and reports no live lease or a live lease of S
//     (rule 3; the paper's extension rule, which makes renewal work through
//     any node).
//  3. A majority of open answers, counted by distinct acceptor (rule 2):
//     send propose(ballot, S, T) to every acceptor, if now < d.
//  4. An acceptor accepts only if the ballot is not below its promise AND it
//     holds no live lease of another server (rule 4, the revision's A2). It
//     protects the lease for T·(1+rho)/(1-rho) of its own clock (rule 5).
//  5. A majority of accepts before d is success: the client is told
//     d - now - DriftMarginMs, rounded down to whole milliseconds.
//
// An attempt that cannot reach an open majority is answered from the
// prepare answers read as a majority read (below): a grant answers the
// holder as primary with its remaining time and changes nothing; a renew
// fails with error 22. Otherwise the attempt is abandoned (its late answers
// are ignored) and retried with a fresh ballot after a random backoff that
// doubles per retry (rule 8, the paper's liveness remedy). Grants and renews
// of one chunk run one at a time at each node, so a node never duels with
// itself. A request that has no answer at its quorum timeout fails with
// error 11: no attempt of it reached a majority in time, so no client was
// told of a lease and none is usable (an abandoned attempt may leave
// accepted records behind; they only delay other servers until they
// expire).
//
// Check is a majority read: read goes to every acceptor and changes
// nothing, so a check never makes a concurrent grant or renew fail. With r
// answers from n acceptors and quorum q, a server that held the chunk
// throughout the read is reported live by at least q + r - n of them (its
// majority intersects the answers, and nobody removes its records while it
// holds). The read names the one server reported that often; reports "no
// holder" if none is; and, if two are (possible when r < n), waits for more
// answers, reads again at the round timeout, and answers error 11 at the
// deadline rather than guess. Picking the highest ballot would be wrong: an
// abandoned attempt can leave a live record with a higher ballot than the
// holder's (see judgeRead).
//
// Release for S reads the acceptors like a check and, for every live lease
// of S an acceptor reports, sends release(S, ballot) to every acceptor. An
// acceptor drops its lease only if it is exactly that (server, ballot)
// (rule 6), so a release that arrives after S was granted the chunk again
// leaves the new lease alone. Release answers once a majority was read; if
// no majority answered and nothing was released it is error 11.
//
// # Time and drift
//
// No clock is compared across nodes; only elapsed local time is used. The
// proposer's interval [d - T, d) starts when prepare is sent, before any
// acceptor starts protecting the lease, so every acceptor's protection
// starts later and, stretched by (1+rho)/(1-rho), also ends later in real
// time whenever each clock's rate is within rho of true time (Config.DriftPPM).
// Each handler reads the clock once (now) and compares deadlines before
// subtracting (rule 9). DriftMarginMs shortens every reported time further,
// for operators who want a margin beyond the rate bound.
//
// # Restarts
//
// Acceptor state is lost on restart. A restarted acceptor ignores prepare,
// propose, read and release for BootWaitMs, stretched like a lease (rule
// 7): set it >= MaxLeaseMs wherever nodes can restart, so that every lease
// it may have accepted before has ended. Ballots are (counter, incarnation,
// node), compared field by field; Config.Incarnation grows across restarts
// (the binary uses the wall clock at start), so a restarted node never
// reuses a ballot although its counter starts again at zero.
//
// # Guarantees
//
// Under the fault model below, and with BootWaitMs >= MaxLeaseMs where
// nodes restart:
//   - At most one server holds a chunk at any instant, where a server holds
//     it from the reply of an ok grant (naming it) or renew until the
//     invoke time plus the reported remaining time, cut short when it asks
//     to release.
//   - A check (or a grant that names another primary) never names a server
//     other than one that held the chunk throughout the request, and never
//     reports "no holder" while some server held it throughout.
//   - Error 11 is sent only when no client was told of a new lease; error
//     22 only when another server's lease was read from a majority.
//
// Fault model: messages may be lost, delayed without bound, duplicated and
// reordered; nodes may crash and restart, losing all state; partitions of
// any shape, including one-directional ones; clock rates within rho of true
// time. Not covered: Byzantine nodes, clocks that jump or pause without the
// process being treated as crashed (suspend), and acceptor sets that differ
// between nodes (every node must be configured with the same set).
//
// # Not guaranteed
//
// Liveness needs a majority of acceptors reachable from the proposer with
// message delays well below the lease length; under contention or
// partitions requests fail with error 11. A server is not told when it
// loses a lease early (it never does, except by its own release). The
// remaining time a check or another-primary grant reports comes from the
// acceptors' records, measured from when the read was sent: it is the
// acceptors' view, not the holder's. A lease refused by error 11 may still
// block other servers until its records expire. acceptors=self (each node
// its own sole acceptor) has none of these guarantees with more than one
// live node: it is the single-process grader mode.
//
// # Tests
//
//   - ballot_test.go, quorum_test.go: ballots, quorum counting against a
//     map oracle, judgeRead against a brute-force oracle, drift arithmetic.
//   - transcript_test.go with testdata/*.txt: scenarios with explicit time
//     (acquire, busy, extend, release, expiry, dueling proposers, renewal
//     through another node, late release after re-acquire, abandoned
//     attempts against A2, duplicated answers, ambiguous reads, the
//     deadline, boot wait, timeouts, validation, single-acceptor mode),
//     some run a second time with a rule switched off to show two primaries.
//     Regenerate with: go test ./lease -run TestTranscripts -rewrite
//   - sim*_test.go: a seeded simulation of whole clusters under the fault
//     model, with the lease workload's clients; every history is written in
//     history.jsonl format and checked by the workloads lease checker. Each
//     seed draws a profile: "mixed" (latency, loss, duplication, delay
//     spikes, dropping or holding partitions, crashes and crash storms,
//     drift), "stale" (a slow, flapping network under contention), "sites"
//     (acceptors at a main site, proposer-only nodes behind a slow uplink,
//     clients behind a load balancer, main-site power losses) and "clocks"
//     (every clock at the edge of rho). It prints "lease-sim: schedules=N
//     ops=M violations=V seed=S"; replay a failing schedule with
//     -seed S -schedules 1, soak with -soak.
//   - controls_test.go: negative controls the simulation must catch within
//     its default budget: acceptors=self, and rules switched off one at a
//     time (weaken.go): per-message quorums, release by server only,
//     overwriting another server's live lease, no drift stretch.
//     -control-rates prints every control's catch rate. The late timer
//     (deadline from the prepare quorum) is not asserted: here propose
//     leaves at the instant of the prepare quorum and every accept comes
//     after it, so even the late deadline ends before every accepting
//     acceptor's protection; testdata/deadline.txt shows the difference in
//     behaviour, and the simulation never found it unsafe.
//   - readid_test.go: a read answer for an earlier incarnation of a node
//     must never be taken for an answer to a read of this one.
//   - bench_test.go: memory per idle chunk instance and steps per second.
package lease
