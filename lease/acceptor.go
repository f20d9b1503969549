package lease

import "time"

// acceptor is one chunk's acceptor state, kept in memory only (paper
// section 3). An idle chunk instance (no lease protected) is this struct
// with a nil lease: 24 bytes, packed because a node may keep millions.
type acceptor struct {
	// promised and incTag are the highest ballot this acceptor promised or
	// accepted: its counter, and the low 32 bits of its incarnation, which
	// is all the promise test needs to tell a reissued counter from a
	// duplicate (atLeast). It only grows (until the process restarts, which
	// the boot wait and recovery cover, or the instance is reclaimed, which
	// the node's floor covers).
	promised uint64
	incTag   uint32
	// meta holds the holder of the latest lease instance accepted (an
	// interned server id, names.go; 0: never accepted), kept after the
	// lease ends so a check can name the last holder, and the idle mark of
	// reclaim.go in its top bit.
	meta uint32
	// lease is what is protected while any instance of server may still
	// run; nil once everything ended.
	lease *protection
}

// protection is the union of every instance of one server this acceptor
// accepted while that server's lease was live (rule 10:
// protection never shrinks, whatever length a later instance asked for).
// The latest two instances are kept by token, older ones as one span
// with the largest token among them (restToken). Tokens grow in the
// order instances are accepted here (accepting raises the promise), so
// rest < prev < own. A release with token t ends every kept instance
// whose token is <= t, and the span once t >= restToken (rule 6): one
// release with the latest token gives the chunk back, and a release never
// ends an instance with a larger token.
type protection struct {
	own, prev instance
	rest      span
	restToken uint64
}

// instance is one accepted lease instance.
type instance struct {
	token    uint64
	released bool
	span
}

// span is one protection: until end the lease is reported as running
// (what a read reports as remaining), until live no other server's
// proposal is accepted (end stretched by the drift factor, rule 5).
type span struct {
	end, live time.Duration
}

func (s span) union(o span) span { return span{max(s.end, o.end), max(s.live, o.live)} }

// total is the whole protection.
func (p *protection) total() span { return p.own.span.union(p.prev.span).union(p.rest) }

const idleBit = 1 << 31

// server is the interned id of the latest holder.
func (a *acceptor) server() uint32 { return a.meta &^ idleBit }

// idle reports whether nothing was protected at the last sweep.
func (a *acceptor) idle() bool { return a.meta&idleBit != 0 }

func (a *acceptor) setIdle(idle bool) {
	a.meta &^= idleBit
	if idle {
		a.meta |= idleBit
	}
}

// promise is the promised ballot, with the incarnation's low 32 bits.
func (a *acceptor) promise() Ballot {
	return Ballot{Counter: a.promised, Incarnation: int64(a.incTag)}
}

// promiseBallot records b as the promise.
func (a *acceptor) promiseBallot(b Ballot) { a.promised, a.incTag = b.Counter, uint32(b.Incarnation) }

// keeps is the promise test (rule 4): b is the promised ballot itself or
// has a strictly larger counter than p; a different ballot with the same
// counter can only come from a restarted proposer that reissued a
// counter, and is refused, which keeps one token per lease instance.
func keeps(b, p Ballot) bool {
	return b.Counter > p.Counter || (b.Counter == p.Counter && uint32(b.Incarnation) == uint32(p.Incarnation))
}

// live reports whether any instance is protected at now; an ended
// protection is dropped on the way, so idle chunks keep no lease state.
func (a *acceptor) live(now time.Duration) bool {
	if a.lease == nil {
		return false
	}
	if now < a.lease.total().live {
		return true
	}
	a.lease = nil
	return false
}

// holds reports whether server's lease is live here.
func (a *acceptor) holds(now time.Duration, server uint32) bool {
	return a.live(now) && a.server() == server
}

// accepted reports whether ballot b of server is the latest instance
// accepted here and still protected: a duplicated propose must not create
// it a second time. (A duplicate that arrives after the instance ended is
// accepted again: a protection nobody believes in, which only delays
// other servers until it ends.)
func (a *acceptor) accepted(b Ballot, server uint32) bool {
	return a.lease != nil && a.server() == server && a.lease.own.token == b.Counter && keeps(b, a.promise())
}

// onPrepare promises ballot b for server unless another server's lease
// is live here: then the prepare cannot be open, and promising would only
// push the holder's next renewal off its ballot (renew starvation). Either
// way it reports the live lease, so the answer doubles as a read.
func (n *Node) onPrepare(now time.Duration, chunk string, a *acceptor, b Ballot, server uint32) bool {
	live := a.live(now)
	if live && a.server() != server && n.cfg.weaken != weakOverwrite {
		return false
	}
	if !live && n.stickyRefuses(now, chunk, server, b) {
		return false
	}
	if !keeps(b, n.promiseOf(a)) {
		return false
	}
	a.promiseBallot(b)
	if !live {
		n.notePromise(now, chunk, server, b)
	}
	return true
}

// onPropose accepts (server, T) at ballot b only if b keeps the promise
// AND no other server's lease is live here (rule 4, the revision's A2): an
// accept left in flight by an abandoned attempt must never replace a lease
// somebody holds. A fast (prepare-less) propose is accepted under the
// same two conditions: over a live lease of the same server it extends
// the protection; on an acceptor that protects no live lease (one that
// restarted, or missed the last renewals) it teaches it the lease, so
// that it stops promising other servers' prepares, which the holder
// would otherwise have to outbid (doc.go, "The renewal fast path"). An
// instance of the server that holds the record is merged (rule 10).
// Accepting raises the promise.
func (n *Node) onPropose(now time.Duration, a *acceptor, b Ballot, server uint32, leaseLen time.Duration, fast bool) bool {
	w := n.cfg.weaken
	switch {
	case w != weakNoPromiseCheck && !(fast && w == weakFastNoPromise) && !keeps(b, n.promiseOf(a)):
		return false
	case w != weakOverwrite && a.live(now) && a.server() != server && !(w == weakA2Unstretched && now >= a.lease.total().end):
		return false
	case a.accepted(b, server):
		// A duplicate: already done, unless released since.
		return !a.lease.own.released
	}
	own := instance{token: b.Counter, span: span{now + leaseLen, now + stretch(leaseLen, n.cfg.DriftPPM)}}
	if w == weakNoStretch {
		own.live = own.end
	}
	p := protection{own: own}
	if a.holds(now, server) && w != weakShrink {
		old := a.lease
		p.prev, p.rest = old.own, old.prev.span.union(old.rest)
		p.restToken = max(old.prev.token, old.restToken)
	}
	a.promiseBallot(b)
	// The chunk's protection is rewritten in place (nothing else keeps a
	// pointer to it; onRelease writes through it too): an accept, the
	// one event of every renewal, then allocates nothing.
	if a.lease == nil {
		a.lease = new(protection)
	}
	a.meta, *a.lease = server, p
	return true
}

// onRelease ends every instance of server here whose token is <= token,
// and reports whether it ended any (rule 6): a release that arrives late
// never ends a newer instance of the same server, whose token is larger,
// and one release with the latest token gives back everything its
// server held, however often it was renewed. The newer instance keeps its
// own span: ending older ones never shortens its protection.
//
// A token above this acceptor's promise names no ballot that reached it:
// not a token its server got here (a client's mistake, or a forgery), and
// possibly larger than tokens issued after the release was sent, so it
// ends nothing here. A real token was accepted by a majority, whose
// members promised at least that much.
func (n *Node) onRelease(now time.Duration, a *acceptor, server uint32, token int64) bool {
	if !a.holds(now, server) || uint64(token) > n.promiseOf(a).Counter {
		return false
	}
	p, t, w := a.lease, uint64(token), n.cfg.weaken
	ended := false
	for _, in := range []*instance{&p.own, &p.prev} {
		match := in.token <= t
		switch {
		case w == weakReleaseByServer:
			match = in == &p.own
		case w == weakReleaseExact:
			match = in.token == t
		}
		if match && !in.released && now < in.live {
			in.span, in.released, ended = span{now, now}, true, true
		}
	}
	if p.restToken <= t && now < p.rest.live && w != weakReleaseByServer && w != weakReleaseExact {
		p.rest, ended = span{now, now}, true
	}
	return ended
}

// promiseOf is the chunk's effective promise: its own, or the node's
// floor (recovered after a restart, or left by reclaimed instances) when
// that is higher.
func (n *Node) promiseOf(a *acceptor) Ballot {
	if a.promised < n.floor {
		return Ballot{Counter: n.floor}
	}
	return a.promise()
}

// report renders the lease for a response, and whether there is one to
// report (none: never accepted, or ended and onlyLive).
func (n *Node) report(now time.Duration, a *acceptor, onlyLive bool) (Record, bool) {
	live := a.live(now)
	if a.server() == 0 || (onlyLive && !live) {
		return Record{}, false
	}
	rec := Record{Server: n.serverName(a.server()), Expired: !live}
	if live {
		rec.Token, rec.RemainingMs = int64(a.lease.own.token), floorMs(a.lease.total().end-now)
	}
	return rec, true
}

// attachRecord sets resp's Lease to rec. An answer to this node's own
// proposer is handled within the same call (send, finish), so its Record
// takes a slot of selfRecords, which finish reuses once those answers
// are handled, instead of an allocation each; an answer that leaves the
// node gets a Record of its own.
func (n *Node) attachRecord(resp *Msg, rec Record) {
	if resp.To != n.cfg.ID || !n.handledHere(resp) {
		resp.Lease = new(Record) // not &rec: rec would escape on both paths
		*resp.Lease = rec
		return
	}
	n.selfRecords = append(n.selfRecords, rec)
	resp.Lease = &n.selfRecords[len(n.selfRecords)-1]
}

// serving reports whether this node's acceptor answers lease messages: it
// is a member of its configuration and past its boot wait (rule 7). A
// restarted acceptor has forgotten leases it may have accepted, and must
// not vote, report or release until every one of them has ended. Without
// membership recovery does not hold it back (recovery.go): its floor is
// in force from the start. With membership it does: a restarted member
// also forgot its configuration (doc.go "Membership", "Restarts").
func (n *Node) serving(now time.Duration) bool {
	return n.member() && now >= n.bootUntil && !(n.cfg.Membership && n.recovering)
}

// accept serves a request addressed to this node's acceptor. In its boot
// wait it does nothing but say so (booting), except to a cancel, which
// needs no answer. A request that carries a newer configuration is
// adopted first; one of another epoch is refused (refuseEpoch).
func (n *Node) accept(now time.Duration, m Msg) {
	if m.Conf != nil && m.Type != MsgSync {
		n.adopt(now, *m.Conf)
	}
	switch m.Type {
	case MsgSync:
		n.answerSync(m)
		return
	case MsgConfig:
		n.send(Msg{Type: MsgConfigResp, To: m.From, Epoch: n.conf.Epoch})
		return
	case MsgChangePrepare, MsgChangePropose:
		n.acceptChange(now, m)
		return
	}
	if n.refuseEpoch(m) {
		return
	}
	if !n.serving(now) {
		if n.member() && m.Type != MsgCancel {
			n.answerBooting(now, m)
		}
		return
	}
	n.ballots.observe(now, m.Ballot.Counter)
	resp := Msg{Type: m.Type.Answer(), To: m.From, Chunk: m.Chunk, Ballot: m.Ballot, ReqID: m.ReqID, Nonce: m.Nonce, Epoch: n.conf.Epoch}
	a, known := n.chunks.get(m.Chunk)
	var rec Record
	var has bool
	switch m.Type {
	case MsgRead:
		rec, has = n.report(now, &a, false)
	case MsgPrepare:
		resp.OK = n.onPrepare(now, m.Chunk, &a, m.Ballot, n.intern(m.Server))
		rec, has = n.report(now, &a, true)
	case MsgPropose:
		n.noteProposed(now, m.Chunk, m.Ballot)
		resp.Server, resp.LeaseMs = m.Server, m.LeaseMs
		resp.OK = n.propose(now, &a, m)
		rec, has = n.report(now, &a, true)
	case MsgRelease:
		resp.Server, resp.Token = m.Server, m.Token
		resp.OK = known && n.onRelease(now, &a, n.intern(m.Server), m.Token)
	case MsgCancel:
		resp.OK = n.cancelSticky(m.Chunk, m.Ballot)
	}
	resp.Promised = n.promiseOf(&a)
	n.promisedHigh = max(n.promisedHigh, resp.Promised.Counter)
	if known || resp.OK && (m.Type == MsgPrepare || m.Type == MsgPropose) {
		n.touch(now, m.Chunk, a)
	}
	if has {
		n.attachRecord(&resp, rec)
	}
	n.send(resp)
}

// propose refuses a lease longer than M outright: the boot wait only
// covers leases up to M, so accepting a longer one from a misconfigured
// peer would break the restart rule.
func (n *Node) propose(now time.Duration, a *acceptor, m Msg) bool {
	if m.LeaseMs <= 0 || m.LeaseMs > n.cfg.MaxLeaseMs {
		return false
	}
	return n.onPropose(now, a, m.Ballot, n.intern(m.Server), ms(m.LeaseMs), m.Fast)
}

// Answer is the type of an acceptor's answer to a message of type t
// (prepare -> prepare_ok, ...).
func (t MsgType) Answer() MsgType {
	switch t { // the constants, so that the hot path builds no string
	case MsgPrepare:
		return MsgPrepareResp
	case MsgPropose:
		return MsgProposeResp
	case MsgRead:
		return MsgReadResp
	case MsgRelease:
		return MsgReleaseResp
	case MsgCancel:
		return MsgCancelResp
	case MsgSync:
		return MsgSyncResp
	}
	return t + "_ok"
}

// refuseEpoch answers a lease request of another epoch than the node's,
// doing nothing else: a lower one with the node's configuration, which
// the proposer adopts; a higher one with the node's epoch, so that the
// proposer sends it again with its configuration (askAgain). A node that
// has learnt no configuration yet (joining) votes on nothing and says
// nothing.
func (n *Node) refuseEpoch(m Msg) bool {
	switch {
	case m.Type == MsgCancel:
		return false
	case !n.known:
		return true
	case m.Epoch == n.conf.Epoch:
		return false
	}
	resp := Msg{Type: m.Type.Answer(), To: m.From, Chunk: m.Chunk, Ballot: m.Ballot, ReqID: m.ReqID, Nonce: m.Nonce, Epoch: n.conf.Epoch}
	if m.Epoch < n.conf.Epoch {
		resp.Conf = n.confMsg()
	}
	n.send(resp)
	return true
}
