package lease

import "time"

// readRound is one majority read: read is sent to every acceptor and the
// answers are judged by judgeRead. A read changes no acceptor state, so a
// check never makes a concurrent grant or renew fail.
type readRound struct {
	id       uint64
	sentAt   time.Duration
	roundEnd time.Duration
	heard    tally
	samples  []sample
	// last is the record with the highest ballot seen, live or expired:
	// the "most recent holder" a check names when nobody holds the chunk.
	last *Record
}

// startRead begins a new read round for a check or a release.
func (n *Node) startRead(now time.Duration, r *request) {
	n.readSeq++
	rd := &readRound{id: n.readSeq, sentAt: now, roundEnd: now + ms(n.cfg.RoundTimeoutMs), heard: n.newTally()}
	if r.rd != nil {
		delete(n.reads, r.rd.id)
	}
	r.rd = rd
	n.reads[rd.id] = r
	n.broadcast(Msg{Type: MsgRead, Chunk: r.Chunk, ReadID: rd.id})
}

// onReadResp records one acceptor's answer and decides if it can.
func (n *Node) onReadResp(now time.Duration, m Msg, idx int) {
	r := n.reads[m.ReadID]
	if r == nil || r.Chunk != m.Chunk || !r.rd.heard.add(idx) {
		return
	}
	rd := r.rd
	if rec := m.Lease; rec != nil && (rd.last == nil || rd.last.Ballot.Less(rec.Ballot)) {
		rd.last = rec
	}
	rd.samples = append(rd.samples, sampleOf(m.Lease))
	r.heard = max(r.heard, rd.heard.count())
	if r.Op == OpCheck {
		n.decideCheck(now, r)
		return
	}
	n.releaseSeen(r, m.Lease)
	if rd.heard.count() >= n.quorum {
		n.finishRelease(r)
	}
}

// decideCheck answers a check once the read names one holder or proves
// there is none. An ambiguous read waits for more answers, then is read
// again at the round timeout, and answers error 11 at the deadline rather
// than guess.
func (n *Node) decideCheck(now time.Duration, r *request) {
	rd := r.rd
	holder, decided := judgeRead(serversOf(rd.samples), len(n.cfg.Acceptors), n.quorum)
	if !decided {
		return
	}
	delete(n.reads, rd.id)
	if holder != "" {
		left := floorMs(rd.sentAt + ms(minRemaining(rd.samples, holder)) - now - ms(n.cfg.DriftMarginMs))
		n.reply(r, "lease_check_ok", CheckOK{Primary: &holder, RemainingMs: left})
		return
	}
	body := CheckOK{Expired: true}
	if rd.last != nil {
		body.Primary = &rd.last.Server
	}
	n.reply(r, "lease_check_ok", body)
}

// releaseSeen sends release for a live lease of the requesting server that
// an acceptor reported, once per ballot, to every acceptor. Release names
// the exact (server, ballot) (rule 6), so if this message arrives after the
// server was granted the chunk again, the newer lease survives.
func (n *Node) releaseSeen(r *request, rec *Record) {
	if rec == nil || rec.Expired || rec.Server != r.Server {
		return
	}
	for _, b := range r.released {
		if b == rec.Ballot {
			return
		}
	}
	r.released = append(r.released, rec.Ballot)
	n.broadcast(Msg{Type: MsgRelease, Chunk: r.Chunk, Ballot: rec.Ballot, Server: r.Server})
}

// finishRelease answers a release. Once a majority was read (or anything
// was released) the release succeeded: the server's lease is dropped
// wherever it was reported, and elsewhere it ends at its expiry. If no
// majority answered and nothing was sent, it is error 11: nothing changed.
func (n *Node) finishRelease(r *request) {
	delete(n.reads, r.rd.id)
	if r.rd.heard.count() < n.quorum && len(r.released) == 0 {
		n.fail(r, n.noMajority(r, "nothing was released; the lease ends at its expiry"))
		return
	}
	n.reply(r, "lease_release_ok", ReleaseOK{ChunkHandle: r.Chunk})
}

// readTimer starts a fresh read round when the current one timed out.
func (n *Node) readTimer(now time.Duration, r *request) {
	if now >= r.rd.roundEnd {
		n.startRead(now, r)
	}
}
