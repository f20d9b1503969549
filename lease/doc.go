// Package lease is the PaxosLease core of the chunk-lease service: a pure,
// deterministic state machine that grants, renews, checks and releases
// GFS-style chunk leases by majority agreement, without disk and without
// synchronized clocks, and hands out a fencing token with every lease.
//
// # Interface
//
// A Node is one process's core (or one of its cores, see "Cores sharing
// one member"). It is driven by three calls, each taking
// the time now from the caller (a monotonic clock with any origin):
//
//	Request(now, Request) *Output   a client asks for grant, renew, check or release
//	Receive(now, Msg) *Output       a peer message arrives
//	Tick(now) *Output               time passes; call it at Output.Wake (and once after NewNode)
//
// Output holds the messages for other nodes, the replies to clients, the
// next wake-up and lines for the operator's log (a restarted node's boot
// wait and recovery). Messages a node addresses to itself (its own acceptor) are
// delivered inside the same call, at the same now, so a single-acceptor
// node answers every request within the call that received it. Inside this
// package nothing reads a clock, performs I/O, starts a goroutine or draws
// global randomness (purity_test.go enforces it); the backoff's randomness
// comes from Config.Rand, the wall clock from Config.WallMs. The shell (the
// node binary, or the simulation) owns all of that.
//
// # Protocol
//
// Every node is a proposer and, if it is in Config.Acceptors, an acceptor.
// Each chunk handle is an independent PaxosLease instance (paper section
// 8). An acceptor keeps, per chunk and in memory only, the highest ballot
// it promised and the lease it protects. The owner of a lease is the chunk
// server named in the request; any node may grant or renew on its behalf
// (the proposer is a courier, the server is the one that believes).
//
// # The rules
//
// The 2012 paper's pseudocode admits two owners in corner cases; these
// are the rules the core follows instead, numbered as comments and tests
// cite them ("rule 4"):
//
//  1. An attempt's deadline starts when its prepare is sent (d = t_prepare
//     + T); propose is sent, and success reported, only while now < d, and
//     the client is told d - now less the drift margin.
//  2. Quorums count distinct acceptors, per ballot: an answer for another
//     ballot is ignored, a duplicate never counts twice.
//  3. A prepare answer is open for server S when it reports no live lease,
//     or a live lease of S itself.
//  4. An acceptor promises only ballots at least its promise, and accepts
//     only such a ballot and only if it protects no live lease of another
//     server (the revised protocol's A2); accepting raises the promise.
//  5. An acceptor reports only live leases and keeps a lease of length T
//     live for T·(1+rho)/(1-rho) of its own clock.
//  6. A release by (S, t) ends S's instances with token <= t and nothing
//     else.
//  7. A restarted acceptor ignores prepare, propose, read and release for
//     its boot wait (>= the longest lease, stretched by the drift bound).
//  8. Ballots (counter, incarnation, node) are compared field by field and
//     are unique across restarts without disk; a proposer climbs past a
//     promise it is shown; contention backs off randomly.
//  9. A handler reads the clock once, and compares deadlines before it
//     subtracts.
//  10. Protection never shrinks: an instance of S accepted while S's
//     lease is live keeps the old end, whatever shorter length it asked.
//
// Grant and renew for server S with lease length T run attempts:
//
//  1. prepare(ballot, S): pick a ballot above every ballot seen, set the
//     attempt deadline d = now + T (rule 1), send prepare to every acceptor.
//  2. An acceptor that protects a live lease of another server answers
//     "not open" with that lease and promises nothing: such a prepare
//     cannot win, and a promise would only push the holder's next renewal
//     off its ballot (renew starvation). Otherwise it promises a ballot
//     that keeps its promise (rule 4) and reports its live lease, if any.
//     The answer is open for S when the acceptor promised and reports no
//     live lease or a live lease of S (rule 3; the paper's extension rule,
//     which makes renewal work through any node).
//  3. A majority of open answers, counted by distinct acceptor (rule 2):
//     send propose(ballot, S, T) to every acceptor, if now < d.
//  4. An acceptor accepts only if the ballot keeps its promise AND it
//     protects no live lease of another server (rule 4, the revision's A2).
//     It protects the lease for T·(1+rho)/(1-rho) of its own clock (rule
//     5). A lease of S accepted while S's lease is live is merged with it:
//     the protection is the union, so a shorter T, a late propose or nodes
//     configured with different LEASE_MS never shorten what S was told
//     (rule 10). The two latest instances are kept by token, older ones as
//     a span.
//  5. A majority of accepts before d is success: the client is told
//     d - now - DriftMarginMs, rounded down, and the instance's token.
//
// The renewal fast path: a renew, or a grant, for S through a node whose
// own acceptor protects a live lease of S sends propose(ballot, S, T,
// fast) at once, with d = now + T: one round trip. An acceptor accepts a
// fast propose only if the ballot keeps its promise and it protects a live
// lease of S, so the fast path only extends a protection a majority
// already gives S, never creates one; it falls back to prepare at once
// when a majority can no longer accept. Safety does not rest on prepare:
// by A2 two servers' accepting majorities would share an acceptor that
// accepted one only after the other's protection, which outlasts that
// server's deadline, had ended; prepare is for learning the holder before
// leaving records, and promises are what order tokens.
//
// Sticky promises (sticky.go): when a lease ends, every node with a grant
// in hand prepares at once, and each newer ballot would pre-empt the older
// one's propose. So an acceptor that promises a prepare for S on a chunk
// with no live lease refuses other servers' prepares there for about two
// observed promise-to-propose gaps: first come, first served. A prepare
// that gives up sends cancel, which drops its sticky promises, and retries
// after a backoff that spreads over more than a round trip. Refusing is
// always safe; it only delays. In the contention benchmark (5 nodes, 8
// servers on one chunk, 10 ms links) it brings the won grants' p99 from
// 0.7-0.9 s down to about 0.1 s (TestContentionFigures, -contention).
//
// An attempt that cannot reach an open majority is answered from the
// prepare answers read as a majority read (below), once they decide (an
// ambiguous read waits for the remaining answers): a grant answers the
// holder as primary with its protected time and changes nothing; a renew
// fails with error 22. A round that times out having met only silence
// (no acceptor answered with a higher promise) is sent again, with the
// same ballot and the same deadline d, to the acceptors that have not
// answered, and to one in its boot wait as soon as that ends: a node cut
// off from its peers spends one ballot per request, not one per round.
// Otherwise the attempt is abandoned (its late answers are ignored) and
// retried with a fresh ballot after a random backoff that doubles per
// retry (rule 8, the paper's liveness remedy); at once when the promise
// it met was an acceptor's floor, which no competing proposer holds.
// Grants and renews
// of one chunk run one at a time at each node, so a node never duels with
// itself; when one wins the chunk, the grants and renews of other servers
// queued behind it are answered at once from its result (held by the
// winner, or error 22). A request with no answer at its quorum timeout
// fails: with error 11 (definite) if no propose was ever sent for it, else
// with error 0 (timeout, indefinite), because an acceptor may have
// recorded the lease although no client was told of it. The text names
// which acceptors answered, which are in their boot wait (and for how
// long) and which were silent, or how far ahead of the wall clock the
// needed ballot was. A majority of
// accepts that arrives when d - now - DriftMarginMs is no longer positive
// is not success either: the attempt is abandoned and retried, and if the
// request times out so, its error 0 says the lease was too short for the
// round trip. A lease_ms no longer than DriftMarginMs is refused up front
// (error 12): no client could ever be told any time.
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
// The remaining time of a check (and of a grant that names another
// primary) is protectedMs: the (n-q+1)-th largest remaining time reported
// for the holder, counted from when the read was sent. At least n-q+1
// acceptors protect the holder that long, so fewer than a majority can be
// free before then: no other server can be granted the chunk within that
// time of the reply unless the holder releases. With every acceptor
// answering it is at least the holder's own remaining time, and exceeds it
// by at most the time from the holder's prepare (or fast propose) to its
// accepts, stretched by the drift factor, unless n-q+1 acceptors still
// protect a later attempt of the same server (then the chunk is closed to
// others that long anyway). When the answers so far prove nothing (0), the
// check waits for the rest until the round timeout.
//
// Release names what to give back by the token the client got from its
// latest grant or renew: release(S, token) goes to every acceptor, each
// ends every instance of S it protects whose token is <= token (rule 6;
// the latest two by token, older ones as one span with their largest
// token), and the client is answered once a majority answered (error 0 at
// the quorum timeout: the release went out). No read is needed: one
// release with the latest token gives the chunk back however often it was
// renewed, and a release that arrives late, however late, never ends a
// newer instance of S, whose token is larger. A token above an
// acceptor's promise names no ballot that reached it (not a token S got
// there) and ends nothing there: a made-up token must not end instances
// granted after the release was sent.
//
// # Fencing tokens
//
// The token of a lease instance is the counter of the ballot it was
// accepted with: a time part, in BallotUnit (100 us) since CounterEpochMs
// (2020-01-01), shifted past LaneBits lane bits. On each chunk, counters
// are unique across nodes (the lane is the proposer's position in
// Config.Nodes), across restarts (an acceptor refuses a different ballot
// with an equal counter: keeps) and across the cores of one member (a
// chunk has one core; see "Cores sharing one member"), so one token
// never names two servers of a chunk.
//
// Order. When a grant or renew B is invoked after another ok grant or
// renew A of the chunk completed, B's token is larger: across any
// sequence of restarts of any nodes, the whole cluster's included, each
// with BootWaitMs >= MaxLeaseMs, as long as the nodes' wall clocks agree
// within BootWaitMs - L, where L = MaxLeaseMs/4 is the lead bound below.
// Precisely: let o(p, t) be node p's wall-clock estimate (its wall clock
// read at start, plus the time its own clock counted since) minus true
// time at t; every two values of o, of any nodes and incarnations at any
// times, must differ by less than BootWaitMs - L. With BootWaitMs = M
// that is 3M/4: 45 s with the default 60 s leases, 750 ms with 1 s ones.
// Without that bound, order still holds across restarts of a minority in
// which every restarted acceptor heard the high-water marks of n-q+1
// acceptors that were not restarting before its boot wait ended
// (recovery.go), whatever the clocks say.
//
// What makes it hold:
//
//   - Pacing (ballot.go). A node issues a ballot only if its time part
//     leads the node's own wall-clock estimate by at most L: 10 000
//     ballots a second (a core) never lead at all; a burst may lead by L (150 000
//     ballots at M = 60 s, 2 500 at M = 1 s); beyond that, and when it
//     must climb past a promise from a node whose clock runs ahead, the
//     attempt waits for its wall clock (a wake-up), and a request that
//     cannot wait within its quorum timeout fails with error 11 (0 if a
//     propose already went out) naming the lead and the likely cause.
//     Catching up past a promise seen on one chunk raises the node's
//     counter only up to the bound, so a fast clock elsewhere never makes
//     every chunk wait.
//   - The restart floor (recovery.go). A restarted acceptor answers
//     nothing but "booting" for its boot wait, which lasts at least
//     BootWaitMs of true time (stretched by (1+rho)/(1-rho)), then refuses
//     every ballot up to its wall-clock estimate at that moment.
//   - The recovery guard (recovery.go). It asks the other acceptors for
//     their high-water marks and raises the floor with each answer, before
//     and after it serves; it never holds serving back, so a dead peer
//     never stalls a live majority.
//
// Proof sketch. Let A's token t_A be accepted by a majority Q_A, and B's
// ballot t_B be promised (prepare) or accepted (fast path) by a majority
// that checked its promise; the two share an acceptor x, which took A
// before it answered B. If x did not restart in between, its promise was
// at least t_A (promises only grow; a reclaimed chunk leaves its promise
// in the node's floor), so t_B > t_A (an equal counter would be the same
// ballot, but B's was issued after A completed, by a node whose counters
// only grow or by another lane). If x restarted at r in between, it
// answered B only after r + BootWaitMs, refusing everything up to its
// floor F = r + BootWaitMs + o(x). t_A was issued before r by some node
// p, so by pacing time(t_A) <= r + o(p) + L; hence F - time(t_A) >
// BootWaitMs - L - (o(p) - o(x)) > 0, and t_B > F > t_A. The argument does
// not care which acceptors restarted, how often, or who else remembers:
// a whole-cluster restart is the case where every shared acceptor
// restarted. Note what the floor is for: a ballot issued after x serves
// already exceeds t_A by pacing and the clock bound; the floor refuses
// ballots issued before (held in the network, or resent by an attempt
// that started while x was down), which are the ones that can be lower.
//
// The master lease (master.go) is the instance with the empty chunk
// handle and the node itself as the server, so its tokens are these
// tokens and the argument above holds for them unchanged: each new
// mastership and each renewal is a grant or renew invoked after the
// previous one completed, so its token is larger, across restarts within
// the clock bound. master_status names the token of the instance whose
// deadline it reads (the node's latest own instance), and a status's
// belief [completion, invoke + remaining) lies between that instance's
// accepting majority and the end of its protection. So when one node's
// belief ends before another node's begins, an acceptor x of both
// accepting majorities took the earlier instance first (the other order
// would need the later node's protection at x to have ended before the
// earlier node's accept there, that is before its belief began), then
// took the later one only past its promise: the later token is larger
// (for a restarted x, by the restart floor as above). The master workload's
// checker asserts this on every history (token-shared, token-back:
// workloads/master), and the simulation's master-local-token control,
// nodes reporting their own count of instances, must be caught.
//
// Counters stay below 2^52 (maxCounter, reached in 2131): DecodeMsg
// refuses a message with a larger one and the ballot source never catches
// up past one, so above every counter a node has seen there is room for
// 2^45 more ballots below 2^53. A forged or broken counter near 2^53
// would otherwise leave its acceptor promised to a ballot no proposer can
// exceed. (The shell also takes peer messages only from the nodes in
// node_ids.) Counters of the earlier millisecond format are below every
// counter of this one written after July 2025, so tokens keep growing
// across an upgrade.
//
// # Time and drift
//
// No clock is compared across nodes; only elapsed local time is used. The
// proposer's interval [d - T, d) starts when prepare (or a fast propose)
// is sent, before any acceptor starts protecting the lease, so every
// acceptor's protection starts later and, stretched by (1+rho)/(1-rho),
// also ends later in real time whenever each clock's rate, the client's
// included, is within rho of true time (Config.DriftPPM). Each handler
// reads the clock once (now) and compares deadlines before subtracting
// (rule 9). DriftMarginMs shortens every reported time further, for
// operators who want a margin beyond the rate bound.
//
// # Restarts and memory
//
// Acceptor state is lost on restart. A restarted acceptor does nothing
// with prepare, propose, read and release for BootWaitMs, stretched like
// a lease (rule 7), answering only "booting" with the time left, so that
// a proposer's error can name it and ask again when it ends: set
// BootWaitMs >= MaxLeaseMs wherever nodes can restart, so that every
// lease it may have accepted before has ended. It serves as soon as the
// boot wait is over, under the restart floor and whatever recovery has
// learnt by then (see "Fencing tokens"); the node logs each step
// (Output.Logs). The first start of a cluster needs no boot wait.
// Ballots carry the incarnation (the start time in microseconds), so a
// restarted node never reuses a ballot. Request ids start at the
// incarnation, which can repeat an earlier incarnation's ids when the wall
// clock stepped back across a restart; so every read, release and sync
// also carries Config.Nonce, a number the shell draws at random at each
// start, the acceptor echoes it, and an answer counts only if it carries
// this incarnation's nonce (and names a round in flight). An answer meant
// for an earlier incarnation therefore never matches, whatever the clocks
// did, except if both incarnations drew the same nonce (probability
// 2^-53). Tests: readid_test.go (a clock step back and its control),
// restart_test.go (TestAnswersToEarlierIncarnationsNeverMatch).
//
// An idle chunk instance is 24 bytes behind a 4-byte slot in the chunk
// table (table.go). A sweep every max(MaxLeaseMs, 1 s) reclaims instances
// that protected nothing through a whole interval, after raising the
// node's floor to their promise (reclaim.go); a check of a reclaimed chunk
// answers primary null. A record names its server by a number into a
// table of names counted by the records that use them (names.go): a name
// goes with the last record that names it. So memory follows the live
// chunks, each bounded by the limits on names (MaxChunkHandleBytes,
// MaxServerBytes: 4096 bytes, error 12 beyond), and the tables of
// requests in flight are resized at each sweep.
//
// # Cores sharing one member
//
// A member may run its lease state on several cores, each a Node of its
// own on its own event loop (Config.Core of Config.Cores; cores.go), so
// that one process uses all its CPUs. The cores share nothing: each has
// its own chunk table, name table, ballot source, floor, requests, timers
// and admission slots, and each is as pure and deterministic as a Node
// always was. What makes them one member:
//
//   - Partition. Core CoreOf(h, Cores) (FNV-1a of the handle) serves
//     chunk h; the lead, core 0, also serves the master lease (the empty
//     handle) and the master_* requests. The shell hands a client
//     request to its chunk's core and a peer message to the core Route
//     names: its chunk's, or every core for the node-level ones (sync
//     and its answer). A core answers a request for another core's chunk
//     with error 11 (nothing was sent) and drops such a message (a lost
//     message). Each member routes by its own count and every answer
//     carries its chunk back to the core that asked, so members of
//     different counts work together, and a member may restart with
//     another count.
//   - Identity. The cores share the id, the lane, the incarnation and
//     the nonce: on the wire they are one node. A member of one core is
//     the Node of before, message for message.
//
// Why each rule holds per core:
//
//   - Rules 1-6, 9 and 10, sticky promises and the read rule are about
//     one chunk at a time, and for as long as a process runs a chunk's
//     instance lives on exactly one core of each member: everything a
//     proposer or an acceptor does for a chunk happens inside one Node,
//     as before.
//   - Ballots and tokens. Two cores of a member share a lane and an
//     incarnation, so they may issue equal counters, but never on the
//     same chunk: within a process a chunk has one core, and across
//     processes the incarnations differ and an acceptor refuses a
//     different ballot with an equal counter (keeps). So a token still
//     names one lease instance of its chunk and one server ("one token
//     never names two servers" is a statement about a chunk, as the
//     checker reads it; storage fences per chunk). Tokens of different
//     chunks were never ordered against each other, and now may be equal.
//   - Token order. The proof under "Fencing tokens" follows one chunk to
//     an acceptor x that A's and B's majorities share; read x as "x's
//     core for that chunk". Its promises only grow; a reclaimed instance
//     leaves its promise in that core's floor, and the chunk comes back
//     to the same core. If x restarted, every core of x has the restart
//     floor (below).
//   - Pacing. Each core paces its own ballots against the member's wall
//     clock estimate (all cores read the same wall clock at the same
//     start), so every token satisfies time(t) <= wall + L whichever
//     core issued it; the bound is per ballot, so k cores may issue
//     10 000 ballots a second each without leading.
//   - The restart floor and the boot wait. The cores of a member start
//     together: the same boot wait ends at the same instant, and each
//     core's floor is the same wall-clock reading, above every token
//     issued before the restart by any core of any member (the argument
//     does not ask who issued it).
//   - Recovery. Every core of a restarted member recovers; the lead alone
//     sends the sync rounds, and the shell hands every answer to every
//     core (Route), so all of them hear the same marks and reach the same
//     floor. A core of an answering member knows the promises of its own
//     chunks only, and the chunk of a token t_A that a restarted core
//     must stay above may be any core's at the answering member (the two
//     partition by their own counts). So each core answers a sync with
//     its own mark and names itself (Msg.Core, Cores), and a recovering
//     core counts a peer as answered only once each of the peer's cores
//     answered. Those answers, sent at different instants, are what one
//     whole member's answer would be if the network held its parts back:
//     each core's mark covers its own chunks at the moment it answered,
//     and marks only grow; so the n-q+1 argument of recovery.go holds with
//     "peer" read as "all the cores of a peer". A peer that restarted
//     meanwhile is counted afresh when its count changed; with the same
//     count each core's answer covers that core's chunks as a one-core
//     peer's answer covers all of its, from whichever start it came.
//     TestRecoveryWaitsForEveryCoreOfAPeer asserts it; counting a peer by
//     any one core's answer (the sync-one-core weakening) fails it.
//   - The name table and the sweeps are per core: a name is held by the
//     records of the core that names it (once per core that does), and a
//     sweep reclaims that core's idle instances into that core's floor.
//   - Admission. Each core opens MaxInFlight/Cores slots (rounded up) and
//     adapts its own limit to how late its own answers come: the member
//     as a whole still runs about MaxInFlight requests at once.
//   - Logs. The lead speaks for the member (boot wait, recovery); a core
//     that began serving before it recovered says so itself.
//
// The serve shell runs -loops cores (default GOMAXPROCS), each on a loop
// of its own. The Maelstrom node runs one: the protocol library reads
// stdin and writes stdout on one event loop, and a Maelstrom run's load
// is a few hundred requests a second.
//
// # Guarantees
//
// Under the fault model below, and with BootWaitMs >= MaxLeaseMs where
// nodes restart:
//   - At most one server holds a chunk at any instant, where a server holds
//     it from the reply of an ok grant (naming it) or renew until the
//     invoke time plus the reported remaining time, cut short when it
//     releases that instance's token.
//   - A check (or a grant that names another primary) never names a server
//     other than one that held the chunk throughout the request, and never
//     reports "no holder" while some server held it throughout; no other
//     server is granted the chunk within its reported remaining time.
//   - Every ok grant or renew has a token; a token names one server; a
//     grant or renew invoked after another one completed has a larger
//     token, across any restarts while the wall clocks agree within
//     BootWaitMs - MaxLeaseMs/4, and across restarts of a minority that
//     recovered before serving whatever the clocks (see "Fencing
//     tokens"). The same for the master lease: every master_status that
//     says is_master names a token, above every token an earlier master
//     was told.
//   - Error 11 is sent only when no propose went out for the request;
//     error 22 only when another server's lease was read from a majority.
//
// Fault model: messages may be lost, delayed without bound, duplicated and
// reordered; client requests may reach a node late (a paused process) or
// twice; processes may pause, crash and restart, losing all state;
// partitions of any shape, including one-directional ones; clock rates,
// the clients' included, within rho of true time; wall clocks within the
// bound above (for the order of tokens only). Not covered: Byzantine
// nodes, clocks that jump or pause without the process being treated as
// crashed (suspend), and acceptor sets that differ between nodes. A node
// reads its wall clock once, at start, and counts on with its own clock:
// a step of the system clock while it runs is not seen until it restarts,
// and its own clock's rate error accumulates into its estimate (a Linux
// monotonic clock is slewed along with NTP's corrections, so in practice
// the estimate follows the system clock minus any steps).
//
// # Not guaranteed
//
// Liveness needs a majority of acceptors reachable from the proposer with
// message delays well below the lease length; under contention or
// partitions requests fail with error 11 or 0. A server is not told when
// it loses a lease early (it never does, except by its own release). A
// lease refused by error 0 may still block other servers until its
// records expire. acceptors=self (each node its own sole acceptor) has
// none of these guarantees with more than one live node: it is the
// single-process grader mode. Beyond the clock bound, grants through a
// node whose clock is behind may fail with error 11 until its wall clock
// catches up with the promises it must exceed (safe, not live). Under
// a burst beyond what the node carries within its quorum timeout,
// requests wait for one of a bounded, adaptive number of slots and fail
// definitely (error 11, "overloaded") when too little time is left to
// start (admission.go); the rounds already running when the node slows
// can still end in error 0.
//
// # Tests
//
//   - ballot_test.go, quorum_test.go: ballots, lanes, the counter's unit
//     and range (a century below 2^52, above the old format), pacing (a
//     burst leads by at most L, a promise far ahead does not make other
//     chunks wait, the rated 10 000 a second never waits), the promise
//     test, quorum counting against a map oracle, judgeRead and
//     protectedMs against brute-force oracles, drift arithmetic.
//   - release_test.go, restart_test.go: property tests against models: an
//     acceptor's protection against every instance it accepted (rules 5,
//     6, 10: never less than the unreleased instances, another server
//     refused until their stretched end, nothing with a token <= t left
//     after release(t) but what the span of older instances keeps, nothing
//     left after a release with the latest token); the restart floor above
//     every ballot issued before the restart, with clocks at the bound;
//     recovery against a model of what it counts (3 and 5 acceptors: the
//     floor between the first and the largest mark heard, answers meant
//     for an earlier incarnation ignored, complete exactly at n-q+1 ready
//     or q-1 restarting answers); a sync answer at least every promise,
//     also one far ahead of the wall clock; the boot wait answering
//     "booting" until its stretched end to the nanosecond; request ids
//     never repeating across restarts. checktime_test.go: a check's
//     remaining time never above what its read proves less the margin.
//     admission_test.go: the limit halves once per wave of timeouts from
//     wherever it grew. propcontrols_test.go: each fails with its rule
//     switched off.
//   - transcript_test.go with testdata/*.txt: scenarios with explicit time
//     (acquire, busy, extend, fast path and its fallback, release by
//     token, late releases after re-grant, after a pause and beside a
//     renewal, shorter leases, recovery after a restart, expiry, dueling
//     proposers, abandoned attempts against A2, duplicated answers,
//     ambiguous reads, the deadline, boot wait, the restart floor with
//     clocks apart (restart-floor), one release for a renewed lease
//     (release-renewed), timeouts with errors 11 and 0, validation,
//     single-acceptor mode), several run a second time with a rule
//     switched off to show the violation.
//     Regenerate with: go test ./lease -run TestTranscripts -rewrite
//   - sim*_test.go: a seeded simulation of whole clusters under the fault
//     model, with the lease workload's clients; every history is written
//     in history.jsonl format and checked by the workloads lease checker,
//     by the protected-time property and by "no error 11 after a propose
//     for the request" (simprops_test.go). Each seed draws a profile:
//     "mixed" (latency, loss, duplication, delay spikes, dropping or
//     holding partitions, crashes and crash storms, pauses, duplicated and
//     late client requests, drift, drift margins, wall clocks within or
//     beyond the bound or none), "stale" (a slow, flapping network under
//     contention), "sites" (acceptors at a main site, proposer-only nodes
//     behind a slow uplink, clients behind a load balancer, main-site
//     power losses), "clocks" (every clock at the edge of rho, half the
//     time with a drift margin and clients slower by what it covers),
//     "amnesia" (no wall clocks, restarts of a minority: order from
//     promises and recovery), "sequential" (restarts one at a time with
//     partitions and pauses, wall clocks at the bound), "load" (a coarse
//     counter unit so tens of ballots a second press on pacing, and
//     whole-cluster restarts), "bootedge" (restarts within milliseconds
//     with clocks 5-10% off), "twice" (one node restarted again and
//     again while its answers are held back) and "stretch" (every clock
//     5-10% fast, proposes held back up to an eighth of a lease, so that
//     a competitor's propose reaches an acceptor inside the drift
//     stretch of the lease it accepted last). The fencing rules are
//     asserted where the guarantee holds: the nodes' clock estimates
//     (skew and drift, measured over the run) stayed within the bound, or
//     every restarted acceptor recovered before serving. Clients believe
//     every time they are told on their own clocks, a check's included.
//     Beside the history, each acceptor is held to its answers
//     (simaccept_test.go): after propose_ok to S for T it answers
//     propose_ok to no other server for T/(1-rho) of real time, unless
//     S's release or a restart came between. No history shows an A2
//     judged on the unstretched end (the a2-unstretched control): prepare
//     is refused until the stretched end too, and either keeps the
//     clients' promise alone.
//     It prints
//     "lease-sim: schedules=N ops=M violations=V fencing-unasserted=K
//     seed=S"; replay a failing schedule with -seed S -schedules 1, soak
//     with -soak.
//   - simmaster_test.go: the master lease in the same worlds, judged by
//     the master workload's checker (two masters, and the tokens' order);
//     its controls: master-stale-status, master-local-token,
//     acceptors=self.
//   - controls_test.go: negative controls the simulation must catch within
//     its default budget: acceptors=self, restarts without the boot wait,
//     clients whose clocks run slower than rho allows, wall clocks beyond
//     the bound, and rules switched off one at a time (weaken.go).
//     -control-rates prints every control's catch rate.
//   - readid_test.go: a read answer for an earlier incarnation of a node
//     must never be taken for an answer to a read of this one.
//   - cores_test.go: the partition of chunks among a member's cores, the
//     routing of messages, the lead's sync round that every core recovers
//     on, and recovery from peers of several cores (with its control,
//     sync-one-core). simcores_test.go: a third of the simulation's
//     schedules run members of 2-4 cores, each start drawing its number;
//     -loops N runs every member on 2..N cores (the soak with several
//     cores per member), -loops 1 on one.
//   - names_test.go: the name table against a map oracle, and a cluster
//     under random requests whose records must hold exactly one reference
//     each, keep their names across renumbering sweeps, and leave no name
//     once every lease ended; limits_test.go: the name limits.
//   - bench_test.go: memory per chunk (live, idle, reclaimed; 1 000 000
//     chunks) and steps per second. simcontention_test.go (-contention):
//     latency percentiles of the contention scenario, with and without
//     sticky promises.
package lease
