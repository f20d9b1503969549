package lease

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Configurations (doc.go "Membership"). A node holds one configuration,
// the acceptor set it counts quorums in and votes in, and adopts a newer
// one whenever it learns of it: from the changer's commit, from an
// acceptor's refusal of a lower epoch, from a proposer that finds it
// behind, from a recovering node's sync, or from the shell (Node.Adopt,
// for the other cores of a member). Only chosen configurations
// circulate, so a higher epoch is always adopted as is.

// Membership is a configuration of the acceptor set.
type Membership struct {
	// Epoch counts changes: 0 is the set every node was started with.
	Epoch uint64 `json:"epoch"`
	// Members vote: quorums are majorities of them.
	Members []string `json:"members"`
	// Prev is the previous configuration's members (nil at epoch 0): a
	// configuration is active once a majority of them adopted it.
	Prev []string `json:"prev,omitempty"`
	// Floor is a ballot counter above every token granted under earlier
	// configurations: every acceptor that adopts the configuration
	// refuses every ballot up to it.
	Floor uint64 `json:"floor,omitempty"`
	// Addrs are the members' peer addresses, for shells that connect to
	// members they were not started with; the core only carries them.
	Addrs map[string]string `json:"addrs,omitempty"`
}

// has reports whether id is a member.
func (c Membership) has(id string) bool { return slices.Contains(c.Members, id) }

// String renders the configuration for logs and error texts.
func (c Membership) String() string {
	return fmt.Sprintf("epoch %d (%s)", c.Epoch, strings.Join(c.Members, ", "))
}

// copied returns c with its own slices and map, so that a message in
// flight never shares them with a node that changes later.
func (c Membership) copied() Membership {
	c.Members, c.Prev = slices.Clone(c.Members), slices.Clone(c.Prev)
	if c.Addrs != nil {
		addrs := make(map[string]string, len(c.Addrs))
		for k, v := range c.Addrs {
			addrs[k] = v
		}
		c.Addrs = addrs
	}
	return c
}

// confMsg is the node's configuration as a message field.
func (n *Node) confMsg() *Membership {
	c := n.conf.copied()
	return &c
}

// setConf makes c the configuration quorums are counted in. Under the
// learner-votes weakening every node counts: a node outside the
// configuration is tallied and votes.
func (n *Node) setConf(c Membership) {
	n.conf = c
	n.quorum = majority(len(c.Members))
	voters := n.voters()
	n.accIdx = make(map[string]int, len(voters))
	for i, a := range voters {
		n.accIdx[a] = i
	}
}

// voters is the list tallies index: the members, or under the
// learner-votes weakening every node.
func (n *Node) voters() []string {
	if n.cfg.weaken == weakLearnerVotes {
		return n.cfg.nodes()
	}
	return n.conf.Members
}

// member reports whether this node votes in its configuration.
func (n *Node) member() bool {
	_, ok := n.accIdx[n.cfg.ID]
	return ok && n.known
}

// adopt makes c the node's configuration if it is newer (or the node has
// none yet: a joining node). The floor rises to c's, the change instance
// starts afresh under the waiting rule (rule 11), and every round in
// flight starts again under c: a quorum counts one configuration's
// acceptors.
func (n *Node) adopt(now time.Duration, c Membership) {
	if n.known && c.Epoch <= n.conf.Epoch {
		return
	}
	old := n.conf
	n.setConf(c.copied())
	n.known = true
	n.activated = c.Epoch == 0
	if n.cfg.weaken != weakNoConfigFloor {
		n.floor = max(n.floor, c.Floor)
		n.ballots.observe(now, c.Floor)
	}
	n.change = changeAcceptor{}
	if c.Epoch > 0 && n.cfg.weaken != weakNoChangeWait {
		n.change.waitUntil = now + stretch(ms(n.cfg.MaxLeaseMs), n.cfg.DriftPPM)
		n.change.coresPending = n.cfg.Cores > 1 && n.cfg.weaken != weakCoresNoConfirm
	}
	n.out.Adopted = n.confMsg()
	n.logf("configuration %s adopted (was %s)%s", n.conf, old, n.roleText())
	n.restartRounds(now)
	n.changerAdopted(now)
	n.recoveryAdopted(now)
}

// roleText says whether this node votes in its configuration, for logs.
func (n *Node) roleText() string {
	if n.member() {
		return ": this node is a member"
	}
	return ": this node is not a member (a learner: it votes on nothing)"
}

// restartRounds starts every round in flight again under the configuration
// just adopted: an attempt retries with a fresh ballot at once, a check
// reads again, a release goes out again under a fresh id (answers to the
// old one came from acceptors of another configuration, or refused).
func (n *Node) restartRounds(now time.Duration) {
	n.boot.peers = nil
	for _, r := range n.pending {
		if r.done {
			continue
		}
		r.heard, r.heardFrom = 0, 0
		switch {
		case r.att != nil:
			r.att, r.retryAt = nil, now
		case r.rd != nil:
			n.startRead(now, r)
		case r.rel != nil:
			delete(n.byReq, r.rel.id)
			n.startRelease(now, r)
		}
	}
}

// Configuration is the node's configuration: what a shell shows
// operators and hands to its other cores.
func (n *Node) Configuration() Membership { return n.conf.copied() }

// Adopt hands the core a configuration another core of the same member
// adopted (Output.Adopted). A newer one is adopted as if a peer had sent
// it; the current one extends the waiting rule to stretch(M) from now,
// which the shell uses on the core that hosts the change instance once
// every other core adopted (doc.go "Membership and cores"): until then a
// lead of several cores promises no change.
func (n *Node) Adopt(now time.Duration, c Membership) *Output {
	n.begin(now)
	if n.known && c.Epoch == n.conf.Epoch && c.Epoch > 0 && n.cfg.weaken != weakNoChangeWait {
		n.change.waitUntil = max(n.change.waitUntil, now+stretch(ms(n.cfg.MaxLeaseMs), n.cfg.DriftPPM))
		n.change.coresPending = false
	}
	n.adopt(now, c)
	return n.finish(now)
}

// Voting reports whether the node's acceptor votes at now: it is a member
// of its configuration, past its boot wait, and (with membership on)
// recovered. A shell's readiness reports it.
func (n *Node) Voting(now time.Duration) bool { return n.serving(now) }

// askAgain sends the round an answer belongs to again, with this node's
// configuration, to an acceptor that answered from an older epoch: it did
// nothing, and adopts the configuration before it handles the request.
func (n *Node) askAgain(m Msg) {
	var again Msg
	switch m.Type {
	case MsgPrepareResp:
		r := n.running(m.Chunk, m.Ballot, preparing)
		if r == nil {
			return
		}
		again = Msg{Type: MsgPrepare, Chunk: r.Chunk, Ballot: r.att.ballot, Server: r.Server}
	case MsgProposeResp:
		r := n.running(m.Chunk, m.Ballot, proposing)
		if r == nil {
			return
		}
		again = n.proposeMsg(r, r.att.fast)
	case MsgReadResp:
		r := n.answered(m)
		if r == nil || r.rd == nil || r.rd.id != m.ReqID {
			return
		}
		again = Msg{Type: MsgRead, Chunk: r.Chunk, ReqID: r.rd.id, Nonce: n.cfg.Nonce}
	case MsgReleaseResp:
		r := n.answered(m)
		if r == nil || r.rel == nil || r.rel.id != m.ReqID {
			return
		}
		again = Msg{Type: MsgRelease, Chunk: r.Chunk, Server: r.Server, Token: r.Token, ReqID: r.rel.id, Nonce: n.cfg.Nonce}
	default:
		return
	}
	again.To, again.Conf = m.From, n.confMsg()
	n.send(again)
}

// learnFromSync takes from a recovery answer (membership) its
// configuration, if newer, and the value accepted in the change instance
// of that epoch with the highest ballot heard: a restarted node forgot
// both, and the n-q+1 answers it waits for hold them (doc.go
// "Restarts").
func (n *Node) learnFromSync(now time.Duration, m Msg) {
	if !n.cfg.Membership || m.Conf == nil {
		return
	}
	if !n.known || m.Conf.Epoch > n.conf.Epoch {
		n.adopt(now, *m.Conf)
	}
	if m.Conf.Epoch == n.conf.Epoch && m.Value != nil && n.change.accepted.Less(m.Accepted) {
		v := m.Value.copied()
		n.change.accepted, n.change.value = m.Accepted, &v
	}
}

// recoveryAdopted starts the recovery's count again under a configuration
// adopted meanwhile (its members are the ones that count), and ends a
// joining node's learning: it only needed a configuration.
func (n *Node) recoveryAdopted(now time.Duration) {
	if !n.recovering {
		return
	}
	if n.cfg.Join && n.cfg.BootWaitMs == 0 {
		n.recovering = false
		n.logf("joined: learnt configuration %s%s", n.conf, n.roleText())
		return
	}
	n.sync.ready, n.sync.restarting, n.sync.answered, n.sync.parts = n.newTally(), n.newTally(), nil, nil
	n.sync.roundEnd = now
}

// wholeRestart reports whether recovery may end on what restarting nodes
// hold (membership): once the boot wait is over, every other node this
// node asks said it is restarting too. Then the whole cluster restarted,
// nothing remembers a configuration, and every node falls back to the
// same start list (epoch 0) or the highest configuration one of them
// learnt since. Any node that did not restart may hold a later
// configuration than all of them, so while one is silent (down or cut
// off) the restarted node waits for it.
func (n *Node) wholeRestart(now time.Duration) bool {
	if now < n.bootUntil {
		return false
	}
	for _, id := range n.syncTargets() {
		if !n.sync.restartingNode(id) {
			return false
		}
	}
	return true
}
