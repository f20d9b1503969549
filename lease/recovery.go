package lease

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Restarts (doc.go "Fencing tokens", "Restarts and memory"). A restarted
// acceptor has forgotten its promises and leases. Rule 7 keeps it silent
// for its boot wait, so every lease it may have accepted has ended before
// it answers again. Its promises are replaced by a floor under every
// ballot it will promise or accept:
//
//   - the wall-clock floor: the counter of its wall clock at the end of the
//     boot wait. Every token issued before the restart led its issuer's
//     wall clock by at most L (pacing, ballot.go), and at least the boot
//     wait has passed since, so the floor is above all of them as long as
//     the nodes' wall clocks agree within BootWaitMs - L. This is what
//     holds across any sequence of restarts, the whole cluster's included.
//   - the recovery guard: it asks the other acceptors for their ballot
//     high-water marks and raises the floor with every answer that arrives,
//     before and after it starts serving. Once n-q+1 acceptors that are
//     not restarting themselves have answered (any majority that accepted
//     a lease before the restart has q-1 members besides this one, and any
//     n-q+1 other acceptors include one of them or one that recovered from
//     one of them), the floor is above every token that majority could
//     have granted, whatever the clocks say. It is a guard, not a gate:
//     the acceptor serves once the boot wait is over, whoever answered,
//     so a dead peer never stalls a live majority.
//   - what readiness waits for (AwaitingRecovery): recovery complete, or
//     the boot wait over, the marks of a majority of the acceptors in
//     (this node counted) and a round timeout passed since the first
//     round went out, so that every acceptor that could answer in a round
//     has. The others are down, paused or cut off; what only they
//     remember is ordered by the wall-clock floor (doc.go "Fencing
//     tokens", "What readiness waits for"), and their marks still raise
//     the floor whenever they answer.
//
// The node logs each step: the boot wait, each raise of the floor and
// from whom, the start of serving (and whether recovery is complete by
// then), and recovery's completion.

// syncRound is a recovering node's collection of high-water marks.
type syncRound struct {
	roundEnd   time.Duration
	firstAsked time.Duration // when the first round went out (Never before)
	ready      tally         // acceptors that answered and are not restarting
	restarting tally         // acceptors that answered and are restarting too
	high       uint64        // the largest counter heard
	// parts: which cores of each acceptor that runs several have
	// answered, by acceptor index (cores.go); nil while none has.
	parts map[int]*coreAnswers
	// answered: nodes outside the configuration that answered
	// (membership: every node is asked for its configuration).
	answered map[string]bool
	// restartingIDs: every node whose latest answers said it is
	// restarting too, from each of its cores (membership: the fallback
	// needs all of them).
	restartingIDs map[string]*restartAnswers
	// settled: readiness no longer waits for recovery (settleRecovery),
	// though it goes on until complete.
	settled bool
}

// bootState is where a restarted node is in its boot wait.
type bootState struct {
	announced bool // the end of the boot wait was logged (or there is none)
	// unrecovered: the acceptor began serving before recovery was complete,
	// so tokens from before its restart rest on the wall-clock floor alone.
	unrecovered bool
	// peers: when each other acceptor said it ends its own boot wait, on
	// this node's clock (booting answers), for error texts.
	peers map[int]time.Duration
}

// startRecovery puts a restarted acceptor (one with a boot wait) under its
// floor and into recovery; its first sync round goes out at the first call.
func (n *Node) startRecovery(now time.Duration) {
	restarted := n.cfg.BootWaitMs > 0 && (n.member() || n.cfg.Membership)
	if !restarted && !n.cfg.Join {
		n.boot.announced = true
		return
	}
	w := n.cfg.weaken
	if restarted {
		n.startBootWait(now)
	} else {
		n.boot.announced = true
	}
	if w == weakNoRecovery || w == weakOverwrite || !n.cfg.Membership && len(n.voters()) == 1 {
		return
	}
	n.recovering = true
	n.sync = syncRound{roundEnd: now, firstAsked: Never, ready: n.newTally(), restarting: n.newTally()}
	if n.cfg.Membership {
		n.logf("recovery: asking %s for their configurations and ballot high-water marks; the acceptor votes once "+
			"%d members of the configuration that are not restarting answered", joinNames(n.syncTargets()), n.syncNeed())
		return
	}
	n.logf("recovery: asking acceptors %s for their ballot high-water marks", n.namesOf(n.othersSet()))
}

// startBootWait puts a restarted acceptor under its wall-clock floor and
// logs its boot wait.
func (n *Node) startBootWait(now time.Duration) {
	if w := n.cfg.weaken; w != weakNoWallFloor && w != weakOverwrite {
		n.floor = n.ballots.floorAt(n.bootUntil)
	}
	floor := "no wall clock, so no floor but what recovery learns"
	if n.floor > 0 {
		floor = "from then on it refuses every ballot up to " + n.counterText(n.floor) + ", its wall clock then"
	}
	n.logf("restarted: boot wait %d ms (%d ms with the drift stretch): the acceptor answers nothing until it ends%s; %s",
		n.cfg.BootWaitMs, floorMs(n.bootUntil-now), n.wallText(n.bootUntil), floor)
}

// syncTargets are the nodes a recovery asks: the other acceptors; with
// membership every other node (any may hold a later configuration), and
// for a joining node that knows no configuration, the nodes it was given.
func (n *Node) syncTargets() []string {
	var ids []string
	switch {
	case !n.known:
		ids = n.cfg.Acceptors
	case n.cfg.Membership:
		ids = union(n.cfg.nodes(), n.conf.Members)
	default:
		ids = n.voters()
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == n.cfg.ID })
}

// syncNeed is how many members not restarting must answer for recovery
// to complete: n-q+1 besides this node.
func (n *Node) syncNeed() int { return len(n.voters()) - n.quorum + 1 }

// asksSync reports whether this core sends sync rounds: the lead; with
// membership every core, since each learns configurations (from answers
// and from the other cores, Node.Adopt) at its own moments, starts its
// count again at each, and must not wait for rounds the lead no longer
// sends (doc.go "Membership and cores").
func (n *Node) asksSync() bool { return n.lead() || n.cfg.Membership }

// syncWake is when recovery needs Tick next: only the lead core sends
// sync rounds (every core with membership, asksSync); the member's other
// cores count the answers it gets (the shell hands every sync answer to
// every core, Route).
func (n *Node) syncWake() time.Duration {
	if !n.recovering || !n.asksSync() {
		return Never
	}
	return n.sync.roundEnd
}

// syncTimer sends a sync round to every other acceptor that has not
// answered: once per round timeout during the boot wait, then once per
// sweep interval until recovery completes.
func (n *Node) syncTimer(now time.Duration) {
	if !n.recovering || !n.asksSync() || now < n.sync.roundEnd {
		return
	}
	n.sync.roundEnd = now + ms(n.cfg.RoundTimeoutMs)
	n.sync.firstAsked = min(n.sync.firstAsked, now)
	if now >= n.bootUntil && !n.cfg.Membership {
		n.sync.roundEnd = now + n.sweepInterval()
	}
	for _, a := range n.syncTargets() {
		i, member := n.accIdx[a]
		if member && (n.sync.ready.has(i) || n.sync.restarting.has(i) && !n.cfg.Membership) || !member && n.sync.answered[a] {
			continue // with membership a restarting member is asked again: it counts once it recovered
		}
		n.send(Msg{Type: MsgSync, To: a, ReqID: uint64(n.cfg.Incarnation), Nonce: n.cfg.Nonce})
	}
}

// answerSync tells a recovering acceptor this node's high-water mark: the
// highest of its promises, its floor and its own ballots. The request id
// and nonce are the asker's incarnation and nonce, so only answers written
// after its restart count. A core of a member with several answers for
// its own chunks and names itself (every core gets the sync, Route).
//
// With membership every node that knows a configuration answers, with
// its configuration and what it accepted in that epoch's change instance.
func (n *Node) answerSync(m Msg) {
	resp := Msg{Type: MsgSyncResp, To: m.From, ReqID: m.ReqID, Nonce: m.Nonce, Counter: n.highWater(), Recovering: n.recovering}
	switch {
	case n.cfg.Membership && n.known:
		resp.Conf = n.confMsg()
		if n.change.value != nil {
			v := n.change.value.copied()
			resp.Accepted, resp.Value = n.change.accepted, &v
		}
	case !n.member():
		return
	}
	if n.cfg.Cores > 1 {
		resp.Core, resp.Cores = n.cfg.Core, n.cfg.Cores
	}
	n.send(resp)
}

// onSyncResp raises the floor with one node's high-water mark at once
// (raising a floor is always safe), and counts the answer if it comes
// from a member: a member that runs several cores once each of them
// answered (cores.go). With membership it first learns the answer's
// configuration, if newer, and the value accepted in the change instance
// of its epoch, if its ballot is higher than what this node knows.
func (n *Node) onSyncResp(now time.Duration, m Msg) {
	if !n.recovering || m.ReqID != uint64(n.cfg.Incarnation) || !n.ownNonce(m) || m.From == n.cfg.ID {
		return
	}
	n.learnFromSync(now, m)
	if !n.recovering {
		return
	}
	n.sync.noteRestarting(m)
	idx, member := n.accIdx[m.From]
	if !member {
		n.noteSyncHigh(now, m)
		if n.sync.answered == nil {
			n.sync.answered = map[string]bool{}
		}
		n.sync.answered[m.From] = true
		return
	}
	fresh, complete, restarting := n.sync.note(idx, m, n.cfg.weaken)
	if !fresh {
		return
	}
	if complete {
		t := &n.sync.ready
		if restarting {
			t = &n.sync.restarting
		}
		if !t.add(idx) && m.Cores <= 1 {
			return // a duplicate answer
		}
	}
	n.noteSyncHigh(now, m)
	n.maybeRecovered(now)
}

// noteSyncHigh raises the floor with one answer's high-water mark.
func (n *Node) noteSyncHigh(now time.Duration, m Msg) {
	n.sync.high = max(n.sync.high, m.Counter)
	if n.cfg.weaken == weakRecoveryNotMax {
		n.floor = max(n.ballots.floorAt(n.bootUntil), m.Counter) // the latest answer, not the largest
	}
	if n.sync.high > n.floor && n.cfg.weaken != weakRecoveryNotMax {
		n.floor = n.sync.high
		n.logf("recovery: ballot floor raised to %s by %s's high-water mark", n.counterText(n.floor), m.From)
	}
	n.ballots.observe(now, n.sync.high)
}

// maybeRecovered ends recovery when enough is known: n-q+1 acceptors not
// restarting answered, or q-1 that are restarting too (then a majority
// restarted and nothing remembers more than the floors).
//
// With membership the second way is narrower (wholeRestart): q-1
// restarting members of a configuration this node may hold stale prove
// nothing, since two restarted nodes cut off together can be a majority
// of an old configuration while a later one goes on without them.
func (n *Node) maybeRecovered(now time.Duration) {
	fallback := n.sync.restarting.count() >= n.quorum-1
	if n.cfg.Membership {
		fallback = n.wholeRestart(now)
	}
	if n.sync.ready.count() < n.syncNeed() && !fallback {
		return
	}
	n.recovering = false
	if n.cfg.Membership {
		n.logf("recovery complete: configuration %s%s, from %s; ballot floor %s", n.conf, n.roleText(),
			n.namesOf(n.sync.ready.set|n.sync.restarting.set), n.counterText(n.floor))
		return
	}
	n.logf("recovery complete: high-water marks from %s; ballot floor %s", n.namesOf(n.sync.ready.set|n.sync.restarting.set), n.counterText(n.floor))
}

// settleRecovery stops readiness from waiting for a recovery that cannot
// complete with the acceptors that answer: once the boot wait is over, a
// round timeout has passed since the first round (every acceptor that
// could answer within a round has), and the marks of a majority are in
// (this node's own and q-1 others', restarting or not). It is checked at
// every call; settleWake makes sure there is a call when the time comes.
// The lead core sends the rounds at its first call (syncTimer); a
// member's other cores, started with it, count their first call as the
// first round's, since they count the answers to it.
func (n *Node) settleRecovery(now time.Duration) {
	s := &n.sync
	if !n.recovering || s.settled || n.cfg.Membership {
		return // with membership a node votes and is ready once recovered (doc.go "Membership")
	}
	if s.firstAsked == Never && !n.lead() {
		s.firstAsked = now
	}
	if now < n.settleAt() || s.ready.count()+s.restarting.count() < n.quorum-1 {
		return
	}
	s.settled = true
	heard := s.ready.set | s.restarting.set
	n.coreLogf("recovery: ready with the high-water marks of a majority (this node, %s); %s did not answer within a round "+
		"(down, paused or cut off): tokens issued before this restart that only they took part in stay below new ones "+
		"as long as the nodes' wall clocks agree within %d ms, and each of their marks still raises the floor when it comes",
		n.namesOf(heard), n.namesOf(n.othersSet()&^heard), n.clockBoundMs())
}

// settleAt is the earliest time settleRecovery may settle: the end of the
// boot wait, and a round timeout after the first round (Never before it).
func (n *Node) settleAt() time.Duration {
	if n.sync.firstAsked == Never {
		return Never
	}
	return max(n.bootUntil, n.sync.firstAsked+ms(n.cfg.RoundTimeoutMs))
}

// settleWake is when settleRecovery needs a call: at settleAt while
// recovery still holds readiness back. Once that has passed, only an
// answer can settle it, and each answer is a call.
func (n *Node) settleWake(now time.Duration) time.Duration {
	if at := n.settleAt(); n.recovering && !n.sync.settled && at > now {
		return at
	}
	return Never
}

// bootWake is when the end of the boot wait is to be logged.
func (n *Node) bootWake() time.Duration {
	if n.boot.announced {
		return Never
	}
	return n.bootUntil
}

// bootTimer logs the end of the boot wait: the acceptor serves from now on.
func (n *Node) bootTimer(now time.Duration) {
	if n.boot.announced || now < n.bootUntil {
		return
	}
	n.boot.announced = true
	if n.recovering && n.cfg.Membership {
		n.maybeRecovered(now) // restarting peers may have answered during the boot wait
	}
	if !n.recovering {
		n.logf("boot wait over: the acceptor serves, ballot floor %s", n.counterText(n.floor))
		return
	}
	if n.cfg.Membership {
		n.logf("boot wait over: the acceptor votes once recovery is complete (it must learn the configuration: membership); "+
			"heard from %s so far", n.namesOf(n.sync.ready.set|n.sync.restarting.set))
		return
	}
	n.boot.unrecovered = true
	heard := n.sync.ready.set | n.sync.restarting.set
	n.coreLogf("boot wait over: the acceptor serves, ballot floor %s; recovery incomplete (high-water marks heard from: %s; not from: %s): "+
		"tokens issued before this restart stay below new ones as long as the nodes' wall clocks agree within %d ms",
		n.counterText(n.floor), n.namesOf(heard), n.namesOf(n.othersSet()&^heard), n.clockBoundMs())
}

// clockBoundMs is how far the nodes' wall clocks may disagree for the
// restart floor to order tokens: the boot wait less the lead bound L.
func (n *Node) clockBoundMs() int64 { return n.cfg.BootWaitMs - n.ballots.leadLimitMs() }

// onBooting notes that an acceptor is in its boot wait, for error texts,
// and has the round that asked it sent again when the boot wait ends
// (if that is before the round would time out anyway): a restarted
// acceptor is asked again the moment it can answer.
func (n *Node) onBooting(now time.Duration, m Msg, idx int) {
	if n.boot.peers == nil {
		n.boot.peers = map[int]time.Duration{}
	}
	ready := now + ms(m.BootingMs) + time.Millisecond
	n.boot.peers[idx] = ready
	var end *time.Duration
	if r := n.answered(m); r != nil && m.Ballot.IsZero() {
		switch {
		case r.rd != nil:
			end = &r.rd.roundEnd
		case r.rel != nil:
			end = &r.rel.roundEnd
		}
	} else if r := n.running(m.Chunk, m.Ballot, preparing); r != nil {
		end = &r.att.roundEnd
	} else if r := n.running(m.Chunk, m.Ballot, proposing); r != nil && !r.att.fast {
		end = &r.att.roundEnd
	}
	if end != nil {
		*end = min(*end, ready)
	}
}

// answerBooting tells a proposer that this acceptor is in its boot wait
// and did nothing.
//
// One past its boot wait that has not recovered the configuration yet
// (membership) says so, and to ask again in a round.
func (n *Node) answerBooting(now time.Duration, m Msg) {
	left, recovering := ceilMs(n.bootUntil-now), false
	if left == 0 {
		left, recovering = n.cfg.RoundTimeoutMs, true
	}
	n.send(Msg{Type: MsgBooting, To: m.From, Chunk: m.Chunk, Ballot: m.Ballot, ReqID: m.ReqID, Nonce: m.Nonce, BootingMs: left, Recovering: recovering})
}

// othersSet is every other acceptor, as a tally set.
func (n *Node) othersSet() uint64 {
	var set uint64
	for i, a := range n.cfg.Acceptors {
		if a != n.cfg.ID {
			set |= 1 << uint(i)
		}
	}
	return set
}

// namesOf lists the acceptors in a tally set, "none" when empty.
func (n *Node) namesOf(set uint64) string {
	var names []string
	for i, a := range n.cfg.Acceptors {
		if set&(1<<uint(i)) != 0 {
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// wallText renders when the core's time at reads on the wall clock, or
// nothing without one.
func (n *Node) wallText(at time.Duration) string {
	if !n.ballots.hasWall {
		return ""
	}
	ms := CounterEpochMs + int64(time.Duration(n.ballots.wall(at))*n.ballots.unit/time.Millisecond)
	return " at " + time.UnixMilli(ms).UTC().Format("15:04:05.000") + " UTC by this node's wall clock"
}

// counterText renders a counter with the wall-clock time its time part
// stands for, for logs.
func (n *Node) counterText(c uint64) string {
	text := strconv.FormatUint(c, 10)
	if !n.ballots.hasWall || c == 0 {
		return text
	}
	ms := CounterEpochMs + int64(time.Duration(c>>LaneBits)*n.ballots.unit/time.Millisecond)
	return text + " (" + time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") + " UTC)"
}
