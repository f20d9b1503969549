package lease

import "time"

// acceptor is one chunk's acceptor state, kept in memory only (paper
// section 3). An idle chunk instance is exactly this struct.
type acceptor struct {
	// promised is the highest ballot this acceptor promised; it only grows
	// (until the process restarts, which the boot wait covers).
	promised Ballot
	// rec is the last accepted lease, kept after it expires so a check can
	// name the last holder.
	rec record
}

// record is an accepted lease as the acceptor stores it, in its own clock.
type record struct {
	server string
	ballot Ballot
	// endAt is acceptance + T: what a read reports as remaining.
	endAt time.Duration
	// liveUntil is acceptance + T*(1+rho)/(1-rho): until then no proposal
	// of another server is accepted and the lease is reported as live.
	liveUntil time.Duration
}

func (r *record) live(now time.Duration) bool { return r.server != "" && now < r.liveUntil }

// report renders the record for a response; nil when there is nothing to
// report (never accepted, or expired and onlyLive).
func (r *record) report(now time.Duration, onlyLive bool) *Record {
	live := r.live(now)
	if r.server == "" || (onlyLive && !live) {
		return nil
	}
	return &Record{Server: r.server, Ballot: r.ballot, RemainingMs: floorMs(r.endAt - now), Expired: !live}
}

// onPrepare promises ballot b if it is not below the promise (rule 4) and
// reports the live lease either way, so the answer doubles as a read.
func (a *acceptor) onPrepare(now time.Duration, b Ballot) (ok bool, rec *Record) {
	if !b.Less(a.promised) {
		a.promised = b
		ok = true
	}
	return ok, a.rec.report(now, true)
}

// onPropose accepts (server, T) at ballot b only if b is not below the
// promise AND no other server's lease is live here (rule 4, the revision's
// A2): an accept left in flight by an abandoned attempt must never replace
// a lease somebody holds. Accepting raises the promise.
func (a *acceptor) onPropose(now time.Duration, b Ballot, server string, leaseLen time.Duration, w weakening, ppm int64) (ok bool, rec *Record) {
	if b.Less(a.promised) {
		return false, a.rec.report(now, true)
	}
	if w != weakOverwrite && a.rec.live(now) && a.rec.server != server {
		return false, a.rec.report(now, true)
	}
	exclusion := stretch(leaseLen, ppm)
	if w == weakNoStretch {
		exclusion = leaseLen
	}
	a.promised = b
	a.rec = record{server: server, ballot: b, endAt: now + leaseLen, liveUntil: now + exclusion}
	return true, a.rec.report(now, true)
}

// onRelease drops the lease only if it is exactly (server, b) and live
// (rule 6): a release that arrives late never erases a newer lease of the
// same server. The record keeps the server so a check can still name it.
func (a *acceptor) onRelease(now time.Duration, b Ballot, server string, w weakening) bool {
	match := a.rec.server == server && (a.rec.ballot == b || w == weakReleaseByServer)
	if !match || !a.rec.live(now) {
		return false
	}
	a.rec.endAt, a.rec.liveUntil = now, now
	return true
}

// accept serves a request addressed to this node's acceptor. A node outside
// the acceptor set, or one still in its boot wait (rule 7), stays silent:
// a restarted acceptor has forgotten leases it may have accepted, and must
// not vote, report or release until every one of them has ended.
func (n *Node) accept(now time.Duration, m Msg) {
	if _, ok := n.accIdx[n.cfg.ID]; !ok || now < n.bootUntil || m.Chunk == "" {
		return
	}
	n.ballots.observe(m.Ballot)
	resp := Msg{Type: respType(m.Type), To: m.From, Chunk: m.Chunk, Ballot: m.Ballot, ReadID: m.ReadID}
	if m.Type == MsgRead {
		a := n.chunks[m.Chunk]
		resp.Lease, resp.Promised = a.rec.report(now, false), a.promised
		n.send(resp)
		return
	}
	a, known := n.chunks[m.Chunk]
	switch m.Type {
	case MsgPrepare:
		resp.OK, resp.Lease = a.onPrepare(now, n.internBallot(m.Ballot))
	case MsgPropose:
		resp.Server, resp.LeaseMs = m.Server, m.LeaseMs
		resp.OK, resp.Lease = n.propose(now, &a, m)
	case MsgRelease:
		resp.Server = m.Server
		resp.OK = a.onRelease(now, m.Ballot, m.Server, n.cfg.weaken)
	}
	resp.Promised = a.promised
	if known || m.Type != MsgRelease {
		n.chunks[m.Chunk] = a
	}
	n.send(resp)
}

// propose refuses a lease longer than M or without a server outright: the
// boot wait only covers leases up to M, so accepting a longer one from a
// misconfigured peer would break the restart rule.
func (n *Node) propose(now time.Duration, a *acceptor, m Msg) (bool, *Record) {
	if m.LeaseMs <= 0 || m.LeaseMs > n.cfg.MaxLeaseMs || m.Server == "" {
		return false, a.rec.report(now, true)
	}
	return a.onPropose(now, n.internBallot(m.Ballot), n.intern(m.Server),
		ms(m.LeaseMs), n.cfg.weaken, n.cfg.DriftPPM)
}

func respType(t MsgType) MsgType { return t + "_ok" }

func (n *Node) internBallot(b Ballot) Ballot {
	b.Node = n.intern(b.Node)
	return b
}
