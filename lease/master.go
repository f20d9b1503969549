package lease

import "time"

// The master lease (contract section 1, "Master lease"): the seeds' own
// use of PaxosLease, one cluster-wide lease a node holds for itself. It
// runs on the same instance machinery as chunk leases, as the instance
// with the empty chunk handle (no client chunk can be empty), with this
// node's id as the server: the same deadline rule, drift stretch, A2,
// boot wait and fencing tokens apply. A started node keeps asking for it
// (grant for itself), renews it at half its remaining time with jitter,
// backs off when another node holds it, and gives it back when stopped.
// master_status is answered from the node's own timer with no messages:
// that is the point of a master lease, reads served locally while it
// holds. While it says is_master it also names the token of the instance
// it believes in: a chunk token like any other, so the masters' tokens
// follow the order rules of doc.go ("Fencing tokens"), and a master's
// actions can be fenced by the storage they reach.

// masterChunk is the master lease's instance key.
const masterChunk = ""

// masterState is this node's side of the master lease.
type masterState struct {
	wanted  bool          // started and not stopped
	holding bool          // this node's own lease runs until until
	until   time.Duration // the deadline of the latest ok instance, less the drift margin
	token   int64         // the latest instance's token: releasing it gives back every earlier one (rule 6)
	// The negative controls' view: the count of own instances held
	// (master-local-token reports it) and the latest instance's token,
	// kept after it was given back (master-stale-status reports it).
	terms, lastToken int64
	// promised is the latest end of mastership any master_status answer
	// told a client, stretched by the drift factor: the lease is given
	// back no earlier than that. A restarted node starts it at the end of
	// its boot wait (restartPromise): what its earlier incarnation told
	// clients is lost with its memory, but not with its lease.
	promised  time.Duration
	releaseAt time.Duration // when a stopped node gives the lease back; Never if not due
	known     string        // the node last learned to hold it
	nextAt    time.Duration // when the controller acts next; Never when idle
	running   bool          // an internal grant, renew or release is in flight
}

// MasterStatusOK answers master_status. Master is null when no holder was
// ever learned. Token is the fencing token of the instance the node
// believes in, present only while IsMaster.
type MasterStatusOK struct {
	IsMaster    bool    `json:"is_master"`
	Master      *string `json:"master"`
	RemainingMs int64   `json:"remaining_ms"`
	Token       int64   `json:"token,omitempty"`
}

// MasterStartOK and MasterStopOK answer master_start and master_stop; they
// have no fields.
type (
	MasterStartOK struct{}
	MasterStopOK  struct{}
)

// handleMaster serves master_start, master_stop and master_status.
func (n *Node) handleMaster(now time.Duration, r *request) {
	m := &n.master
	switch r.Op {
	case OpMasterStart:
		if !m.wanted {
			m.wanted, m.nextAt = true, now
			n.masterAct(now)
		}
		n.reply(r, "master_start_ok", MasterStartOK{})
	case OpMasterStop:
		n.masterStop(now)
		n.reply(r, "master_stop_ok", MasterStopOK{})
	case OpMasterStatus:
		n.reply(r, "master_status_ok", n.masterStatus(now))
	}
}

// restartPromise is what a new incarnation must assume its earlier ones
// promised: mastership until the end of its boot wait. A release names
// the node, not the incarnation, and ends every instance of it with a
// token up to its own (rule 6), the instances an earlier incarnation held
// and announced included: a restarted node that gets master_start while
// its old lease is live renews that lease (rule 3 opens it to the same
// node, and rule 10 keeps its end), and a master_stop then gives it all
// back. So a stop takes effect at once, but the lease goes back only once
// every announcement an earlier incarnation can have made has run out:
// each was made before the restart, for at most the longest lease, and
// counted by its client for at most that stretched by the drift factor
// in true time, which the boot wait (BootWaitMs >= MaxLeaseMs, stretched
// the same way, counted from the restart) outlasts. A first start
// (BootWaitMs 0) has no earlier incarnation and releases at once.
func restartPromise(bootUntil time.Duration) time.Duration { return bootUntil }

// masterStatus reads the node's own timer: is_master only while its own
// latest lease is live (rule 1's deadline, less the drift margin), with
// that lease's token.
func (n *Node) masterStatus(now time.Duration) MasterStatusOK {
	m := &n.master
	st := MasterStatusOK{}
	until := m.until
	if n.cfg.weaken == weakMasterStale {
		until += ms(n.cfg.DefaultLeaseMs)
	}
	if (m.holding || n.cfg.weaken == weakMasterStale) && now < until {
		st.IsMaster, st.RemainingMs, st.Token = true, floorMs(until-now), m.token
		// The client counts r on its own clock, up to r/(1-rho) of true
		// time, and this node's clock may run fast: keep the lease at
		// least r stretched (rule 5) of this node's clock.
		m.promised = max(m.promised, now+stretch(ms(st.RemainingMs), n.cfg.DriftPPM))
		switch n.cfg.weaken {
		case weakMasterStale:
			st.Token = m.lastToken
		case weakMasterOwnToken:
			st.Token = m.terms
		}
	}
	if holder := n.masterHolder(now); holder != "" {
		st.Master = &holder
	}
	return st
}

// masterHolder is this node while it is master, else the node it last
// learned holds the lease: from its own acceptor's record (every node
// sees the proposes) or from answers to its own attempts.
func (n *Node) masterHolder(now time.Duration) string {
	if n.master.holding && now < n.master.until {
		return n.cfg.ID
	}
	if a, ok := n.chunks.get(masterChunk); ok && a.live(now) {
		return n.serverName(a.server())
	}
	return n.master.known
}

// masterWake is when the master controller needs Tick.
func (n *Node) masterWake() time.Duration {
	m := &n.master
	w := Never
	if m.wanted && !m.running {
		w = m.nextAt
	}
	if m.holding {
		w = min(w, m.until)
	}
	if !m.wanted {
		w = min(w, m.releaseAt)
	}
	return w
}

// masterTimer expires the own lease and starts what is due.
func (n *Node) masterTimer(now time.Duration) {
	m := &n.master
	if m.holding && now >= m.until {
		m.holding = false
	}
	if m.wanted && !m.running && now >= m.nextAt {
		n.masterAct(now)
	}
	if !m.wanted && now >= m.releaseAt {
		n.masterGiveBack(now)
	}
}

// masterStop ends mastership: no more renewals, and master_status answers
// is_master false from now on. The lease is given back once every
// mastership a status answer promised has run out (at once if none is
// running): a client told "master for r ms more" relies on it, and a
// stop that reaches the node late (a paused process) must not cut that
// short.
func (n *Node) masterStop(now time.Duration) {
	m := &n.master
	m.wanted = false
	if !m.holding {
		return
	}
	m.holding = false
	m.releaseAt = max(now, m.promised)
	if m.releaseAt <= now {
		n.masterGiveBack(now)
	}
}

// masterAct asks for the lease, or renews it, through the proposer.
func (n *Node) masterAct(now time.Duration) {
	m := &n.master
	if !n.known { // a joining node: no configuration to count a quorum in yet
		m.nextAt = now + ms(n.cfg.RoundTimeoutMs)
		return
	}
	op := OpGrant
	if m.holding {
		op = OpRenew
	}
	m.running, m.nextAt = true, Never
	n.startInternal(now, Request{Op: op, Chunk: masterChunk, Server: n.cfg.ID})
}

// masterGiveBack releases the latest instance, and with it every earlier
// one (rule 6), so that another node can take over without waiting for
// them to end.
func (n *Node) masterGiveBack(now time.Duration) {
	m := &n.master
	m.releaseAt = Never
	if m.token > 0 {
		n.startInternal(now, Request{Op: OpRelease, Chunk: masterChunk, Server: n.cfg.ID, Token: m.token})
	}
	m.token = 0
}

// startInternal runs a request on the node's own behalf; its outcome goes
// to masterResult instead of a client.
func (n *Node) startInternal(now time.Duration, req Request) {
	r := &request{Request: req, internal: true, deadline: now + ms(n.cfg.QuorumTimeoutMs)}
	r.leaseLen = ms(n.cfg.DefaultLeaseMs)
	n.pending = append(n.pending, r)
	if req.Op == OpRelease {
		n.startRelease(now, r)
		return
	}
	n.enqueue(now, r)
}

// masterResult learns from an internal request's outcome and plans the
// next step: renew at half the remaining time (with jitter), retry after
// a backoff, or wait for another node's lease to end.
func (n *Node) masterResult(now time.Duration, r *request, body any, err *Error) {
	if r.Op == OpRelease {
		return
	}
	m := &n.master
	m.running = false
	switch b := body.(type) {
	case GrantOK:
		if b.Primary != n.cfg.ID {
			m.known = b.Primary
			m.nextAt = now + ms(b.ExpiresInMs) + n.backoff(1)
			return
		}
		n.masterHeld(now, b.ExpiresInMs, b.Token)
	case RenewOK:
		n.masterHeld(now, b.NewExpiresInMs, b.Token)
	default:
		_ = err // a failed renew leaves the lease to run out; a failed grant backs off
		m.nextAt = now + n.backoff(2)
		if m.holding {
			m.nextAt = min(m.nextAt, m.until)
		}
	}
	if !m.wanted {
		n.masterStop(now) // stopped while the request was in flight
	}
}

// masterHeld records a new own instance and plans its renewal.
func (n *Node) masterHeld(now time.Duration, leftMs, token int64) {
	m := &n.master
	m.holding, m.known, m.releaseAt = true, n.cfg.ID, Never
	m.until = now + ms(leftMs)
	m.token, m.lastToken = token, token
	m.terms++
	half := ms(leftMs) / 2
	jitter := time.Duration(n.cfg.Rand.Int64N(int64(half/4) + 1))
	m.nextAt = now + half - jitter
}
