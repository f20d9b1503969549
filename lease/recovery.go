package lease

import "time"

// Recovery keeps fencing tokens growing across a restart (doc.go,
// "Fencing tokens"). A restarted acceptor has forgotten every promise, so a
// majority it belongs to could accept a ballot below a token some client
// already holds. During its boot wait it therefore asks the other
// acceptors for their ballot high-water marks (the highest counter each
// issued or observed) and, before it serves, takes the largest as a floor
// under every promise. It needs answers from n-q+1 acceptors that are not
// restarting themselves: every majority that accepted a lease instance
// before the restart has q-1 members besides this one, and any n-q+1 other
// acceptors include one of them, or one that recovered from one of them.
// When so many acceptors are restarting that n-q+1 ready ones cannot exist
// (a majority restarted: a whole-cluster restart, as far as memory goes),
// it settles for what it heard; tokens then rely on the wall-clock floor
// of the ballot counter (ballotSource).

// syncRound is a recovering node's collection of high-water marks.
type syncRound struct {
	roundEnd   time.Duration
	ready      tally  // acceptors that answered and are not restarting
	restarting tally  // acceptors that answered and are restarting too
	high       uint64 // the largest counter heard
}

// startRecovery puts a restarted acceptor (one with a boot wait) into
// recovery; its first sync round goes out at the first call.
func (n *Node) startRecovery(now time.Duration) {
	if _, acc := n.accIdx[n.cfg.ID]; !acc || n.cfg.BootWaitMs == 0 || n.cfg.weaken == weakNoRecovery || n.cfg.weaken == weakOverwrite {
		return
	}
	n.recovering = true
	n.sync = syncRound{roundEnd: now, ready: n.newTally(), restarting: n.newTally()}
}

// syncWake is when recovery needs Tick next.
func (n *Node) syncWake() time.Duration {
	if !n.recovering {
		return Never
	}
	return n.sync.roundEnd
}

// syncTimer sends a sync round to every other acceptor that has not
// answered, once per round timeout, until recovery ends.
func (n *Node) syncTimer(now time.Duration) {
	if !n.recovering || now < n.sync.roundEnd {
		return
	}
	if n.maybeRecovered() {
		return
	}
	n.sync.roundEnd = now + ms(n.cfg.RoundTimeoutMs)
	for i, a := range n.cfg.Acceptors {
		if a != n.cfg.ID && !n.sync.ready.has(i) && !n.sync.restarting.has(i) {
			n.send(Msg{Type: MsgSync, To: a, ReqID: uint64(n.cfg.Incarnation)})
		}
	}
}

// answerSync tells a recovering acceptor this node's high-water mark. The
// request id is the asker's incarnation, so only answers written after
// its restart count.
func (n *Node) answerSync(m Msg) {
	if _, acc := n.accIdx[n.cfg.ID]; !acc {
		return
	}
	n.send(Msg{Type: MsgSyncResp, To: m.From, ReqID: m.ReqID, Counter: n.ballots.counter, Recovering: n.recovering})
}

// onSyncResp counts one acceptor's high-water mark.
func (n *Node) onSyncResp(m Msg, idx int) {
	if !n.recovering || m.ReqID != uint64(n.cfg.Incarnation) || n.cfg.Acceptors[idx] == n.cfg.ID {
		return
	}
	if m.Recovering {
		n.sync.restarting.add(idx)
	} else {
		n.sync.ready.add(idx)
	}
	n.sync.high = max(n.sync.high, m.Counter)
	n.maybeRecovered()
}

// maybeRecovered ends recovery when enough is known, and reports whether
// it did.
func (n *Node) maybeRecovered() bool {
	total := len(n.cfg.Acceptors)
	need := total - n.quorum + 1 // ready acceptors besides this one
	if n.sync.ready.count() < need && n.sync.restarting.count() < n.quorum-1 {
		return false
	}
	n.floor = max(n.floor, n.sync.high)
	n.ballots.observe(n.sync.high)
	n.recovering = false
	return true
}
