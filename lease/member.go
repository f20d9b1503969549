package lease

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Membership changes (doc.go "Membership"): configuration E+1 is chosen
// by single-decree Paxos among the members of E, on the node's ballots,
// then committed (config) to the members of E and E+1. This file holds
// both sides: the acceptor's part of the change instance of its epoch,
// and the changer, which runs the operator's request.

// changeAcceptor is this acceptor's state in the change instance of its
// configuration's epoch: the highest change ballot it promised, the value
// it accepted and at which ballot, and the waiting rule (rule 11): no
// promise before waitUntil. It starts afresh with every adopted
// configuration.
type changeAcceptor struct {
	promised  Ballot
	accepted  Ballot
	value     *Membership
	waitUntil time.Duration
	// coresPending: a member of several cores adopted the configuration
	// on this core, and the shell has not yet said that every other core
	// holds it too (Node.Adopt): the waiting rule runs from then, so no
	// promise until it did (doc.go "Membership and cores").
	coresPending bool
}

// MemberOK answers member_add, member_remove, member_replace and
// member_list: the configuration this node holds after the change, and
// how long until the next change can start by its waiting rule.
type MemberOK struct {
	Epoch          uint64            `json:"epoch"`
	Members        []string          `json:"members"`
	NextChangeInMs int64             `json:"next_change_in_ms"`
	Addrs          map[string]string `json:"addrs,omitempty"`
}

// memberOK is the reply body for the node's configuration at now.
func (n *Node) memberOK(now time.Duration) MemberOK {
	c := n.conf.copied()
	return MemberOK{Epoch: c.Epoch, Members: c.Members, NextChangeInMs: ceilMs(n.change.waitUntil - now), Addrs: c.Addrs}
}

// ceilMs converts a remaining time to whole milliseconds, rounding up (0
// when none is left): a wait is never reported shorter than it is.
func ceilMs(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// changePromise is the change instance's effective promise: its own, or
// the node's floor when that is higher (after a restart, the floor also
// covers the change promises the node forgot).
func (n *Node) changePromise() Ballot {
	if n.change.promised.Counter < n.floor {
		return Ballot{Counter: n.floor}
	}
	return n.change.promised
}

// highWater is the highest ballot counter this node promised, issued or
// keeps as its floor: what a recovering node (sync) and a changer (the
// new configuration's floor) are told.
func (n *Node) highWater() uint64 { return max(n.ballots.counter, n.floor, n.promisedHigh) }

// acceptChange serves member_prepare and member_propose. A lower epoch is
// refused with this node's configuration, a higher one says it is behind
// (the changer sends it again with its configuration); a node that votes
// on nothing now (not a member, booting, recovering) answers "learner".
func (n *Node) acceptChange(now time.Duration, m Msg) {
	if m.Type == MsgChangePrepare && !n.lead() {
		n.answerChangePart(now, m)
		return
	}
	resp := Msg{Type: m.Type.Answer(), To: m.From, Ballot: m.Ballot, Epoch: n.conf.Epoch}
	if m.Type == MsgChangePrepare && n.cfg.Cores > 1 {
		resp.Core, resp.Cores = n.cfg.Core, n.cfg.Cores
	}
	switch {
	case n.notVoting(now, m, &resp):
	case m.Type == MsgChangePrepare:
		n.promiseChange(now, m, &resp)
	default:
		n.acceptValue(m, &resp)
	}
	resp.Promised = n.changePromise()
	n.send(resp)
}

// answerChangePart answers a change prepare at a core other than the
// lead of a member of several (every core gets it, Route): the change
// instance is the lead's, but the floor of the next configuration must
// exceed every ballot this member accepted on any core before it adopted
// the epoch asked about, and this core's high-water mark covers its own
// chunks only. So it reports its mark, naming itself, once it holds that
// epoch and votes; the changer counts the member's promise once every
// core did (doc.go "Membership and cores").
func (n *Node) answerChangePart(now time.Duration, m Msg) {
	resp := Msg{Type: MsgChangePrepareResp, To: m.From, Ballot: m.Ballot, Epoch: n.conf.Epoch,
		Core: n.cfg.Core, Cores: n.cfg.Cores, Promised: n.changePromise()}
	if !n.notVoting(now, m, &resp) {
		resp.OK, resp.Counter = true, n.highWater()
	}
	n.send(resp)
}

// notVoting fills resp for a change message this node does not vote on
// and reports whether it did: a learner (no configuration yet, or not yet
// serving) says so, a node at a later epoch sends its configuration, and
// a message from a later epoch is refused without one (this node learns
// it elsewhere).
func (n *Node) notVoting(now time.Duration, m Msg, resp *Msg) bool {
	switch {
	case !n.known, !n.serving(now) && m.Epoch == n.conf.Epoch:
		resp.Learner = true
	case m.Epoch < n.conf.Epoch:
		resp.Conf = n.confMsg()
	case m.Epoch > n.conf.Epoch:
	default:
		return false
	}
	return true
}

// promiseChange promises ballot b in the change instance if the changer
// knows the configuration is active, the waiting rule is over (rule 11)
// and b keeps the promise; the answer carries the accepted value and the
// high-water mark the new configuration's floor must exceed.
func (n *Node) promiseChange(now time.Duration, m Msg, resp *Msg) {
	if m.Active {
		n.activated = true // the changer saw a majority of the previous members adopt it
	}
	switch {
	case !m.Active:
		return
	case now < n.change.waitUntil:
		resp.WaitMs = ceilMs(n.change.waitUntil - now)
		return
	case n.change.coresPending:
		resp.WaitMs = ceilMs(stretch(ms(n.cfg.MaxLeaseMs), n.cfg.DriftPPM))
		return
	case !keeps(m.Ballot, n.changePromise()):
		return
	}
	n.change.promised = m.Ballot
	n.promisedHigh = max(n.promisedHigh, m.Ballot.Counter)
	resp.OK, resp.Counter = true, n.highWater()
	if n.change.value != nil {
		v := n.change.value.copied()
		resp.Accepted, resp.Value = n.change.accepted, &v
	}
}

// acceptValue accepts the proposed configuration if the ballot keeps the
// promise and the value is one step from this configuration.
func (n *Node) acceptValue(m Msg, resp *Msg) {
	v := m.Value
	if v == nil || v.Epoch != n.conf.Epoch+1 || !keeps(m.Ballot, n.changePromise()) || n.stepError(n.conf, *v) != nil {
		return
	}
	c := v.copied()
	n.change.promised, n.change.accepted, n.change.value = m.Ballot, m.Ballot, &c
	n.promisedHigh = max(n.promisedHigh, m.Ballot.Counter)
	resp.OK = true
}

// stepError says why next is not one step from cur: it must add or
// remove exactly one member (two under the two-at-once weakening), keep
// at least one, and name cur's members as its previous ones.
func (n *Node) stepError(cur, next Membership) *Error {
	added, removed := diff(cur.Members, next.Members), diff(next.Members, cur.Members)
	limit := 1
	if n.cfg.weaken == weakTwoAtOnce {
		limit = 2
	}
	switch {
	case len(next.Members) == 0:
		return malformed("a configuration needs at least one member")
	case len(added)+len(removed) == 0 || len(added)+len(removed) > limit || len(added) > 1 || len(removed) > 1:
		return malformed("a change adds or removes exactly one member; %s to %v changes %d", cur, next.Members, len(added)+len(removed))
	case !slices.Equal(next.Prev, cur.Members):
		return malformed("configuration %s does not follow %s", next, cur)
	}
	return nil
}

// diff lists the members of b that a lacks.
func diff(a, b []string) []string {
	var out []string
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// changePhase is where a change run is.
type changePhase uint8

const (
	changeIdle       changePhase = iota // backing off, or waiting for the wall clock
	changeActivating                    // making sure a majority of the previous members adopted the configuration
	changePreparing
	changeProposing
	changeCommitting // chosen: pushing it until a majority of the old members adopted it
)

// changeRun is this node's change in flight: the operator's request
// (nil once answered), the instance it runs in (the epoch it changes),
// and the round in progress. Quorums count the members of the epoch it
// changes, whose positions index the tallies (committing: the old
// members').
type changeRun struct {
	r        *request
	epoch    uint64
	phase    changePhase
	ballot   Ballot
	roundEnd time.Duration
	retryAt  time.Duration
	tries    int
	need     uint64 // the highest change promise seen: the next ballot climbs past it
	proposed bool   // a member_propose went out: a failure is indefinite

	heard, yes tally
	waits      []time.Duration // when each promised (now) or waiting member can promise
	high       uint64          // the highest high-water mark the promises reported
	acc        Ballot          // the highest accepted ballot reported, and its value
	accValue   *Membership
	joinerUp   bool                 // the member being added answered
	parts      map[int]*memberParts // members of several cores: their cores' answers this round
	value      *Membership          // the value proposed, then committed
	own        bool                 // value is the request's own change
	old        Membership           // committing: the configuration value replaces
	newAcked   map[string]bool
	pushUntil  time.Duration
}

// handleMember serves member_add, member_remove, member_replace and
// member_list.
func (n *Node) handleMember(now time.Duration, r *request) {
	if err := n.memberRequestError(r); err != nil {
		n.fail(r, err)
		return
	}
	if r.Op == OpMemberList {
		n.reply(r, "member_list_ok", n.memberOK(now))
		return
	}
	if c := n.changer; c != nil && c.r != nil {
		n.fail(r, &Error{Code: CodePreconditionFailed, Text: fmt.Sprintf(
			"a change is already running at %s (%s); wait for its answer, then ask again", n.cfg.ID, describe(c.r.Request))})
		return
	}
	n.changer = &changeRun{r: r, pushUntil: r.deadline}
	n.startChange(now)
}

// memberRequestError checks a membership request before anything is sent.
func (n *Node) memberRequestError(r *request) *Error {
	switch {
	case !n.cfg.Membership:
		return &Error{Code: CodeNotSupported, Text: "membership changes are off on this node: every node of the cluster " +
			"must be started with membership on (LEASE_MEMBERSHIP=on, or -membership) for the acceptor set to change"}
	case !n.known:
		return unavailable("this node joined a running cluster and has not learnt its configuration yet; ask a member, or again shortly")
	case r.Op == OpMemberList:
		return nil
	case r.Member == "" || len(r.Member) > MaxServerBytes:
		return malformed("node must name a node id of at most %d bytes", MaxServerBytes)
	case !slices.Contains(n.cfg.nodes(), r.Member) && !n.conf.has(r.Member) && !(r.Op == OpMemberAdd && r.Addr != ""):
		return malformed("%q is not one of the nodes %v; a node outside them is added with its peer address (addr), "+
			"and must have been started with a ballot lane of its own (its place in its own node list)", r.Member, n.cfg.nodes())
	case r.Op == OpMemberReplace && !slices.Contains(n.cfg.nodes(), r.Replacement):
		return malformed("%q is not one of the nodes %v", r.Replacement, n.cfg.nodes())
	case r.Op == OpMemberReplace && n.cfg.weaken != weakTwoAtOnce:
		return malformed("a change adds or removes one member at a time: two at once can leave two majorities that share "+
			"no member; remove %s, wait for the next change to be allowed (next_change_in_ms), then add %s", r.Member, r.Replacement)
	}
	return nil
}

// describe names a membership request for texts.
func describe(r Request) string {
	switch r.Op {
	case OpMemberAdd:
		return "add " + r.Member
	case OpMemberRemove:
		return "remove " + r.Member
	case OpMemberReplace:
		return "replace " + r.Member + " by " + r.Replacement
	}
	return r.Op.String()
}

// startChange begins (or begins again) the change in the instance of the
// node's epoch: first making sure the configuration is active, then
// preparing.
func (n *Node) startChange(now time.Duration) {
	c := n.changer
	c.epoch, c.phase = n.conf.Epoch, changeIdle
	if !n.activated {
		n.changeActivate(now)
		return
	}
	n.changePrepare(now)
}

// changeTargets are the nodes a round goes to: the members, and a node
// being added (it answers "learner": up).
func (n *Node) changeTargets() []string {
	t := slices.Clone(n.voters())
	if c := n.changer; c.r != nil && c.r.Op != OpMemberRemove && c.r.Op != OpMemberList {
		add := c.r.Member
		if c.r.Op == OpMemberReplace {
			add = c.r.Replacement
		}
		if !slices.Contains(t, add) {
			t = append(t, add)
		}
	}
	return t
}

// changeAdded is the node the change adds, or "".
func (c *changeRun) changeAdded() string {
	switch {
	case c.r == nil:
		return ""
	case c.r.Op == OpMemberAdd:
		return c.r.Member
	case c.r.Op == OpMemberReplace:
		return c.r.Replacement
	}
	return ""
}

// changeActivate sends the configuration to the previous and the current
// members; once a majority of the previous ones answered that they hold
// it (or a later one), it is active.
func (n *Node) changeActivate(now time.Duration) {
	c := n.changer
	c.phase, c.heard, c.roundEnd = changeActivating, n.newTally(), now+ms(n.cfg.RoundTimeoutMs)
	if slices.Contains(n.conf.Prev, n.cfg.ID) {
		c.heard.add(slices.Index(n.conf.Prev, n.cfg.ID))
	}
	if n.activeEnough() {
		return
	}
	for _, id := range union(n.conf.Prev, n.conf.Members) {
		if id != n.cfg.ID && !c.heard.has(slices.Index(n.conf.Prev, id)) {
			n.send(Msg{Type: MsgConfig, To: id, Conf: n.confMsg()})
		}
	}
}

// activeEnough marks the configuration active once a majority of the
// previous members hold it, and goes on to prepare.
func (n *Node) activeEnough() bool {
	c := n.changer
	if c.heard.count() < majority(len(n.conf.Prev)) {
		return false
	}
	n.activated = true
	n.changePrepare(n.now)
	return true
}

// union is a followed by b's members a lacks.
func union(a, b []string) []string { return append(slices.Clone(a), diff(a, b)...) }

// changePrepare sends member_prepare with a fresh ballot (when the wall
// clock allows it: pacing, ballot.go).
func (n *Node) changePrepare(now time.Duration) {
	c := n.changer
	b, readyAt := n.ballots.next(now, c.need)
	if readyAt > now {
		c.phase, c.retryAt = changeIdle, readyAt
		return
	}
	c.phase, c.ballot, c.roundEnd = changePreparing, b, now+ms(n.cfg.RoundTimeoutMs)
	c.heard, c.yes, c.waits, c.high, c.acc, c.accValue, c.joinerUp = n.newTally(), n.newTally(), nil, 0, Ballot{}, nil, false
	c.parts = nil
	for _, id := range n.changeTargets() {
		n.send(Msg{Type: MsgChangePrepare, To: id, Epoch: c.epoch, Ballot: b, Active: true})
	}
}

// onChangeResp handles the answers of a change round and of config
// pushes.
func (n *Node) onChangeResp(now time.Duration, m Msg) {
	c := n.changer
	if c == nil {
		return
	}
	if m.Type == MsgConfigResp {
		n.onConfigAck(m)
		return
	}
	n.ballots.observe(now, m.Promised.Counter)
	want := changePreparing
	if m.Type == MsgChangeProposeResp {
		want = changeProposing
	}
	if c.phase != want || m.Ballot != c.ballot {
		return
	}
	if m.From == c.changeAdded() && !n.conf.has(m.From) {
		c.joinerUp = true
		n.decideChange(now)
		return
	}
	if m.Epoch < c.epoch {
		n.sendChangeAgain(m.From)
		return
	}
	idx, ok := n.accIdx[m.From]
	if !ok || m.Epoch != c.epoch {
		return
	}
	if m.Type == MsgChangePrepareResp && m.Cores > 1 && n.cfg.weaken != weakChangeOneCore {
		if m, ok = c.wholeMember(idx, m); !ok {
			return
		}
	}
	if !c.heard.add(idx) {
		return
	}
	n.countChangeAnswer(now, m, idx)
	n.decideChange(now)
}

// memberParts is what a change round heard from the cores of one member
// that runs several: which reported their high-water marks (a bit each),
// the highest, and the lead's answer (the promise).
type memberParts struct {
	cores int
	heard uint64
	high  uint64
	lead  *Msg
}

// wholeMember takes one core's answer to a change prepare from a member
// of several cores (doc.go "Membership and cores"). The lead's refusal
// counts at once; its promise counts once every core of the member
// reported its mark, as the lead's answer with the highest mark, which
// then covers every ballot the member accepted on any core before it
// adopted the epoch. A core that does not report (it does not hold the
// epoch yet, or does not vote) holds the promise back: the round asks
// again with a fresh ballot if it must.
func (c *changeRun) wholeMember(idx int, m Msg) (Msg, bool) {
	if m.Core == 0 && !m.OK {
		return m, true
	}
	if c.parts == nil {
		c.parts = map[int]*memberParts{}
	}
	p := c.parts[idx]
	if p == nil || p.cores != m.Cores {
		p = &memberParts{cores: m.Cores}
		c.parts[idx] = p
	}
	if !m.OK {
		return m, false
	}
	p.heard |= 1 << uint(m.Core)
	p.high = max(p.high, m.Counter)
	if m.Core == 0 {
		lead := m
		p.lead = &lead
	}
	if p.lead == nil || p.heard != 1<<uint(p.cores)-1 {
		return m, false
	}
	whole := *p.lead
	whole.Counter = p.high
	return whole, true
}

// sendChangeAgain sends the round's message again, with this node's
// configuration, to a member found behind.
func (n *Node) sendChangeAgain(to string) {
	c := n.changer
	m := Msg{Type: MsgChangePrepare, To: to, Epoch: c.epoch, Ballot: c.ballot, Active: true, Conf: n.confMsg()}
	if c.phase == changeProposing {
		m.Type, m.Active, m.Value = MsgChangePropose, false, c.value
	}
	n.send(m)
}

// countChangeAnswer records one member's answer to prepare or propose.
func (n *Node) countChangeAnswer(now time.Duration, m Msg, idx int) {
	c := n.changer
	switch {
	case m.OK:
		c.yes.add(idx)
		c.high = max(c.high, m.Counter)
		c.waits = append(c.waits, now)
		if m.Value != nil && c.acc.Less(m.Accepted) {
			v := m.Value.copied()
			c.acc, c.accValue = m.Accepted, &v
		}
	case m.WaitMs > 0:
		c.waits = append(c.waits, now+ms(m.WaitMs))
	case !keeps(c.ballot, m.Promised):
		c.need = max(c.need, m.Promised.Counter)
	}
}

// decideChange moves the round on once its answers decide it: a
// majority said yes; or no majority can say yes to this ballot, and then
// either members in their waiting rule could make one up later (the
// change is refused with the time left, once every member answered or
// the round ended) or the change is tried again with a fresh ballot.
func (n *Node) decideChange(now time.Duration) {
	c := n.changer
	unanswered := len(n.voters()) - c.heard.count()
	switch {
	case c.yes.count() >= n.quorum && c.phase == changePreparing:
		n.changeChoose(now)
	case c.yes.count() >= n.quorum:
		n.changeCommit(now)
	case c.yes.count()+unanswered >= n.quorum:
		// more answers may come
	case c.phase == changePreparing && len(c.waits) > c.yes.count() && len(c.waits)+unanswered >= n.quorum:
		if unanswered == 0 || now >= c.roundEnd {
			n.changeWaiting(now, c.majorityWait(n.quorum, now))
		}
	default:
		n.changeRetry(now)
	}
}

// majorityWait is how long until a majority could promise, counting the
// members that promised (0) and those in their waiting rule; 0 when not
// enough of them answered so.
func (c *changeRun) majorityWait(q int, now time.Duration) time.Duration {
	if len(c.waits) < q {
		return 0
	}
	w := slices.Clone(c.waits)
	slices.Sort(w)
	return w[q-1] - now
}

// changeChoose picks the value once a majority promised: the accepted
// value with the highest ballot if one was reported (it may have been
// chosen), else the request's own change, if it changes anything and
// leaves a reachable majority (or is forced).
func (n *Node) changeChoose(now time.Duration) {
	c := n.changer
	if c.accValue != nil {
		c.own = c.r != nil && n.sameChange(*c.accValue)
		n.changePropose(*c.accValue)
		return
	}
	if c.r == nil {
		n.changer = nil
		return
	}
	next, err := n.wanted(c)
	switch {
	case err != nil:
		n.changeFail(err)
	case next == nil:
		n.reply(c.r, c.r.Op.String()+"_ok", n.memberOK(now))
		n.changer = nil
	case !c.r.Force && !n.reachable(*next):
		if c.heard.count() < len(n.voters()) || c.changeAdded() != "" && !c.joinerUp {
			if now < c.roundEnd {
				return // the rest may still answer
			}
		}
		n.changeFail(n.unreachableError(*next))
	default:
		c.own = true
		n.changePropose(*next)
	}
}

// wanted is the configuration the request asks for, computed from the
// node's: nil when it changes nothing (adding a member, removing a node
// that is not one).
func (n *Node) wanted(c *changeRun) (*Membership, *Error) {
	cur, r := n.conf, c.r
	members := slices.Clone(cur.Members)
	addrs := cur.copied().Addrs
	switch r.Op {
	case OpMemberAdd:
		if cur.has(r.Member) {
			return nil, nil
		}
		members = append(members, r.Member)
	case OpMemberRemove:
		if !cur.has(r.Member) {
			return nil, nil
		}
		if len(members) == 1 {
			return nil, &Error{Code: CodePreconditionFailed, Text: fmt.Sprintf("%s is the only member; add another before removing it", r.Member)}
		}
		members = slices.DeleteFunc(members, func(x string) bool { return x == r.Member })
		delete(addrs, r.Member)
	case OpMemberReplace:
		members = append(slices.DeleteFunc(members, func(x string) bool { return x == r.Member }), r.Replacement)
	}
	if add := c.changeAdded(); add != "" && r.Addr != "" {
		if addrs == nil {
			addrs = map[string]string{}
		}
		addrs[add] = r.Addr
	}
	next := Membership{Epoch: cur.Epoch + 1, Members: members, Prev: slices.Clone(cur.Members), Floor: max(cur.Floor, c.high), Addrs: addrs}
	return &next, nil
}

// sameChange reports whether v is what the request asked for: the
// members the request would make of the node's configuration.
func (n *Node) sameChange(v Membership) bool {
	next, err := n.wanted(n.changer)
	if err != nil || next == nil {
		return false
	}
	a, b := slices.Clone(next.Members), slices.Clone(v.Members)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// reachable reports whether a majority of next's members answered this
// round: the members that promised, and the member being added.
func (n *Node) reachable(next Membership) bool {
	c, up := n.changer, 0
	for _, id := range next.Members {
		if idx, ok := n.accIdx[id]; ok && c.yes.has(idx) || id == c.changeAdded() && c.joinerUp {
			up++
		}
	}
	return up >= majority(len(next.Members))
}

// unreachableError refuses a change whose new configuration would not
// have a majority that answered.
func (n *Node) unreachableError(next Membership) *Error {
	c := n.changer
	var up, down []string
	for _, id := range next.Members {
		if idx, ok := n.accIdx[id]; ok && c.yes.has(idx) || id == c.changeAdded() && c.joinerUp {
			up = append(up, id)
		} else {
			down = append(down, id)
		}
	}
	return &Error{Code: CodePreconditionFailed, Text: fmt.Sprintf(
		"refused: the new configuration %v needs %d members up, but only %d answered (%s); not answering: %s. "+
			"Bring them up first, or force the change (force: true) if you know better",
		next.Members, majority(len(next.Members)), len(up), joinNames(up), joinNames(down))}
}

func joinNames(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// changePropose sends member_propose for v to the members.
func (n *Node) changePropose(v Membership) {
	c := n.changer
	c.phase, c.value, c.proposed = changeProposing, &v, true
	c.heard, c.yes, c.roundEnd = n.newTally(), n.newTally(), n.now+ms(n.cfg.RoundTimeoutMs)
	for _, id := range n.voters() {
		vv := v.copied()
		n.send(Msg{Type: MsgChangePropose, To: id, Epoch: c.epoch, Ballot: c.ballot, Value: &vv})
	}
}

// changeCommit: a majority accepted, so the value is chosen. The node
// adopts it and pushes it to every old and new member; once a majority of
// the old members hold it, it is active and the operator is answered.
func (n *Node) changeCommit(now time.Duration) {
	c := n.changer
	c.phase, c.old, c.newAcked = changeCommitting, n.conf.copied(), map[string]bool{}
	c.heard, c.roundEnd = n.newTally(), now+ms(n.cfg.RoundTimeoutMs)
	c.pushUntil = max(c.pushUntil, now+ms(n.cfg.QuorumTimeoutMs))
	n.adopt(now, *c.value)
	n.noteAck(n.cfg.ID)
	n.pushCommit()
}

// pushCommit sends the chosen configuration to every old and new member
// that has not said it holds it.
func (n *Node) pushCommit() {
	c := n.changer
	for _, id := range union(c.old.Members, c.value.Members) {
		if id != n.cfg.ID && !c.newAcked[id] {
			v := c.value.copied()
			n.send(Msg{Type: MsgConfig, To: id, Conf: &v})
		}
	}
}

// onConfigAck counts a node that holds the configuration being activated
// (or committed), and finishes the phase once a majority of the previous
// members do.
func (n *Node) onConfigAck(m Msg) {
	c := n.changer
	switch {
	case c.phase == changeActivating && m.Epoch >= n.conf.Epoch && slices.Contains(n.conf.Prev, m.From):
		c.heard.add(slices.Index(n.conf.Prev, m.From))
		n.activeEnough()
	case c.phase == changeCommitting && m.Epoch >= c.value.Epoch:
		n.noteAck(m.From)
	}
}

// noteAck records that id holds the committed configuration; once a
// majority of the old members do, the configuration is active and the
// operator is answered; once every old and new member does, the run ends.
func (n *Node) noteAck(id string) {
	c := n.changer
	c.newAcked[id] = true
	if i := slices.Index(c.old.Members, id); i >= 0 {
		c.heard.add(i)
	}
	if c.heard.count() >= majority(len(c.old.Members)) {
		if n.conf.Epoch == c.value.Epoch {
			n.activated = true
		}
		n.answerChange()
	}
	if len(c.newAcked) >= len(union(c.old.Members, c.value.Members)) && c.r == nil {
		n.changer = nil
	}
}

// answerChange answers the operator once the committed configuration is
// active: ok if it was the requested change, else error 22 naming the
// change that won.
func (n *Node) answerChange() {
	c := n.changer
	if c.r == nil {
		return
	}
	r := c.r
	c.r = nil
	if c.own {
		n.reply(r, r.Op.String()+"_ok", n.memberOK(n.now))
		return
	}
	n.fail(r, &Error{Code: CodePreconditionFailed, RetryInMs: ceilMs(n.change.waitUntil - n.now), Text: fmt.Sprintf(
		"another change won this epoch: the configuration is now %s; ask for %s again once the next change is allowed (in %d ms)",
		c.value, describe(r.Request), ceilMs(n.change.waitUntil-n.now))})
}

// changeWaiting answers a change that a majority cannot promise yet
// because of the waiting rule: error 22 with the time left.
func (n *Node) changeWaiting(now, wait time.Duration) {
	c := n.changer
	if c.proposed {
		n.changeRetry(now)
		return
	}
	left := ceilMs(wait)
	n.changeFail(&Error{Code: CodePreconditionFailed, RetryInMs: left, Text: fmt.Sprintf(
		"another change is waiting: the members of %s adopted it recently, and a change may start only once every lease the "+
			"previous configuration could have granted has run out (the waiting rule); ask again in %d ms", n.conf, left)})
}

// changeRetry starts a fresh prepare after a random backoff, or fails the
// request if that would pass its deadline.
func (n *Node) changeRetry(now time.Duration) {
	c := n.changer
	c.tries++
	c.phase, c.retryAt = changeIdle, now+n.backoff(c.tries)
	if c.r != nil && c.retryAt >= c.r.deadline {
		n.changeExpired(now)
	}
}

// changeFail answers the request with err and ends the run.
func (n *Node) changeFail(err *Error) {
	if c := n.changer; c.r != nil {
		n.fail(c.r, err)
	}
	n.changer = nil
}

// changeExpired answers a change whose time ran out: error 11 if no
// propose went out, else error 0 (a value may have been chosen; a
// committed one is pushed on while the push lasts).
func (n *Node) changeExpired(now time.Duration) {
	c := n.changer
	if c == nil || c.r == nil {
		return
	}
	switch {
	case c.phase == changeCommitting:
		r := c.r
		c.r = nil
		n.fail(r, timedOut("the change to %s was chosen, but fewer than a majority of the previous members said they hold it "+
			"within the quorum timeout; it takes effect as they learn it (the next change, or any proposer, finishes it)", c.value))
	case c.proposed:
		n.changeFail(timedOut("a change was proposed but no majority of %s accepted it in time; it may still be chosen: "+
			"look with member_list, and ask again", n.conf))
	default:
		n.changeFail(unavailable("no majority of %s promised the change in time, so nothing was proposed; ask again", n.conf))
	}
	_ = now
}

// changerWake is when the change run needs Tick.
func (n *Node) changerWake() time.Duration {
	c := n.changer
	switch {
	case c == nil:
		return Never
	case c.phase == changeIdle:
		return c.retryAt
	case c.phase == changeCommitting:
		return min(c.roundEnd, c.pushUntil)
	}
	return c.roundEnd
}

// changerTimer handles a change run's round timeout or backoff.
func (n *Node) changerTimer(now time.Duration) {
	c := n.changer
	if c == nil || now < n.changerWake() {
		return
	}
	switch c.phase {
	case changeIdle:
		n.startChange(now)
	case changeActivating:
		n.changeActivate(now)
	case changePreparing:
		if c.yes.count() >= n.quorum {
			n.changeChoose(now) // waited for the rest to answer; decide now
			return
		}
		if wait := c.majorityWait(n.quorum, now); wait > 0 {
			n.changeWaiting(now, wait)
			return
		}
		n.changeRetry(now)
	case changeProposing:
		n.changeRetry(now)
	case changeCommitting:
		if now >= c.pushUntil {
			n.changeExpired(now)
			n.changer = nil
			return
		}
		c.roundEnd = now + ms(n.cfg.RoundTimeoutMs)
		n.pushCommit()
	}
}

// changerAdopted restarts the change run under a configuration adopted
// meanwhile (a concurrent change won, or this node was behind), unless it
// is the run's own commit.
func (n *Node) changerAdopted(now time.Duration) {
	c := n.changer
	switch {
	case c == nil:
	case c.phase == changeCommitting:
	case c.r == nil:
		n.changer = nil
	default:
		c.need, c.proposed = 0, false
		n.startChange(now)
	}
}
