package lease_test

import (
	"encoding/json"
	"fmt"
	"time"

	"chunklease/history"
	"chunklease/lease"
	leasewl "chunklease/workloads/lease"
)

// The acceptors' own promise, checked on the wire. No client can see an
// acceptor that accepts another server's propose inside the drift
// stretch of a lease it protects: a competitor proposes only after a
// majority answered its prepare open, and an acceptor refuses to promise,
// and reports the lease, until the stretched end (doc.go, grant step 2);
// so by the time such a propose can win, a majority-intersecting
// acceptor's protection, which outlasts every client's belief, has ended.
// Prepare and A2 each keep the clients' promise alone, which is why an A2
// judged on the unstretched end survives every history checker. The
// simulation therefore also holds each acceptor to what rules 4 and 5
// promise in real time, read off its answers: an acceptor that answered
// propose_ok to server S for T ms at real time t protects S until at
// least t + T/(1-rho) (T·(1+rho)/(1-rho) of a clock that runs at most
// 1+rho), so it must not answer propose_ok to another server before then,
// unless a release of S with a token at least the instance's was asked
// for before (it may end the instance at once, rule 6) or the acceptor
// restarted (its boot wait covers the instance instead). Only answers that
// cross the network are seen: a node's own acceptor answers its proposer
// inside the node.

// acceptSlack absorbs the nanosecond rounding of the simulated clocks.
const acceptSlack = 10 * time.Microsecond

// acceptance is one propose_ok an acceptor sent.
type acceptance struct {
	node          int
	incarnation   time.Duration // the acceptor's start: a restart forgets
	chunk, server string
	token         int64
	at, until     time.Duration // until: the least end of its protection
}

// observe notes a message node i sent at the world's now: the first
// propose_ok of each instance (a duplicate propose is answered again
// without a new protection).
func (w *world) observe(i int, m lease.Msg) {
	if m.Type != lease.MsgProposeResp || !m.OK || w.sc.master {
		return
	}
	a := acceptance{node: i, incarnation: w.nodes[i].start, chunk: m.Chunk, server: m.Server, token: m.Ballot.Token(),
		at: w.now, until: w.now + protectedFor(time.Duration(m.LeaseMs)*time.Millisecond, w.sc.driftPPM)}
	if w.acceptSeen == nil {
		w.acceptSeen = map[acceptance]bool{}
	}
	key := a
	key.at, key.until = 0, 0
	if !w.acceptSeen[key] {
		w.acceptSeen[key] = true
		w.accepts = append(w.accepts, a)
	}
}

// protectedFor is the least real time a lease of length d stays protected
// on an acceptor whose clock is within ppm of true time: d/(1-rho).
func protectedFor(d time.Duration, ppm int64) time.Duration {
	return time.Duration(int64(d) * 1_000_000 / (1_000_000 - ppm))
}

// checkAcceptorProtection reports every acceptance of a server while the
// same acceptor incarnation still protected another server's instance
// that no release asked for before could have ended. accepts is in time
// order.
func checkAcceptorProtection(ops []history.Op, accepts []acceptance, ids []string) []string {
	type release struct {
		at    time.Duration
		token int64
	}
	releases := map[string][]release{} // chunk/server -> release invokes
	for _, op := range ops {
		if op.Type != history.Invoke || op.F != leasewl.FRelease {
			continue
		}
		var v struct {
			Chunk, Server string
			Token         int64
		}
		if json.Unmarshal(op.Value, &v) == nil {
			releases[v.Chunk+"/"+v.Server] = append(releases[v.Chunk+"/"+v.Server], release{time.Duration(op.Time), v.Token})
		}
	}
	released := func(a acceptance, before time.Duration) bool {
		for _, r := range releases[a.chunk+"/"+a.server] {
			if r.at < before && r.token >= a.token {
				return true
			}
		}
		return false
	}
	var bad []string
	live := []acceptance{} // earlier acceptances whose protection may still run
	for _, b := range accepts {
		kept := live[:0]
		for _, a := range live {
			if a.until-acceptSlack <= b.at {
				continue
			}
			kept = append(kept, a)
			if a.node == b.node && a.incarnation == b.incarnation && a.chunk == b.chunk && a.server != b.server && !released(a, b.at) {
				bad = append(bad, fmt.Sprintf("%s accepted %s's propose (token %d) for %s at %v, %v before the end of the protection of %s (token %d) it accepted at %v",
					ids[b.node], b.server, b.token, b.chunk, b.at, a.until-b.at, a.server, a.token, a.at))
			}
		}
		live = append(kept, b)
	}
	return bad
}
