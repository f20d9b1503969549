package lease

import (
	"fmt"
	"slices"
	"time"
)

type phase uint8

const (
	preparing phase = iota
	proposing
)

// attempt is one ballot's try at granting or renewing a lease.
type attempt struct {
	ballot Ballot
	phase  phase
	fast   bool // a renewal's single round: propose without prepare
	// d is the attempt deadline, first send time + T (rule 1). Propose
	// is sent and success reported only while now < d; the client is told
	// d - now. Every prepare answer this attempt collects is at most T old
	// when it is used, whatever happens to acceptors meanwhile.
	d        time.Duration
	sentAt   time.Duration
	roundEnd time.Duration

	prepared tally // acceptors that answered prepare
	open     tally // ... promised, reporting no live lease or one of the requester
	answered tally // acceptors that answered propose
	accepted tally // ... and accepted
	samples  []sample
	// sampleBuf holds the first samples, so that a round of a usual
	// cluster adds no allocation of its own.
	sampleBuf [inlineSamples]sample
	// outbid is set once an acceptor answered with a promise this ballot
	// does not keep: only a fresh ballot can go on. Until then a round that
	// times out is sent again, with the same ballot, to the acceptors that
	// have not answered: silence costs no ballots. floored: the promise
	// was an acceptor's floor (a restart's, or a reclaimed chunk's;
	// incarnation 0), which no competing proposer holds, so the attempt
	// starts again above it at once instead of waiting out the round.
	outbid, floored bool
	// cancelled: the attempt's sticky promises were dropped while it
	// still runs, because an answer reported another server's lease that
	// outlasts them (dropStickyForHolder).
	cancelled bool
}

// inlineSamples is how many acceptors' samples a round keeps without an
// allocation of their own: every cluster of up to 5 members.
const inlineSamples = 5

// sample is one acceptor's report of the live lease it holds.
type sample struct {
	server      string // "" when none is live
	remainingMs int64
	token       int64
}

// enqueue runs grant and renew requests of one chunk one at a time at this
// node, so a node never duels with itself for a chunk. The holder goes
// first: a request of a server known to hold a live lease of the chunk
// takes the place of another server's request still preparing
// (holderFirst), which waits again behind it.
func (n *Node) enqueue(now time.Duration, r *request) {
	q := n.queues[r.Chunk]
	if len(q) > 0 && n.holderFirst(now, r, q[0]) {
		head := q[0]
		n.sendCancel(head)
		head.att, head.queued = nil, true
		n.queues[r.Chunk] = append([]*request{r}, q...)
		n.passSlot(now, head, r)
		n.startAttempt(now, r)
		return
	}
	if q == nil {
		q = n.spareQueue()
	}
	n.queues[r.Chunk] = append(q, r)
	if len(q) > 0 {
		r.queued = true
		return
	}
	n.startAttempt(now, r)
}

// holderFirst reports whether r goes before head, the request running on
// its chunk: head is another server's, has sent no propose in its running
// attempt, and r's server holds a live lease of the chunk, as this node's
// acceptor protects it or as the answers head's attempt collected report
// it. Another server's grant cannot win while that lease is live, yet it
// may wait a whole round for an acceptor that is down (its answer could
// be open); behind it, the holder's renewal outlived the lease (during a
// rolling restart, a standby polling lease_grant through the same member
// took the chunk that way: rolling_test.go). Setting head's attempt
// aside is what a round timeout does to it: its late answers are
// ignored, its sticky promises cancelled, and it starts afresh after r.
// When r wins, head is answered at once with the holder
// (answerQueuedHeld).
func (n *Node) holderFirst(now time.Duration, r, head *request) bool {
	if head.Server == r.Server || head.queued || head.att != nil && head.att.phase == proposing || !n.serving(now) {
		return false
	}
	if head.att != nil && head.att.reportsLive(now, r.Server) {
		return true
	}
	a, ok := n.chunks.get(r.Chunk)
	idx, known := n.chunks.names.lookup(r.Server)
	return ok && known && a.holds(now, idx)
}

// reportsLive reports whether an answer to the attempt's prepare reported
// a lease of server that still runs at now (its remaining time counted
// from when the prepare was sent).
func (a *attempt) reportsLive(now time.Duration, server string) bool {
	for _, s := range a.samples {
		if s.server == server && a.sentAt+ms(s.remainingMs) > now {
			return true
		}
	}
	return false
}

// passSlot gives the slot of from, set aside in its chunk's queue, to to,
// which runs in its place (admission.go: a chunk's queue holds one slot).
func (n *Node) passSlot(now time.Duration, from, to *request) {
	if from.slot {
		from.slot = false
		n.inFlight--
	}
	n.takeSlot(now, to)
}

func (n *Node) newTally() tally { return tally{perMessage: n.cfg.weaken == weakPerMessage} }

func (n *Node) newAttempt(now time.Duration, r *request, b Ballot) *attempt {
	r.queued = false
	a := takeSpare(&n.spareAttempts)
	*a = attempt{
		ballot:   b,
		d:        now + r.leaseLen,
		sentAt:   now,
		roundEnd: now + ms(n.cfg.RoundTimeoutMs),
		prepared: n.newTally(), open: n.newTally(), answered: n.newTally(), accepted: n.newTally(),
	}
	a.samples = a.sampleBuf[:0]
	r.att = a
	return a
}

// startAttempt starts the deadline and sends, for a fresh ballot, a fast
// propose when the fast path applies, else prepare. When the ballot would
// lead the wall clock by more than L, the attempt waits for it (pace).
func (n *Node) startAttempt(now time.Duration, r *request) {
	r.outran, r.pacedMs = false, 0 // the error names the last attempt's fate
	b, readyAt := n.ballots.next(now, r.need)
	if readyAt > now {
		n.pace(now, r, readyAt)
		return
	}
	if !r.fastTried && n.fastApplies(now, r) {
		n.startFast(now, r, b)
		return
	}
	a := n.newAttempt(now, r, b)
	n.broadcast(Msg{Type: MsgPrepare, Chunk: r.Chunk, Ballot: a.ballot, Server: r.Server})
}

// pace holds a request whose next ballot would lead this node's wall
// clock by more than L (ballot.go): it starts its attempt when the wall
// clock allows, a wake-up, not a spin; if that is past its quorum
// timeout, it fails now, saying why.
func (n *Node) pace(now time.Duration, r *request, readyAt time.Duration) {
	r.att, r.queued, r.retryAt = nil, false, readyAt
	r.pacedMs = max(n.ballots.leadMs(now, r.need), 1)
	if readyAt >= r.deadline {
		n.finishAttempts(now, r, n.grantFailure(r))
	}
}

// fastApplies reports whether a renewal can skip prepare: this node's own
// acceptor holds a live lease of the server, so the server most likely
// holds a majority. Whether it does is the acceptors' call: each accepts
// a fast propose only over a live lease of that same server (onPropose).
func (n *Node) fastApplies(now time.Duration, r *request) bool {
	if !n.serving(now) {
		return false
	}
	a, ok := n.chunks.get(r.Chunk)
	idx, known := n.chunks.names.lookup(r.Server)
	return ok && known && a.holds(now, idx)
}

// startFast is the renewal fast path: one round trip instead of two. The
// deadline starts now, before any acceptor can accept (rule 1), and an
// acceptor accepts only if the ballot keeps its promise and it protects
// no live lease of another server (rule 4's A2, as for any propose): it
// extends the server's protection, or teaches the lease to an acceptor
// that missed it; its token still exceeds every promise of its majority.
// If it cannot reach a majority, the request falls back to the two-phase
// path at once.
func (n *Node) startFast(now time.Duration, r *request, b Ballot) {
	r.fastTried = true
	a := n.newAttempt(now, r, b)
	a.fast, a.phase = true, proposing
	n.sendPropose(r, true)
}

// running returns the request whose attempt holds ballot b for chunk, if
// the attempt is still in phase p.
func (n *Node) running(chunk string, b Ballot, p phase) *request {
	q := n.queues[chunk]
	if len(q) == 0 || q[0].att == nil || q[0].att.ballot != b || q[0].att.phase != p {
		return nil
	}
	return q[0]
}

// onPrepareResp counts one acceptor's answer to prepare. An answer is open
// for server S when the acceptor promised and reports no live lease, or a
// live lease of S itself (rule 3; the paper's extension rule).
func (n *Node) onPrepareResp(now time.Duration, m Msg, idx int) {
	n.learnPromise(now, m, idx)
	r := n.running(m.Chunk, m.Ballot, preparing)
	if r == nil || !r.att.prepared.add(idx) {
		return
	}
	a := r.att
	if !keeps(a.ballot, m.Promised) {
		a.outbid, a.floored = true, a.floored || m.Promised.Incarnation == 0
	}
	s := sampleOf(m.Lease)
	a.samples = append(a.samples, s)
	r.heard = max(r.heard, a.prepared.count())
	if m.OK && (s.server == "" || s.server == r.Server) {
		a.open.add(idx)
	}
	n.dropStickyForHolder(now, r)
	n.decidePrepare(now, r)
}

// dropStickyForHolder cancels the running prepare's sticky promises, while
// the attempt goes on, once an acceptor promised it and an answer
// reports another server's lease that runs longer than a sticky window.
// A sticky promise exists so that the first proposer on a chunk that has
// just become free gets its propose in (sticky.go). While another
// server's lease runs, one that ends before that lease holds off one
// proposer only: the holder, whose renewal must prepare at an acceptor
// that holds no record of its lease (one that restarted) and that
// promised this prepare. With a second acceptor down, the renewal then
// waited a whole round for an open majority and outlived the lease
// (rolling_test.go). Cancelling drops stickiness, never a promise: it is
// what the attempt sends anyway when it gives up, so safety is untouched.
// When no acceptor promised (every one protects the lease, the common
// case of a grant for a held chunk), there is nothing to cancel.
func (n *Node) dropStickyForHolder(now time.Duration, r *request) {
	a := r.att
	if a.cancelled || a.open.count() == 0 {
		return
	}
	for _, s := range a.samples {
		if s.server != "" && s.server != r.Server && a.sentAt+ms(s.remainingMs) > now+n.stickyWindow() {
			a.cancelled = true
			n.broadcast(Msg{Type: MsgCancel, Chunk: r.Chunk, Ballot: a.ballot})
			return
		}
	}
}

// decidePrepare proposes once a majority is open, answers "held by
// another" once a majority can no longer be open and the answers, read as
// a majority read, name one holder; otherwise it waits or retries.
func (n *Node) decidePrepare(now time.Duration, r *request) {
	a, total := r.att, len(n.voters())
	if a.open.count() >= n.quorum {
		n.propose1(now, r)
		return
	}
	if a.floored {
		n.abandon(now, r)
		return
	}
	if a.open.count()+total-a.prepared.count() >= n.quorum {
		return
	}
	holder, decided := n.judge(a.samples)
	if decided && holder != "" && holder != r.Server {
		n.answerHeld(now, r, holder)
		return
	}
	if !decided && a.prepared.count() < total {
		return // an ambiguous read: the remaining answers may settle it
	}
	n.abandon(now, r)
}

// propose1 sends propose to every acceptor, if the deadline allows.
func (n *Node) propose1(now time.Duration, r *request) {
	a := r.att
	if n.cfg.weaken == weakLateTimer {
		a.d = now + r.leaseLen
	}
	if now >= a.d {
		n.abandon(now, r)
		return
	}
	a.phase = proposing
	a.roundEnd = now + ms(n.cfg.RoundTimeoutMs)
	n.sendPropose(r, false)
}

// sendPropose broadcasts the running attempt's propose. From here on the
// request may take effect, so a failure is indefinite (error 0).
func (n *Node) sendPropose(r *request, fast bool) {
	r.proposed = r.proposed || !(fast && n.cfg.weaken == weakFastDefinite)
	n.broadcast(n.proposeMsg(r, fast))
}

func (n *Node) proposeMsg(r *request, fast bool) Msg {
	return Msg{Type: MsgPropose, Chunk: r.Chunk, Ballot: r.att.ballot, Server: r.Server,
		LeaseMs: int64(r.leaseLen / time.Millisecond), Fast: fast, Request: r.ID}
}

// learnPromise learns from an acceptor's answer: the node's counter catches
// up past its promise (within the lead bound), the request running on the
// chunk notes it must climb past it, and the acceptor counts as heard.
func (n *Node) learnPromise(now time.Duration, m Msg, idx int) {
	n.ballots.observe(now, m.Promised.Counter)
	if q := n.queues[m.Chunk]; len(q) > 0 {
		q[0].need = max(q[0].need, m.Promised.Counter)
		q[0].heardFrom |= 1 << uint(idx)
	}
}

// resend sends the running round again, with the same ballot, to the
// acceptors that have not answered it: a round that met only silence
// needs no fresh ballot. The attempt's deadline still counts from its
// first send, and every answer it collected stays valid (an acceptor
// that answered twice counts once).
func (n *Node) resend(now time.Duration, r *request) {
	a := r.att
	a.roundEnd = now + ms(n.cfg.RoundTimeoutMs)
	heard, m := a.prepared, Msg{Type: MsgPrepare, Chunk: r.Chunk, Ballot: a.ballot, Server: r.Server}
	if a.phase == proposing {
		heard, m = a.answered, n.proposeMsg(r, a.fast)
	}
	for i, acc := range n.voters() {
		if !heard.has(i) {
			m.To = acc
			n.send(m)
		}
	}
}

// onProposeResp counts acceptances. A majority before the deadline is
// success; the client is told the time left until d, less the drift
// margin, rounded down.
func (n *Node) onProposeResp(now time.Duration, m Msg, idx int) {
	n.learnPromise(now, m, idx)
	r := n.running(m.Chunk, m.Ballot, proposing)
	if r == nil || !r.att.answered.add(idx) {
		return
	}
	a := r.att
	a.outbid = a.outbid || !keeps(a.ballot, m.Promised)
	if m.OK {
		a.accepted.add(idx)
	}
	if a.accepted.count() >= n.quorum {
		if a.fast && n.cfg.weaken == weakFastLateTimer {
			a.d = now + r.leaseLen
		}
		left := floorMs(a.d - now - n.margin())
		if now < a.d && left > 0 {
			n.answerGranted(now, r, left)
			return
		}
		r.outran = true
		n.abandon(now, r)
		return
	}
	// A fast propose refused for a higher promise falls back at once: that
	// acceptor will never accept its ballot (a competitor prepared there,
	// at an acceptor that does not protect the server's lease, or it
	// would have refused that prepare), so the ballot needs every other
	// acceptor, and with one of them down it waited a whole round
	// (rolling_test.go). The fallback's prepare climbs above the promise
	// and its propose teaches the lease to that acceptor.
	if a.accepted.count()+len(n.voters())-a.answered.count() < n.quorum || a.fast && !m.OK && !keeps(a.ballot, m.Promised) {
		n.proposeFailed(now, r)
	}
}

// proposeFailed handles a propose round that can no longer reach a
// majority: a fast attempt falls back to the two-phase path at once, any
// other is abandoned.
func (n *Node) proposeFailed(now time.Duration, r *request) {
	if r.att.fast {
		n.startAttempt(now, r)
		return
	}
	n.abandon(now, r)
}

func (n *Node) answerGranted(now time.Duration, r *request, leftMs int64) {
	token := r.att.ballot.Token()
	if r.Op == OpGrant {
		n.reply(r, "lease_grant_ok", GrantOK{ChunkHandle: r.Chunk, Primary: r.Server, ExpiresInMs: leftMs, Token: token})
	} else {
		n.reply(r, "lease_renew_ok", RenewOK{NewExpiresInMs: leftMs, Token: token})
	}
	n.answerQueuedHeld(now, r, leftMs, token)
	n.finishAttempts(now, r, nil)
}

// answerQueuedHeld answers the grants and renews of other servers queued
// behind r, which just won the chunk for r.Server: that server now holds
// it for leftMs (a majority accepted, and protects it at least that long),
// so a grant names it as primary and a renew fails with error 22, at once
// instead of one round each. Requests of r.Server itself stay queued: a
// renewal needs an instance and a token of its own.
func (n *Node) answerQueuedHeld(now time.Duration, r *request, leftMs, token int64) {
	for _, q := range n.queues[r.Chunk][1:] {
		if q.Server != r.Server && !q.done {
			n.tellHeld(q, r.Server, leftMs, token)
		}
	}
	q := n.queues[r.Chunk]
	n.queues[r.Chunk] = slices.DeleteFunc(q, func(x *request) bool { return x != r && x.done })
}

// answerHeld tells the client who holds the chunk: a grant succeeds with
// the holder as primary (nothing changed), a renew fails with error 22.
// The remaining time is how long the answers prove the holder protected
// (protectedMs), counted from when prepare was sent.
func (n *Node) answerHeld(now time.Duration, r *request, holder string) {
	a := r.att
	n.sendCancel(r)
	rem := n.protectedMs(a.samples, holder)
	left := floorMs(a.sentAt + ms(rem) - now - n.margin())
	n.tellHeld(r, holder, left, latestToken(a.samples, holder))
	n.finishAttempts(now, r, nil)
}

// tellHeld answers grant or renew q with another server's lease: holder
// holds the chunk for leftMs under token. A grant succeeds naming the
// holder as primary (nothing changed); a renew fails with error 22.
func (n *Node) tellHeld(q *request, holder string, leftMs, token int64) {
	if q.Op == OpGrant {
		n.reply(q, "lease_grant_ok", GrantOK{ChunkHandle: q.Chunk, Primary: holder, ExpiresInMs: leftMs, Token: token})
		return
	}
	n.fail(q, heldByOther(q.Chunk, holder, q.Server, leftMs))
}

// abandon gives up the running attempt; its late answers are ignored. The
// request retries after a random backoff, or fails if that would pass its
// deadline.
func (n *Node) abandon(now time.Duration, r *request) {
	n.sendCancel(r)
	r.att = nil
	r.tries++
	r.retryAt = now + n.backoff(r.tries)
	if r.retryAt >= r.deadline {
		n.finishAttempts(now, r, n.grantFailure(r))
	}
}

// grantFailure is the error for a grant or renew that ran out of time:
// definite (11) only if no propose was ever sent for it; otherwise an
// acceptor may have recorded the lease, so it is indefinite (0).
func (n *Node) grantFailure(r *request) *Error {
	if r.pacedMs > 0 {
		return n.counterAhead(r)
	}
	if !r.proposed {
		return n.noMajority(r, "no propose was sent, so nothing was granted")
	}
	if r.outran {
		return timedOut("a majority of the acceptors accepted the lease, but its %d ms, less the drift margin of %d ms, "+
			"ran out before their answers arrived; it blocks others until it expires, but no client was told of it: "+
			"ask for a longer lease_ms", floorMs(r.leaseLen), n.cfg.DriftMarginMs)
	}
	return timedOut("proposes were sent but no majority %s; "+
		"the lease may have been recorded by some acceptors (it blocks others until it expires) but no client was told of it: "+
		"do not act as primary; check or grant again", n.quorumText(r))
}

// counterAhead is the error of a request whose ballot would have led this
// node's wall clock by more than L for longer than its quorum timeout.
func (n *Node) counterAhead(r *request) *Error {
	why := fmt.Sprintf("the ballot this %s needs is %d ms ahead of this node's wall clock, and a node never issues one more than "+
		"%d ms ahead (so that fencing tokens stay ordered across restarts): the acceptors promised a ballot from a node whose "+
		"wall clock is ahead of this one's, so the nodes' clocks may disagree by more than %d ms (check their time sync), "+
		"or this node ran past 10 000 ballots a second; retry through another node or later",
		r.Op, r.pacedMs, n.ballots.leadLimitMs(), n.ballots.leadLimitMs())
	if r.proposed {
		return timedOut("%s; an earlier attempt's propose went out and may have been recorded: do not act as primary", why)
	}
	return unavailable("%s; nothing was granted", why)
}

// attemptTimer handles a round timeout, a passed deadline or the end of a
// backoff.
func (n *Node) attemptTimer(now time.Duration, r *request) {
	switch {
	case r.queued:
	case r.att != nil && r.att.fast && now >= r.att.roundEnd && now < r.att.d:
		n.startAttempt(now, r)
	case r.att != nil && now >= r.att.roundEnd && now < r.att.d && !r.att.outbid:
		n.resend(now, r)
	case r.att != nil && (now >= r.att.roundEnd || now >= r.att.d):
		n.abandon(now, r)
	case r.att == nil && now >= r.retryAt:
		n.startAttempt(now, r)
	}
}

// finishAttempts answers r (with err, unless a reply was already sent),
// removes it from its chunk's queue and starts the next request there.
func (n *Node) finishAttempts(now time.Duration, r *request, err *Error) {
	if err != nil {
		n.fail(r, err)
	}
	n.retireAttempt(r.att)
	r.att = nil
	q := n.queues[r.Chunk]
	i := slices.Index(q, r)
	if i < 0 {
		return
	}
	q = slices.Delete(q, i, i+1)
	if len(q) == 0 {
		delete(n.queues, r.Chunk)
		n.keepQueue(q)
		return
	}
	n.queues[r.Chunk] = q
	if i == 0 && q[0].queued {
		n.takeSlot(now, q[0])
		n.startAttempt(now, q[0])
	}
}

// sampleOf is what one answer says about the live lease: its server,
// remaining time and token, or nothing when none is live.
func sampleOf(rec *Record) sample {
	if rec == nil || rec.Expired {
		return sample{}
	}
	return sample{server: rec.Server, remainingMs: rec.RemainingMs, token: rec.Token}
}

// serversOf lists the server each answer reported live ("" for none), the
// input of judgeRead.
func serversOf(samples []sample) []string {
	out := make([]string, len(samples))
	for i, s := range samples {
		out[i] = s.server
	}
	return out
}

// protectedMs is how long, from when the answers were asked for, the
// answers prove that server's lease protected: fewer than a majority of
// the n acceptors can be free of it before then. Sorting the n
// acceptors' remaining times for server (0 for an acceptor that reported
// none, another server, or did not answer), a majority is free only from
// the q-th smallest on, which is the (n-q+1)-th largest reported. So no
// other server can be granted the chunk within that time unless the
// holder releases; and, with every acceptor answering, it is at least the
// holder's own remaining time, since its majority reported at least that.
func protectedMs(samples []sample, server string, n, q int) int64 {
	return kthLargest(samples, server, n-q+1)
}

// kthLargest is the k-th largest remaining time reported for server, 0
// when fewer than k acceptors reported it.
func kthLargest(samples []sample, server string, k int) int64 {
	var buf [inlineSamples]int64 // on the stack for the usual cluster
	rem := buf[:0]
	for _, s := range samples {
		if s.server == server {
			rem = append(rem, s.remainingMs)
		}
	}
	if len(rem) < k {
		return 0
	}
	slices.Sort(rem)
	return rem[len(rem)-k]
}

// protectedMs applies protectedMs with this node's acceptor set. With
// membership the q-th largest time counts instead of the (n-q+1)-th (the
// same for odd n): q members protect the holder that long, and q
// members meet every majority of this configuration and of the next
// (doc.go "Membership", reads across one change).
func (n *Node) protectedMs(samples []sample, server string) int64 {
	switch {
	case n.cfg.weaken == weakReadMax:
		return kthLargest(samples, server, 1)
	case n.cfg.Membership:
		return kthLargest(samples, server, n.quorum)
	}
	return protectedMs(samples, server, len(n.voters()), n.quorum)
}

// judge reads the answers as a majority read (judgeRead) in this node's
// configuration. With membership a holder granted under the previous
// configuration is reported by at least r - floor(n/2) of r answers (the
// same threshold as q + r - n for odd n; doc.go "Membership").
func (n *Node) judge(samples []sample) (holder string, decided bool) {
	servers, total := serversOf(samples), len(n.voters())
	if n.cfg.Membership {
		return judgeReadAt(servers, n.quorum, len(servers)-total/2)
	}
	return judgeRead(servers, total, n.quorum)
}

// latestToken is the largest token reported for server.
func latestToken(samples []sample, server string) int64 {
	var t int64
	for _, s := range samples {
		if s.server == server {
			t = max(t, s.token)
		}
	}
	return t
}

// maxSpareQueues is how many emptied chunk queues a node keeps for reuse.
const maxSpareQueues = 64

// keepQueue keeps q, emptied (slices.Delete cleared what it held), for
// the next chunk whose queue starts: a renewal, which queues alone on its
// chunk, then allocates no queue.
func (n *Node) keepQueue(q []*request) {
	if len(n.spareQueues) < maxSpareQueues && cap(q) <= 4 {
		n.spareQueues = append(n.spareQueues, q[:0])
	}
}

// spareQueue is an empty queue to start a chunk's with (nil if none is kept).
func (n *Node) spareQueue() []*request {
	k := len(n.spareQueues)
	if k == 0 {
		return nil
	}
	q := n.spareQueues[k-1]
	n.spareQueues[k-1] = nil
	n.spareQueues = n.spareQueues[:k-1]
	return q
}
