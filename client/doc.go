// Package client is the Go client of the chunk-lease service: programs
// take, renew, check and give back chunk leases from a cluster of
// `lease-node serve` members over the HTTP API of contract section 3, keep
// a lease alive with a Session, and elect a leader on the members' master
// lease with Campaign. cmd/leasectl is the same for people.
//
// # Interface
//
//	New(Config) (*Client, error)                         the members' client URLs, token, TLS
//	(*Client).Grant(ctx, chunk, server, leaseMs) (Lease, error)
//	(*Client).Renew(ctx, chunk, server, leaseMs) (Lease, error)
//	(*Client).Check(ctx, chunk) (Check, error)
//	(*Client).Release(ctx, chunk, server, token) error
//	(*Client).MasterStart / MasterStop(ctx, node) error
//	(*Client).MasterStatus(ctx, node) (MasterStatus, error)
//	(*Client).NewSession(ctx, chunk, server, SessionOptions) (*Session, error)
//	(*Client).Campaign(ctx, node, CampaignOptions) (*Mastership, error)
//	(*Session).Current() / (*Mastership).Current() (Held, error)   at the moment of acting
//	(*Session).Act(action) / (*Mastership).Act(action) (Acted, error)
//
// A Lease carries the fencing token, what the member said remained
// (ExpiresInMs) and when the answered request was Sent; Lease.Until turns
// them into a believed expiry on the caller's clock. A grant of a chunk
// another server holds is an answer, not an error: Lease.Granted is false
// and Primary names the holder.
//
// # Errors: refused or unknown
//
// Every error is an *Error matching one sentinel (errors.Is) and keeping
// the contract's distinction between definite and indefinite failures:
//
//	400, 413  ErrBadRequest    refused: fix the request           IsRefused
//	401       ErrUnauthorized  refused: the bearer token          IsRefused
//	404, 405  ErrNotFound      refused: not a member's URL        IsRefused
//	409       ErrHeld          refused: another server holds it   IsRefused
//	          (a grant's 409 carries its lease_grant_ok body naming the
//	          holder: Grant returns it as an answer, Granted false)
//	503, 429, connection refused, deadline before sending
//	          ErrUnavailable   nothing was done; retry            IsRefused
//	504, other 5xx, a connection broken after the request was written,
//	an answer that never came (deadline) or could not be read
//	          ErrUnknown       it may have taken effect           IsUnknown
//
// *Error keeps the member's status, code and text, the endpoint and the
// number of attempts, and wraps the network's or the context's error. A
// grant or renew whose outcome is unknown may have made an instance with a
// token the caller never saw: it is never reported as "not granted".
//
// # Failover
//
// A call tries one member at a time, starting with the one that answered
// last. A connection error, a 503 or a 504 (or another 5xx, or an attempt
// that timed out) moves on to the next member; a refusal (400, 401, 404,
// 409, 413) ends the call at once. A member that failed is kept away for
// a backoff (50 ms doubling per consecutive failure to 2 s, jittered 20%;
// the failures of attempts that were in flight together count once)
// and a member that answered 503 for its Retry-After (at most
// MaxRetryAfter); a call skips cooling members while another is
// available, waits for the first to come back when none is and the
// deadline allows, and otherwise tries, once per call, a member kept away
// only by the backoff (a Retry-After is never cut short). An attempt gets
// at most AttemptTimeout (3 s), and at most half the time left before the
// context's deadline (when that is at least 20 ms), so a member that
// hangs leaves time for another. A call makes at most MaxAttempts
// attempts (3 per member). The outcome across attempts: a success if one
// succeeded; the refusal if one ended the call; else ErrUnknown if ANY
// attempt may have taken effect; else ErrUnavailable.
//
// The master requests are about one node, so they go to the node named,
// once, without failover.
//
// # Transport
//
// HTTP/1.1 with keep-alive: one http.Transport per Client, up to
// MaxIdleConnsPerHost (128) idle connections per member so that 64
// concurrent callers reuse connections, idle ones closed after 20 s
// (before the member's own 30 s, so a request never races the member
// closing an idle connection), no compression, no proxy from the
// environment. Request bodies are written by hand into pooled buffers and
// each request's URL and header are built once per Client; answers are
// read into pooled buffers. Make one Client per process and share it.
//
// With Config.Batching, lease calls queue, and go together as one POST
// /v1/batch, only when they would wait anyway (batch.go): while this
// client is busy handing another request to the same member (until the
// transport has written it into the connection's buffer; a dial does
// not count) or handing a
// returning batch's answers to its callers, and while the member is
// queueing (its answers take more than twice its quickest recent one:
// the client then keeps no more requests in flight than it had,
// inflight.go). There is no fixed cap on the requests in flight: calls
// that come spread out, or go to members far away, never wait for one
// another, and a client or member short of CPU gets its calls together,
// which cuts the CPU a call costs on both sides (the HTTP request and
// its answer cost more than the lease round on loopback). Each call
// keeps its own deadline, failover and outcome: a call still queued
// when its attempt ends was never sent, and a call whose attempt ends
// while its batch is out is told, as a lone call would be, whether it
// may have reached the member: before the batch went out it ends the
// batch (every call not sent, the others fail over); after, it leaves
// alone (unknown) and the others wait on.
// A member without the endpoint (404) gets its calls alone from then on.
//
// # Session
//
// A Session holds server's lease on chunk alive, as etcd's
// concurrency.Session does. It renews at a third of the lease (the
// length the member last said), jittered by 10%, counted from when the
// previous renewal was sent, through any member; a failed renewal
// (unavailable or unknown) is retried after about a twentieth of the
// lease. A holder acts through Current or Act (below, "Acting on a
// lease"); Token, Until and Done describe the lease without asking.
//
// Believed expiry: for each grant or renew answered with expires_in_ms E,
// the lease instance began no earlier than the moment the request was
// sent, S (the member starts its timer after it receives the request,
// rule 1 of package lease), so it lasts at least until S + E on the member's
// clock. The Session believes S + E - DriftMargin on its own clock, and
// the latest such time over its instances (a renewal never shortens what
// the acceptors protect, rule 10 of package lease).
//
// Clock assumption: only elapsed time is used (Go's monotonic clock;
// wall clocks may be anything). The believed expiry is never later than
// the real end as long as, over one lease, the caller's clock runs slow
// against the member's by less than DriftMargin: with the default (1% of
// the lease + 1 ms), rates within 1% (10 000 ppm, far beyond NTP or
// quartz). The members' own drift margin (-drift-margin-ms) covers the
// acceptors against the proposer; this one covers the caller against the
// member.
//
// Loss: the loss deadline is Until less SafetyMargin (default 10% of the
// lease). If no renewal succeeded by then, a watchdog timer declares the
// lease lost and closes Done, whatever the renewal in flight is doing; a
// renewal refused for good (409: another server holds the chunk; 400,
// 401, 404) closes Done at once. A renewal answered after the loss
// deadline does not reopen Done. Err says why (ErrLost wrapping the
// cause, or ErrClosed).
//
// Done is a notification, and it can come late: a timer cannot fire in a
// process that is stopped (SIGSTOP, a VM pause, a long GC or a starved
// CPU), so a process that resumes after its lease ended can find Done
// still open, and act as primary while another server is (the negative
// control of scripts/fence_check.sh: holders that act while Done is open
// write after a newer holder did). Never act on Done alone.
//
// # Acting on a lease
//
// Current is the question a holder asks at the moment of acting,
// immediately before each action: it reads the monotonic clock then and
// answers the token of the latest instance and the believed end (Held),
// or an error (wrapping ErrLost, or ErrClosed) once now is at or past
// Until less SafetyMargin, or once the lease was lost or closed. The
// answer does not depend on any timer having run. A refusal is final: it
// closes Done as the watchdog would have. Act runs an action with the
// token between two such questions and reports whether the lease still
// held when the action returned (Acted.Held: then it held throughout);
// its error is nil only when the action succeeded under the lease.
// Mastership has the same two calls, with the master lease's token.
//
// What a holder may assume: under the clock assumption, a Current that
// answers at time t means the lease is held at t, by this server alone,
// for at least SafetyMargin more. Nothing more: a process can be paused
// between Current and its action's effect, for any time. So the action
// carries the token and storage refuses a token below the highest it has
// accepted (package fence; contract section 3, "Holders and storage"):
// the check stops a holder from starting to act on a lost lease, the
// token stops a late action from landing. docs/safety.md ("Holders and
// storage") states both sides and the end-to-end test's figures.
//
// Close stops renewing, waits (until its context ends) for a renewal in
// flight so that its token is known, and releases with the latest token,
// which ends every earlier instance too (rule 6 of package lease). A renewal whose
// outcome stayed unknown may have made an instance with a larger token
// than any the Session saw; that instance is not released and runs out
// by itself within one lease of the renewal being sent (it protects the
// same server, so it is an availability cost, never a second holder).
//
// Sub-second leases work: a 300 ms lease renews every 100 ms and declares
// loss 30 ms before its believed end.
//
// # Leader election on the master lease
//
// The members elect a master among themselves (contract section 1,
// "Master lease"): a started node keeps trying to hold one cluster-wide
// master lease for itself, and answers master_status from its own timer.
// A program that runs beside a node (same host, its client URL) takes
// part through that node: Campaign(ctx, nodeURL, opts) sends master_start
// and polls master_status (every PollInterval, 100 ms) until the node
// says is_master, then returns a Mastership. The program acts as leader
// only through Mastership.Current or Act, which answer from the clock
// with the master lease's token (MasterStatus.Token: strictly greater for
// each new mastership and each renewal than any token an earlier master
// was told) against the believed end of the node's mastership, Sent +
// remaining_ms - DriftMargin, renewed by a poll at most every
// PollInterval and at most every third of the time left. Done closes
// when a poll says is_master false, or when no poll confirmed the
// mastership by Until less the safety margin (a node that is down, stuck
// or cut off), before the node's own lease ends, unless the watching
// process was paused (see Session: Done can come late). Resign
// sends master_stop (the node stops renewing and gives the lease back)
// and closes Done. A campaign whose context ends before the node becomes
// master stops the node's campaign. After a loss the node keeps
// campaigning; Campaign again to wait for the next term, or Resign.
//
// # Tests
//
// The tests run against internal/fakelease, an in-process fake cluster
// with injected faults (connection refused, a reset mid-request before or
// after the member acted, 503 with Retry-After, 504, slow answers, a
// member that dies): errors_test.go (every status to its sentinel),
// failover_test.go (order, memory of the member that answered,
// Retry-After, deadlines, unknown versus refused, a backoff that doubles
// with consecutive failures), belief_test.go (a success handled after the
// loss deadline ends the belief), session_test.go (the
// renewal schedule, loss on 409 and on silence, failover of renewals,
// Close with the latest token, all under testing/synctest with no real
// sleeps), session_prop_test.go (the safety property under random faults
// and clock rates, Current's included, also with a stalled watchdog (a
// process whose timers run late), one holder alone and eight batching
// through one client; negative controls that must be caught either way:
// a loss signalled after the end, by Done and by Current, an expiry
// counted from the answer's arrival, a clock beyond the drift margin, a
// stalled watchdog with Done alone believed), hold_test.go (Current and
// Act against a stalled watchdog, after Close, for a Mastership with its
// token), election_test.go,
// batch_test.go (calls made while a request is being written go as one
// batch, each with its own answer; no cap on the calls in flight while
// the member answers quickly, a few once it queues; a member without
// batches; a cut-off batch failing over call by call; a batch cut or
// broken off after it went out unknown for each call; a queued call past
// its deadline "not sent"; an impatient call leaving its batch; batches
// within the body limit; a batch whose dial hangs "not sent", and no
// queue behind a hanging dial), inflight_test.go (the limit stays open
// for a member far away, comes down for one that queues, opens again,
// follows a member that moved), contract_test.go and
// contract_hold_test.go (a leader's token above the previous leader's),
// which run against real members when CHUNKLEASE_TEST_ENDPOINTS lists
// their client URLs (loopback only).
// bench_test.go measures the client's own cost per call at 1, 16 and 64
// callers.
package client
