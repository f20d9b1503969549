package lease

import "time"

type phase uint8

const (
	preparing phase = iota
	proposing
)

// attempt is one ballot's try at granting or renewing a lease.
type attempt struct {
	ballot Ballot
	phase  phase
	// d is the attempt deadline, prepare send time + T (rule 1). Propose
	// is sent and success reported only while now < d; the client is told
	// d - now. Every prepare answer this attempt collects is at most T old
	// when it is used, whatever happens to acceptors meanwhile.
	d         time.Duration
	prepareAt time.Duration
	roundEnd  time.Duration

	prepared tally // acceptors that answered prepare
	open     tally // ... promised, reporting no live lease or one of the requester
	answered tally // acceptors that answered propose
	accepted tally // ... and accepted
	samples  []sample
}

// sample is one acceptor's report of the live lease it holds.
type sample struct {
	server      string // "" when none is live
	remainingMs int64
}

// enqueue runs grant and renew requests of one chunk one at a time at this
// node, so a node never duels with itself for a chunk.
func (n *Node) enqueue(now time.Duration, r *request) {
	q := n.queues[r.Chunk]
	n.queues[r.Chunk] = append(q, r)
	if len(q) > 0 {
		r.queued = true
		return
	}
	n.startAttempt(now, r)
}

func (n *Node) newTally() tally { return tally{perMessage: n.cfg.weaken == weakPerMessage} }

// startAttempt sends prepare for a fresh ballot and starts the deadline.
func (n *Node) startAttempt(now time.Duration, r *request) {
	r.queued = false
	a := &attempt{
		ballot:    n.ballots.next(),
		d:         now + r.leaseLen,
		prepareAt: now,
		roundEnd:  now + ms(n.cfg.RoundTimeoutMs),
		prepared:  n.newTally(), open: n.newTally(), answered: n.newTally(), accepted: n.newTally(),
	}
	r.att = a
	n.broadcast(Msg{Type: MsgPrepare, Chunk: r.Chunk, Ballot: a.ballot})
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
	n.ballots.observe(m.Promised)
	r := n.running(m.Chunk, m.Ballot, preparing)
	if r == nil || !r.att.prepared.add(idx) {
		return
	}
	a := r.att
	s := sampleOf(m.Lease)
	a.samples = append(a.samples, s)
	r.heard = max(r.heard, a.prepared.count())
	if m.OK && (s.server == "" || s.server == r.Server) {
		a.open.add(idx)
	}
	n.decidePrepare(now, r)
}

// decidePrepare proposes once a majority is open, answers "held by
// another" once a majority can no longer be open and the answers, read as
// a majority read, name one holder; otherwise it waits or retries.
func (n *Node) decidePrepare(now time.Duration, r *request) {
	a, total := r.att, len(n.cfg.Acceptors)
	if a.open.count() >= n.quorum {
		n.propose1(now, r)
		return
	}
	if a.open.count()+total-a.prepared.count() >= n.quorum {
		return
	}
	holder, decided := judgeRead(serversOf(a.samples), total, n.quorum)
	if decided && holder != "" && holder != r.Server {
		n.answerHeld(now, r, holder)
		return
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
	n.broadcast(Msg{Type: MsgPropose, Chunk: r.Chunk, Ballot: a.ballot,
		Server: r.Server, LeaseMs: int64(r.leaseLen / time.Millisecond)})
}

// onProposeResp counts acceptances. A majority before the deadline is
// success; the client is told the time left until d, less the drift
// margin, rounded down.
func (n *Node) onProposeResp(now time.Duration, m Msg, idx int) {
	n.ballots.observe(m.Promised)
	r := n.running(m.Chunk, m.Ballot, proposing)
	if r == nil || !r.att.answered.add(idx) {
		return
	}
	a := r.att
	if m.OK {
		a.accepted.add(idx)
	}
	if a.accepted.count() >= n.quorum {
		left := floorMs(a.d - now - ms(n.cfg.DriftMarginMs))
		if now < a.d && left > 0 {
			n.answerGranted(now, r, left)
			return
		}
		n.abandon(now, r)
		return
	}
	if a.accepted.count()+len(n.cfg.Acceptors)-a.answered.count() < n.quorum {
		n.abandon(now, r)
	}
}

func (n *Node) answerGranted(now time.Duration, r *request, leftMs int64) {
	if r.Op == OpGrant {
		n.reply(r, "lease_grant_ok", GrantOK{ChunkHandle: r.Chunk, Primary: r.Server, ExpiresInMs: leftMs})
	} else {
		n.reply(r, "lease_renew_ok", RenewOK{NewExpiresInMs: leftMs})
	}
	n.finishAttempts(now, r, nil)
}

// answerHeld tells the client who holds the chunk: a grant succeeds with
// the holder as primary (nothing changed), a renew fails with error 22.
// The remaining time is the smallest the holder's acceptors reported,
// counted from when prepare was sent.
func (n *Node) answerHeld(now time.Duration, r *request, holder string) {
	a := r.att
	left := floorMs(a.prepareAt + ms(a.minRemainingMs(holder)) - now - ms(n.cfg.DriftMarginMs))
	if r.Op == OpGrant {
		n.reply(r, "lease_grant_ok", GrantOK{ChunkHandle: r.Chunk, Primary: holder, ExpiresInMs: left})
		n.finishAttempts(now, r, nil)
		return
	}
	n.finishAttempts(now, r, heldByOther(r.Chunk, holder, r.Server, left))
}

// abandon gives up the running attempt; its late answers are ignored. The
// request retries after a random backoff, or fails if that would pass its
// deadline.
func (n *Node) abandon(now time.Duration, r *request) {
	r.att = nil
	r.tries++
	r.retryAt = now + n.backoff(r.tries)
	if r.retryAt >= r.deadline {
		n.finishAttempts(now, r, n.noMajority(r, "nothing was granted"))
	}
}

// attemptTimer handles a round timeout, a passed deadline or the end of a
// backoff.
func (n *Node) attemptTimer(now time.Duration, r *request) {
	switch {
	case r.queued:
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
	r.att = nil
	q := n.queues[r.Chunk]
	i := 0
	for i < len(q) && q[i] != r {
		i++
	}
	if i == len(q) {
		return
	}
	q = append(q[:i], q[i+1:]...)
	if len(q) == 0 {
		delete(n.queues, r.Chunk)
		return
	}
	n.queues[r.Chunk] = q
	if i == 0 && q[0].queued {
		n.startAttempt(now, q[0])
	}
}

// sampleOf is what one answer says about the live lease: its server and
// remaining time, or nothing when none is live.
func sampleOf(rec *Record) sample {
	if rec == nil || rec.Expired {
		return sample{}
	}
	return sample{server: rec.Server, remainingMs: rec.RemainingMs}
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

func (a *attempt) minRemainingMs(server string) int64 {
	return minRemaining(a.samples, server)
}

func minRemaining(samples []sample, server string) int64 {
	best := int64(-1)
	for _, s := range samples {
		if s.server == server && (best < 0 || s.remainingMs < best) {
			best = s.remainingMs
		}
	}
	return max(best, 0)
}
