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
	// sampleBuf holds the first samples (attempt.sampleBuf).
	sampleBuf [inlineSamples]sample
	// lastServer is the server of the record seen with the highest
	// promise, live or expired (seenRecord: one was seen): the "most
	// recent holder" a check names when nobody holds the chunk. A copy,
	// not the answer's Record: the core keeps no pointer into a message
	// past its handling (Msg.Lease).
	lastServer  string
	seenRecord  bool
	lastPromise Ballot
	// weak is a decided holder whose protection the answers so far do not
	// prove (protectedMs 0): the check waits for more answers until the
	// round ends, then answers it with 0 ms.
	weak string
}

// startRead begins a new read round for a check.
func (n *Node) startRead(now time.Duration, r *request) {
	rd := takeSpare(&n.spareReads)
	*rd = readRound{id: n.nextReqID(), sentAt: now, roundEnd: now + ms(n.cfg.RoundTimeoutMs), heard: n.newTally()}
	rd.samples = rd.sampleBuf[:0]
	if r.rd != nil {
		delete(n.byReq, r.rd.id)
	}
	r.rd = rd
	n.byReq[rd.id] = r
	n.broadcast(Msg{Type: MsgRead, Chunk: r.Chunk, ReqID: rd.id, Nonce: n.cfg.Nonce})
}

// onReadResp records one acceptor's answer and decides if it can.
func (n *Node) onReadResp(now time.Duration, m Msg, idx int) {
	r := n.answered(m)
	if r == nil || r.Op != OpCheck || r.Chunk != m.Chunk || !r.rd.heard.add(idx) {
		return
	}
	rd := r.rd
	if rec := m.Lease; rec != nil && (!rd.seenRecord || rd.lastPromise.Less(m.Promised)) {
		rd.lastServer, rd.seenRecord, rd.lastPromise = rec.Server, true, m.Promised
	}
	rd.samples = append(rd.samples, sampleOf(m.Lease))
	r.heard = max(r.heard, rd.heard.count())
	r.heardFrom |= 1 << uint(idx)
	n.decideCheck(now, r)
}

// decideCheck answers a check once the read names one holder or proves
// there is none. An ambiguous read waits for more answers, then is read
// again at the round timeout, and answers error 11 at the deadline rather
// than guess. A holder is answered with how long the answers prove it
// protected (protectedMs); when they prove nothing yet, the check waits
// for the remaining answers until the round ends.
func (n *Node) decideCheck(now time.Duration, r *request) {
	rd := r.rd
	holder, decided := n.judge(rd.samples)
	rd.weak = ""
	if !decided {
		return
	}
	if holder == "" {
		n.answerCheck(now, r, "")
		return
	}
	rem := n.protectedMs(rd.samples, holder)
	if rem == 0 && rd.heard.count() < len(n.voters()) {
		rd.weak = holder
		return
	}
	n.answerCheck(now, r, holder)
}

// answerCheck replies to a decided check: the holder and its proven
// remaining time, or "no holder" naming the most recent one seen.
func (n *Node) answerCheck(now time.Duration, r *request, holder string) {
	rd := r.rd
	delete(n.byReq, rd.id)
	if holder != "" {
		rem, margin := n.protectedMs(rd.samples, holder), n.margin()
		if n.cfg.weaken == weakCheckNoMargin {
			margin = 0
		}
		left := floorMs(rd.sentAt + ms(rem) - now - margin)
		n.reply(r, "lease_check_ok", CheckOK{Primary: n.primaryRef(holder), RemainingMs: left})
		return
	}
	body := CheckOK{Expired: true}
	if rd.seenRecord {
		body.Primary = n.primaryRef(rd.lastServer)
	}
	n.reply(r, "lease_check_ok", body)
}

// readTimer answers a weakly decided check, or starts a fresh read round
// when the current one timed out undecided.
func (n *Node) readTimer(now time.Duration, r *request) {
	if now < r.rd.roundEnd {
		return
	}
	if r.rd.weak != "" {
		n.answerCheck(now, r, r.rd.weak)
		return
	}
	n.startRead(now, r)
}

// expireCheck answers a check that reached its quorum timeout.
func (n *Node) expireCheck(now time.Duration, r *request) {
	if r.rd.weak != "" {
		n.answerCheck(now, r, r.rd.weak)
		return
	}
	delete(n.byReq, r.rd.id)
	n.fail(r, n.noMajority(r, "could not read a consistent majority"))
}

// primaryRef is a pointer to server's name for a check's answer. The
// answer may not point into the read round, which is kept for reuse once
// the request is answered (dropAnswered); the names pointed to are never
// written after, so answers share them instead of each allocating its
// own (the node keeps up to maxPrimaryRefs, then starts afresh).
func (n *Node) primaryRef(server string) *string {
	if p, ok := n.primaryRefs[server]; ok {
		return p
	}
	if n.primaryRefs == nil || len(n.primaryRefs) >= maxPrimaryRefs {
		n.primaryRefs = make(map[string]*string)
	}
	p := new(string)
	*p = server
	n.primaryRefs[server] = p
	return p
}

// maxPrimaryRefs bounds the names primaryRef keeps.
const maxPrimaryRefs = 1024
