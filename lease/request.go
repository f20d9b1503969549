package lease

import (
	"fmt"
	"strings"
	"time"
)

// request is a client request in flight at this node.
type request struct {
	Request
	leaseLen time.Duration
	// deadline is arrival + QuorumTimeoutMs: by then the request is
	// answered, with error 11 if nothing better is known.
	deadline time.Duration
	done     bool
	// waiting: for a slot (admission.go); slot: holding one since
	// admitted.
	waiting, slot bool
	admitted      time.Duration

	// grant and renew: the running attempt, or nil while the request waits
	// in its chunk's queue or backs off until retryAt.
	att     *attempt
	retryAt time.Duration
	tries   int
	queued  bool // behind another grant or renew of the same chunk
	// proposed is set once any propose went out for this request: from
	// then on a failure is indefinite (error 0), not definite (11).
	proposed bool
	// outran is set when a majority accepted the latest attempt but its
	// lease, less the drift margin, had run out by the time they answered:
	// the error then says so (the lease is too short for this network).
	outran bool
	// fastTried is set once the renewal fast path was tried.
	fastTried bool
	// need is the highest promise an acceptor answered this request's
	// attempts with: its next ballot must climb past it.
	need uint64
	// pacedMs is set while the request waits for a ballot that would lead
	// the wall clock by more than L: by how much it would (ballot.go).
	pacedMs int64
	// internal marks the node's own master-lease requests: their outcome
	// goes to the master controller, not to a client.
	internal bool

	// check: the running read round; release: the release round.
	rd  *readRound
	rel *releaseRound
	// heard is the most acceptors any round of this request heard from,
	// heardFrom every acceptor that answered any of them, for the error
	// text.
	heard     int
	heardFrom uint64
}

// handleRequest validates a request and starts it.
func (n *Node) handleRequest(now time.Duration, req Request) {
	r := takeSpare(&n.spareRequests)
	*r = request{Request: req, deadline: now + ms(n.cfg.QuorumTimeoutMs)}
	n.pending = append(n.pending, r)
	n.taken++
	if err := n.validate(req); err != nil {
		n.fail(r, err)
		return
	}
	if !n.owns(req.Chunk) {
		n.fail(r, n.misrouted(req.Chunk))
		return
	}
	r.leaseLen = ms(req.LeaseMs)
	if req.LeaseMs == 0 {
		r.leaseLen = ms(n.cfg.DefaultLeaseMs)
	}
	switch {
	case req.Op >= OpMemberAdd:
		n.handleMember(now, r)
		return
	case req.Op >= OpMasterStart:
		n.handleMaster(now, r)
		return
	case !n.known:
		n.fail(r, unavailable("this node joined a running cluster and has not learnt its configuration yet, so nothing was sent; "+
			"ask a member, or again shortly"))
		return
	}
	n.admit(now, r)
}

// Limits on the names a request carries. Each chunk record keeps its
// handle and (while any record names it) its server's name, so these bound
// what one chunk can cost; they are far above real names (GFS chunk
// handles are 64-bit numbers, chunk servers host:port) and well inside
// the node's 1 MiB line limit even when every byte arrives \u-escaped.
const (
	// MaxChunkHandleBytes is the longest chunk_handle, in bytes of UTF-8.
	MaxChunkHandleBytes = 4096
	// MaxServerBytes is the longest server name, in bytes of UTF-8; node
	// ids, the servers of the master lease, have the same limit.
	MaxServerBytes = 4096
)

func (n *Node) validate(req Request) *Error {
	switch {
	case req.Op >= OpMasterStart && req.Op <= OpMemberList:
		return nil
	case req.Op < OpGrant || req.Op > OpRelease:
		return &Error{Code: CodeNotSupported, Text: fmt.Sprintf("unknown lease operation %v", req.Op)}
	case req.Chunk == "":
		return malformed("chunk_handle must be a non-empty string")
	case req.Op != OpCheck && req.Server == "":
		return malformed("server must be a non-empty string naming the chunk server")
	case len(req.Chunk) > MaxChunkHandleBytes:
		return malformed("chunk_handle is %d bytes; the limit is %d bytes", len(req.Chunk), MaxChunkHandleBytes)
	case len(req.Server) > MaxServerBytes:
		return malformed("server is %d bytes; the limit is %d bytes (name the chunk server by a shorter id, such as its host:port)",
			len(req.Server), MaxServerBytes)
	case req.Op == OpRelease && (req.Token <= 0 || req.Token >= maxWire):
		return malformed("token is %d; a release must name the lease instance by the token (1..2^53) of the server's latest grant or renew", req.Token)
	case req.LeaseMs < 0 || req.LeaseMs > n.cfg.MaxLeaseMs:
		return malformed("lease_ms is %d; it must be in 1..%d (the node's maximum lease, LEASE_MAX_MS)",
			req.LeaseMs, n.cfg.MaxLeaseMs)
	case req.LeaseMs != 0 && req.LeaseMs <= n.cfg.DriftMarginMs:
		return malformed("lease_ms is %d; it must be more than the node's drift margin of %d ms (LEASE_DRIFT_MARGIN_MS), "+
			"which every reported time is shortened by, or no client could be told any time", req.LeaseMs, n.cfg.DriftMarginMs)
	}
	return nil
}

// nextEvent is when the request next needs Tick.
func (r *request) nextEvent() time.Duration {
	t := r.deadline
	switch {
	case r.queued, r.waiting, r.Op >= OpMemberAdd:
	case r.att != nil:
		t = min(t, r.att.roundEnd, r.att.d)
	case r.rd != nil:
		t = min(t, r.rd.roundEnd)
	case r.rel != nil:
		t = min(t, r.rel.roundEnd)
	default:
		t = min(t, r.retryAt)
	}
	return t
}

// onTimer handles whatever is due for r at now.
func (n *Node) onTimer(now time.Duration, r *request) {
	if now >= r.deadline {
		n.expire(now, r)
		return
	}
	if r.Op >= OpMemberAdd {
		return // the change run has timers of its own (changerTimer)
	}
	switch r.Op {
	case OpGrant, OpRenew:
		n.attemptTimer(now, r)
	case OpCheck:
		n.readTimer(now, r)
	case OpRelease:
		n.releaseTimer(now, r)
	}
}

// expire answers a request whose quorum timeout has passed.
func (n *Node) expire(now time.Duration, r *request) {
	if r.waiting {
		n.fail(r, n.overloaded(r))
		return
	}
	switch r.Op {
	case OpMemberAdd, OpMemberRemove, OpMemberReplace:
		n.changeExpired(now)
	case OpGrant, OpRenew:
		n.finishAttempts(now, r, n.grantFailure(r))
	case OpCheck:
		n.expireCheck(now, r)
	case OpRelease:
		delete(n.byReq, r.rel.id)
		n.fail(r, timedOut("release sent to the acceptors, but no majority %s; "+
			"the lease instances end at their expiry at the latest", n.quorumText(r)))
	}
}

func (n *Node) noMajority(r *request, what string) *Error {
	return unavailable("no majority %s; %s", n.quorumText(r), what)
}

// quorumText says why a request heard no majority, in words a person can
// act on: who answered, how many were needed, which acceptors are in
// their boot wait (restarted: they serve when it ends) and which were
// silent (down, paused or cut off from this node).
func (n *Node) quorumText(r *request) string {
	now := n.now
	text := fmt.Sprintf("of the %d acceptors answered within %d ms: a round needs %d, the best round heard %d (answers came from %s)",
		len(n.voters()), n.cfg.QuorumTimeoutMs, n.quorum, r.heard, n.namesOf(r.heardFrom))
	var booting, silent []string
	for i, a := range n.voters() {
		if r.heardFrom&(1<<uint(i)) != 0 {
			continue
		}
		if until, ok := n.boot.peers[i]; ok && until > now {
			booting = append(booting, fmt.Sprintf("%s (%d ms left)", a, floorMs(until-now)))
		} else {
			silent = append(silent, a)
		}
	}
	if len(booting) > 0 {
		text += fmt.Sprintf("; in their boot wait after a restart, serving when it ends: %s", strings.Join(booting, ", "))
	}
	if len(silent) > 0 {
		text += fmt.Sprintf("; silent (down, paused or cut off from %s): %s", n.cfg.ID, strings.Join(silent, ", "))
	}
	return text
}

// backoff is the random wait before retry number tries: it doubles with
// every retry, up to BackoffMaxMs, so dueling proposers drift apart.
//
// The range also grows with the round trip this node has observed (the
// smoothed promise-to-propose gap, sticky.go): proposers that collided in
// one round trip must spread their retries over more than a round trip,
// or they collide again.
func (n *Node) backoff(tries int) time.Duration {
	lo := ms(n.cfg.BackoffMinMs)
	span := lo << min(tries, 16)
	if rtt := n.sticky.gap; rtt > 0 && tries > 0 {
		span = max(span, rtt<<min(tries-1, 16))
	}
	hi := min(ms(n.cfg.BackoffMaxMs), lo+span)
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(n.cfg.Rand.Int64N(int64(hi-lo)))
}
