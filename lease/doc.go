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
//  11. The waiting rule (membership): an acceptor promises a change of
//     its configuration only once the longest lease, stretched by the
//     drift bound, has passed since it adopted that configuration; so a
//     change starts only after every lease a majority of the previous
//     configuration could have granted has run out (see "Membership").
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
// fast propose under the same two conditions as any propose: the ballot
// keeps its promise, and it protects no live lease of another server
// (A2). Over S's own lease that extends the protection; at an acceptor
// that protects nothing (it restarted after S's lease was granted, or
// missed the last renewals) it teaches it S's lease, which it then
// protects like any other. The request falls back to prepare at once
// when a majority can no longer accept, or when an acceptor refuses it
// for a higher promise: that acceptor never accepts the fast ballot, so
// it would need every other acceptor, and waited a whole round for one
// that is down. Safety does not rest on prepare:
// by A2 two servers' accepting majorities would share an acceptor that
// accepted one only after the other's protection, which outlasts that
// server's deadline, had ended; prepare is for learning the holder before
// leaving records, and promises are what order tokens (a fast propose
// checks the promise too, so "Fencing tokens" covers it unchanged).
// What teaching costs: a fast propose that reaches an empty acceptor
// leaves a record there even when S's renewal fails (a propose that went
// out; error 0 says so), exactly as a two-phase propose can. What it buys:
// an acceptor that protects S's lease refuses other servers' prepares
// without promising them (step 2 below), so a restarted acceptor stops
// taking a standby's promises, which S's renewals would otherwise have to
// outbid, one duel per renewal, while another acceptor is down
// (rolling_test.go).
//
// The holder goes first. Grants and renews of one chunk run one at a time
// at each node (below), so a request waits behind the one running. A
// request of a server known to hold a live lease of the chunk (this
// node's acceptor protects it, or the running attempt's prepare answers
// report it) takes the place of another server's request that has sent
// no propose in its running attempt; that attempt is set aside as a
// round timeout would (its answers ignored, its sticky promises
// cancelled) and starts afresh behind it. Safety is untouched: nothing
// is sent that a timeout would not send. Liveness of the holder: another
// server's grant cannot win while the holder's lease is live, yet it may
// wait a whole round (the round timeout, 1 s by default) for an acceptor
// that is down, since that acceptor's answer could be open; a renewal
// waiting behind it outlived leases of a second or two. And a chunk's
// queue holds one request slot (admission.go), passed on from request to
// request, so requests waiting in it cannot take the slots the holder's
// renewal needs.
//
// Sticky promises (sticky.go): when a lease ends, every node with a grant
// in hand prepares at once, and each newer ballot would pre-empt the older
// one's propose. So an acceptor that promises a prepare for S on a chunk
// with no live lease refuses other servers' prepares there for about two
// observed promise-to-propose gaps: first come, first served. A prepare
// that gives up sends cancel, which drops its sticky promises, and retries
// after a backoff that spreads over more than a round trip. So does,
// while it goes on, a prepare that an acceptor promised and whose
// answers report another server's lease running longer than a sticky
// window: until that lease ends a sticky promise holds off no one but
// the holder, whose renewal must prepare at an acceptor that restarted
// and holds no record of its lease (rolling_test.go). Refusing is
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
// What readiness waits for. The core serves once the boot wait is over;
// readiness (a shell's /readyz: what routers and operators wait for
// before they send a member traffic or restart the next one) must not
// keep out of service a member that, with the acceptors it reaches, forms
// a majority. Recovery completes with the marks of n-q+1 acceptors not
// restarting (or of q-1 restarting ones: then a majority restarted and
// nothing remembers more than the floors). For n odd that is q others,
// one more than the q-1 that make a majority with this node: with
// exactly a majority up (n1 and n3 of three down, n1 restarted), recovery
// cannot complete until a member that is down returns, and a readiness
// that waited for it would keep the cluster's only majority out of
// service. So AwaitingRecovery ends when recovery completes, or once the
// boot wait is over, the marks of a majority are in (this node's and q-1
// others', restarting or not) and a round timeout has passed since the
// first round went out: every acceptor that answers within a round has
// answered, and the ones that have not are down, paused or cut off.
// Why order still holds: let A complete before x's restart (majority
// Q_A, token t_A) and B run after x serves (majority Q_B). If Q_A and
// Q_B share an acceptor other than x, the proof sketch above applies to
// it unchanged. If they share only x, B's ballot exceeds x's floor,
// which is above t_A when x heard the mark of a member of Q_A besides
// itself that did not restart since A (its promise is at least t_A; one
// that restarted passes on its own floor, ordered by the clock bound),
// and otherwise above t_A by the wall-clock floor under the clock bound.
// What rests on the clock bound alone is therefore the order after
// tokens that only x and acceptors that did not answer took part in, the
// same bound every whole-cluster restart rests on; and each late mark
// still raises the floor when it comes. Leases themselves are not at
// stake: the boot wait outlasted every lease x may have accepted, so at
// most one holder holds whatever recovery learnt. When fewer than a
// majority answer, the member stays unready (it could not serve anyway),
// and readiness says why.
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
// requests in flight are resized at each sweep. A node keeps up to 256
// answered requests, ended attempts and read rounds that nothing of it
// points to any more and starts the next ones in them (spare.go), so
// that a renewal allocates next to nothing of its own; none is kept
// while any structure of the node still points to it, which the
// simulation checks after every step. Client request bodies of the usual
// shape are read without encoding/json (wireflat.go), every other one
// through it; both read alike.
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
//   - Partition. Core CoreOf(h, Cores) (a hash of the handle) serves
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
// of its own, which one goroutine at a time drives: the loop's own (peer
// messages, timers), or a client's that found the loop free and runs its
// call itself (server/loop.go). The Maelstrom node runs one: the protocol library reads
// stdin and writes stdout on one event loop, and a Maelstrom run's load
// is a few hundred requests a second.
//
// # Membership
//
// With Config.Membership on, the acceptor set may change while the
// cluster runs, one member added or removed at a time (member.go). A
// configuration is (epoch, members, the previous members, floor): epoch 0
// is the set the node
// was started with (Config.Acceptors, the same on every node: Maelstrom's
// init list or -acceptors), every change adds one to the epoch, floor is
// a ballot counter that every token granted under earlier configurations
// is below, and addresses ride along for shells that need them. Every
// node in Config.Nodes (all of Maelstrom's node_ids) may become a member:
// Nodes fixes the ballot lanes, the configuration only who votes.
//
// Epochs on the wire. Prepare, propose, read and release carry the
// proposer's epoch, every answer the acceptor's. An acceptor refuses a
// lower epoch, answering with its configuration, which the proposer
// adopts before it starts its rounds again; an acceptor that sees a
// higher epoch is behind: it does nothing and says so, the proposer sends
// it the configuration (config) and asks again. A node adopts a
// configuration only when its epoch is higher than its own, and only
// chosen configurations circulate. Adopting replaces the members and the
// quorum, raises the node's ballot floor to the configuration's floor,
// starts the waiting rule and a fresh change instance, and starts every
// round in flight again under the new configuration (a quorum counts the
// acceptors of one configuration). A proposer with a stale configuration
// is harmless: what it can still get accepted is kept apart from later
// configurations' leases by the arguments below.
//
// The change. Configuration E+1 is chosen by single-decree Paxos among
// the members of E, an instance of its own beside the chunks' (as the
// master lease is), on the same ballots:
//
//  0. The changer makes sure E is active: a majority of the members of
//     E-1 adopted it. It knows when it chose E itself; otherwise it sends
//     config(E) to the members of E-1 and E and counts their answers.
//  1. member_prepare(E, b, active) to the members of E (and to a member
//     being added, to see that it is up). A member of E promises b if b
//     keeps its change promise, E is active and it is past its waiting
//     rule (rule 11); it answers with the value it accepted in this
//     instance, if any, and its ballot high-water mark. A member still
//     waiting answers how long.
//  2. A majority of promises: propose the accepted value with the highest
//     ballot if any was reported (a value may have been chosen), else the
//     requested change, computed from E: one member added or removed, the
//     floor raised to the highest high-water mark the promises reported.
//     A change whose new configuration would have fewer reachable members
//     (promised, or the added member answered) than its majority is
//     refused unless forced; a change that changes nothing is answered at
//     once.
//  3. member_propose(E, b, v): accepted if b keeps the change promise.
//  4. A majority of accepts chooses v. config(v) goes to every member of E
//     and of E+1 (commit); each adopts it. Once a majority of E adopted,
//     the configuration is active and the client is answered; the
//     changer pushes it to the rest while the request's time lasts, and
//     every proposer pushes it to an acceptor it finds behind.
//
// Two concurrent changes cannot both win: Paxos chooses one value per
// epoch, and the loser, finding the winner's value accepted, finishes it
// and answers error 22 naming it. A change asked while a majority of the
// members is in its waiting rule answers error 22 with the time left.
//
// Why one member at a time. Any majority of S and any majority of S with
// one member added or removed share a member: with |S| = n, a majority of
// S has at least floor(n/2)+1 members and a majority of S+x at least
// floor((n+1)/2)+1, together more than the n+1 members of S+x; a
// majority of S-x has floor((n-1)/2)+1, together more than the n members
// of S. So leases granted under consecutive configurations meet at an
// acceptor, and A2 (rule 4) keeps them apart as within one configuration.
// Two changes apart they need not meet ({a,c} of {a,b,c} and {b,d} of
// {a,b,d}): that is what the waiting rule is for.
//
// The waiting rule (rule 11), Flexible Paxos's condition: every phase-1
// quorum must meet the phase-2 quorums of every earlier round whose lease
// may still be live. A lease of epoch E-1 is accepted by a majority Q of
// S(E-1), at each member y of Q before y adopted E (from then on y
// refuses epoch E-1), so its deadline, at most M after its prepare, is at
// most M after y adopted E. Choosing E+1 needs the promises of a majority
// P of S(E), and P meets Q (consecutive configurations) at some y, which
// promised only once stretch(M) (the boot wait's stretch, rule 7) had
// passed on its own clock since it adopted E: after the lease ended,
// whatever the clock rates within rho. So every lease of epoch E-1 or
// earlier has run out before E+1 can be chosen, and a lease of epoch k
// only ever coexists with leases of epochs k-1, k and k+1, whose quorums
// meet its own. The rule is the acceptors', measured on their own clocks
// from their own adoption: no node needs to know when a change was
// activated, and a member that adopted late only waits longer. A node
// adopting its first configuration other than epoch 0 waits too; epoch 0
// has no predecessor.
//
// Fencing tokens across changes. A token t granted under epoch E-1 was
// accepted by a majority Q of S(E-1). Any grant under epoch E or E+1 is
// promised (or fast-accepted) by a majority that meets Q, as within one
// configuration. For epochs E+2 and later: the promises that choose E+1
// come from a majority P of S(E), which meets Q at a member that accepted
// t before it adopted E, so before it promised; its high-water mark is at
// least t, and the floor of E+1 is at least the highest mark P reported.
// Floors only grow from one configuration to the next, and every acceptor
// that adopts a configuration refuses every ballot up to its floor, so
// every later grant's token exceeds t.
//
// Reads across one change. A check in epoch E may meet a holder granted
// in epoch E-1, whose majority is of S(E-1). Of r answers from n = |S(E)|
// members, such a holder is reported by at least r - floor(n/2), and so
// is one granted in E; judgeRead uses that threshold (for odd n it is q +
// r - n, as before). The remaining time a read or a held grant reports is
// the q-th largest time reported (for odd n the (n-q+1)-th, as before): q
// members of S(E) protect the holder that long, and q members of S(E)
// meet every majority of S(E) and, by the argument above, of S(E+1). With
// Config.Membership off both are as before.
//
// Learners. A node outside its configuration (one not yet added, one
// removed, one that has learnt no configuration yet) votes on nothing: it
// answers no prepare, propose, read or release, only sync, config and,
// with "learner", a change prepare (so that the changer sees it is up);
// proposers count only members. Once a configuration that names it
// arrives, it votes. A brand-new identity needs no boot wait: it never
// accepted anything, which is the same as an acceptor that lost every
// message. A process that reuses a departed member's identity is a
// restart (rule 7): it may have accepted leases it forgot.
//
// Restarts. A restarted acceptor has forgotten which configuration it
// adopted, what it promised and accepted in the change instance, and no
// wait makes that safe: a configuration does not run out as a lease does.
// (A member that adopted E+1 and forgot it could otherwise vote under E
// with members that never heard of E+1, while E+2, chosen before its
// restart, grants through a majority that shares no member with them.)
// With Config.Membership on, its recovery (recovery.go) is therefore a
// gate, as Viewstamped Replication's is: the acceptor votes, on leases
// and on changes, only after it heard from n-q+1 other members of the
// highest configuration it learnt that are not restarting themselves, or,
// once its boot wait is over, from every other node (Config.Nodes and the
// members it learnt) saying it is restarting too (then the whole cluster
// restarted and nothing remembers more). Two restarted nodes cut off
// together may be a majority of an old configuration while a later one
// goes on without them: q-1 restarting members prove nothing. It adopts the highest configuration they report, the value with
// the highest ballot any of them accepted in that epoch's change
// instance, and their high-water marks as its floor (which covers its
// change promises). Why that is enough: a change is chosen only by
// members that know their configuration E is active (step 0), and E is
// chosen only once E-1 is active, and so on down; so if an epoch above
// L+1 was chosen, where L is what the node learnt, L+1 is active: a
// majority of S(L) adopted it, and any n-q+1 other members of S(L)
// include one of that majority (or one that recovered from it), which
// would have reported L+1 or later. So a recovered member holds at least
// every active epoch, never votes under an epoch two below a chosen one,
// and the waiting rule's argument holds for it as for a member that never
// restarted; and the n-q+1 meet the q-1 others of any majority that
// promised or accepted in the change instance, as within Paxos. The price: in a 3-member configuration a restarted member votes
// only while both other members answer, so replace a dead member before
// restarting another. After the whole cluster restarted, each falls back
// to the highest configuration it heard, or epoch 0: restart such a
// cluster with the current members as its start list (and no node it
// would wait for forever). With Config.Membership off the acceptor set
// never changes and recovery stays a guard.
//
// # Membership and cores
//
// A member of several cores (see "Cores sharing one member") changes
// configurations as a member of one does; the configuration and the
// change instance are the member's, so three steps of the argument above
// must read the whole member where a core of it acts:
//
//   - One configuration per member, handed to every core. The change
//     instance runs on the lead (core 0, as the master lease): the
//     membership requests and messages name no chunk, so they reach it,
//     and a change prepare reaches every core (Route). Any core may adopt
//     a configuration first (a refusal of a lower epoch, a proposer's
//     "ask again", a commit, a sync answer); Output.Adopted carries it and
//     the shell hands it to every other core (Node.Adopt: the serve
//     shell's spread, on onEveryLoop; the simulation's evSpread, after 0
//     to three leases). Until a core has it, that core still votes under
//     the older epoch for its chunks, as a member that adopted late does;
//     each core refuses lower epochs and raises its floor on its own.
//   - The waiting rule runs from the last core's adoption. A lease of
//     epoch E-1 is accepted at member y by y's core for its chunk before
//     that core adopted E. The lead of several cores, having adopted E,
//     promises no change until the shell said every core holds E (Node.Adopt
//     with the configuration the lead has), and then only after
//     stretch(M) more: so y promises in the instance of E only stretch(M)
//     after the last of its cores refuses epoch E-1, and the argument of
//     rule 11 holds with "y adopted E" read as "every core of y did". The
//     shell hands the configuration over again until every core took it,
//     so the lead's promise is held back, never given early.
//   - The floor covers every core's ballots. "Fencing tokens across
//     changes" needs y's reported high-water mark to be at least the
//     token t it accepted under E-1, on whichever core. Each core of y
//     answers the change prepare: the lead with its promise, the others
//     with their own marks, each naming itself (member_prepare_ok's core
//     and cores), and only once it holds epoch E and votes (so after it
//     accepted t, and with a mark at least t). The changer counts y's
//     promise once its lead promised and every core reported, with the
//     highest mark; a core that does not report holds the promise back
//     (the round asks again with a fresh ballot). Counting the lead's
//     mark alone (membership-one-core-mark) lets a later grant get a
//     smaller token: the simulation catches it.
//   - Recovery. Each core recovers the configuration before it votes,
//     counting a peer of several cores once every one of its cores
//     answered, as without membership; with membership every recovering
//     core sends its own sync rounds, since each adopts configurations at
//     its own moments (from answers and from the other cores) and starts
//     its count again at each. Activation (step 0) counts a member's
//     adoption by its lead; that is the member's configuration, which its
//     sync answers (every core's) report, as the recovery argument needs.
//
// TestChangePrepareReportsEveryCoresMark,
// TestChangerCountsAMemberOnceEveryCoreAnswered and
// TestLeadPromisesNoChangeUntilEveryCoreAdopted pin these rules; the
// simulation runs membership on members of 2-4 cores in a third of its
// membership schedules (all with -loops N), with configurations reaching
// the other cores after a delay of up to three leases, half of them with
// every member on the same number of cores and half with an operator who
// asks for the next change the moment the waiting rule allows it.
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
//     error 22 only when another server's lease was read from a majority
//     (or, for a membership change, when a change is waiting or lost).
//   - With Config.Membership on, all of the above hold across changes of
//     the acceptor set made through the membership procedure, one member
//     at a time, with restarted members recovering before they vote.
//
// Fault model: messages may be lost, delayed without bound, duplicated and
// reordered; client requests may reach a node late (a paused process) or
// twice; processes may pause, crash and restart, losing all state;
// partitions of any shape, including one-directional ones; clock rates,
// the clients' included, within rho of true time; wall clocks within the
// bound above (for the order of tokens only). Not covered: Byzantine
// nodes, clocks that jump or pause without the process being treated as
// crashed (suspend), start lists (epoch 0) that differ between nodes, and
// acceptor sets changed other than through the membership procedure. A node
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
//   - rolling_test.go: rolling restarts of three cores, one member at a
//     time with its boot wait, while a holder renews as client.Session
//     does (failing over within its lease) and a standby asks for the
//     chunk every 1 to 20 ms through every member: the holder must never
//     lose its lease, the standby never get the chunk.
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
//     stretch of the lease it accepted last); an eighth of the
//     schedules (every one with -membership) add the member nemesis
//     (simmember_test.go): members added and removed through any node,
//     two changes at once, changes of two members (refused), brand-new
//     nodes that start late, some joining, removed members restarted and
//     added again, and the profiles "membership" (changes every few
//     hundred milliseconds among five nodes) and "fresh-members" (two new
//     nodes replace two members in a quiet window, without wall clocks);
//     two configurations at one epoch are a violation of their own. The
//     fencing rules are asserted where the guarantee holds: the nodes' clock estimates
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
//     the bound, and rules switched off one at a time (weaken.go), the
//     membership ones included: no waiting rule, two members at once,
//     learners voting, no configuration floor.
//   - testdata/membership.txt: a dead member replaced step by step (the
//     change's Paxos rounds, the waiting rule's refusal with its time,
//     the new member voting, a stale proposer learning the epoch).
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
//   - spare_test.go: what a node keeps for reuse is unreferenced after
//     every step of answered and timed-out requests, and the check the
//     simulation runs after every step (SpareReachable, the violation
//     kept-while-in-use) finds one planted while in use.
//     wireflat_test.go: the flat reading of request bodies against
//     encoding/json's over random bodies.
//   - bench_test.go: memory per chunk (live, idle, reclaimed; 1 000 000
//     chunks) and steps per second. simcontention_test.go (-contention):
//     latency percentiles of the contention scenario, with and without
//     sticky promises.
package lease
