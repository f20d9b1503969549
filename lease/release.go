package lease

import "time"

// releaseRound is a release in flight: release(server, token) went to
// every acceptor; each answers whether it dropped that instance.
type releaseRound struct {
	id       uint64
	roundEnd time.Duration
	heard    tally
}

// startRelease sends release for exactly the lease instance the client
// named by its token (rule 6). No read is needed: the token names the
// instance, so a release that arrives after the server was granted or
// renewed again leaves the newer instance alone, however late it is.
func (n *Node) startRelease(now time.Duration, r *request) {
	r.rel = &releaseRound{id: n.nextReqID(), heard: n.newTally()}
	n.byReq[r.rel.id] = r
	n.sendRelease(now, r)
}

// sendRelease (re)sends the release to every acceptor that has not
// answered; releases are idempotent.
func (n *Node) sendRelease(now time.Duration, r *request) {
	rel := r.rel
	rel.roundEnd = now + ms(n.cfg.RoundTimeoutMs)
	for i, a := range n.voters() {
		if !rel.heard.has(i) {
			n.send(Msg{Type: MsgRelease, To: a, Chunk: r.Chunk, Server: r.Server, Token: r.Token, ReqID: rel.id, Nonce: n.cfg.Nonce})
		}
	}
}

// onReleaseResp counts an acceptor's answer; once a majority answered,
// the instance is dropped wherever it was accepted and answered, and
// elsewhere ends at its expiry: the release is done.
func (n *Node) onReleaseResp(m Msg, idx int) {
	r := n.answered(m)
	if r == nil || r.Op != OpRelease || r.Chunk != m.Chunk || !r.rel.heard.add(idx) {
		return
	}
	r.heard = max(r.heard, r.rel.heard.count())
	r.heardFrom |= 1 << uint(idx)
	if r.rel.heard.count() >= n.quorum {
		delete(n.byReq, r.rel.id)
		n.reply(r, "lease_release_ok", ReleaseOK{ChunkHandle: r.Chunk})
	}
}

// releaseTimer resends to the silent acceptors at each round timeout.
func (n *Node) releaseTimer(now time.Duration, r *request) {
	if now >= r.rel.roundEnd {
		n.sendRelease(now, r)
	}
}
