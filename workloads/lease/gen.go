package lease

import (
	"slices"
	"time"

	"chunklease/history"
	"chunklease/workloads"
)

// The mix of scheduled ops (see doc.go).
const (
	grantShare   = 0.5 // of scheduled ops: grants
	checkShare   = 0.4 // of scheduled ops: checks; the rest releases of leases not held
	contendShare = 0.5 // of grants: aimed at a chunk another server is believed to hold
	pickTries    = 8   // random draws before a busy pick falls back to a check
	// reacquireShare of plan-ending releases are followed at once by a
	// grant for the same server and chunk, as a chunk server that hands its
	// lease back and takes it again (a restart) does. A release that
	// arrives late must then not erase the new lease.
	reacquireShare = 0.25
	// regrantShare of planned renewals go out as a grant by the holder (a
	// re-grant) instead of a renew: the contract gives both the same
	// effect, and a re-grant with a shorter lease_ms must not shrink the
	// protection either.
	regrantShare = 0.25
	// strayTokenMax bounds the random tokens of releases that must change
	// nothing: [1, 2^40), far above what a test run hands out, far below 2^53.
	strayTokenMax = 1 << 40
)

// pairTable is what the generator knows about each (server, chunk) pair,
// learnt only from its own ok replies, one word per pair: the table is
// servers times chunks long (1.6 million pairs at 16 x 100 000), so it
// holds only what every pair needs, and a holding's plan lives with the
// holding (holding). A word is the pair's last token (below 2^53, as
// every valid token) and three flags.
//
// lastToken is the token of the last ok grant to this server or ok renew
// that carried one (0 before any): the plan-ending release sends it, and
// later it serves as a stale token for releases that must change nothing.
type pairTable []uint64

const (
	tokenBits     = 1<<53 - 1
	pairInFlight  = 1 << 60 // a grant, renew or release of this pair is outstanding
	pairHeld      = 1 << 61 // the server believes it holds the chunk (a holding in Lease.holders)
	pairReacquire = 1 << 62 // grant again as soon as the plan-ending release completes
)

func (t pairTable) is(p int, flag uint64) bool { return t[p]&flag != 0 }

func (t pairTable) set(p int, flag uint64, on bool) {
	if on {
		t[p] |= flag
	} else {
		t[p] &^= flag
	}
}

func (t pairTable) lastToken(p int) int64 { return int64(t[p] & tokenBits) }

func (t pairTable) setLastToken(p int, token int64) { t[p] = t[p]&^tokenBits | uint64(token)&tokenBits }

// holding is a pair whose server believes it holds the chunk, and the
// plan for that belief.
type holding struct {
	pair         int
	endAt        time.Duration // invoke time + expires_in_ms of the last ok grant or renew
	renewAt      time.Duration // half-life: reply time + (endAt - reply time)/2
	renewalsLeft int           // renewals still planned for this holding
	release      bool          // the plan's end: release (true) or abandon (false)
	stopped      bool          // no more renewals: abandoned, or a renew failed
}

// plan is a fresh holding's plan (acquire).
type plan struct {
	renewalsLeft int
	release      bool
}

// workerCall is the op a worker has in flight.
type workerCall struct {
	active   bool
	call     leaseCall
	value    []byte // the invoke value handed out, to recognise the op in Request and Complete
	invokeAt time.Duration
}

// Next returns the op for a free worker: first a due renewal or
// plan-ending release (not limited by the rate), else a scheduled op when
// the stagger has one due.
func (l *Lease) Next(now time.Duration, worker int) (workloads.Invocation, bool) {
	if worker < 0 {
		return workloads.Invocation{}, false
	}
	l.expire(now)
	if p, ok := l.dueHolding(now); ok {
		return l.emit(now, worker, l.holdingCall(p)), true
	}
	for len(l.regrants) > 0 {
		p := l.regrants[0]
		l.regrants = l.regrants[1:]
		if !l.pairs.is(p, pairInFlight) { // else a scheduled op got there first
			return l.emit(now, worker, l.call(FGrant, p)), true
		}
	}
	if !l.stagger.Due(now) {
		return workloads.Invocation{}, false
	}
	l.stagger.Fire(now, l.rng)
	return l.emit(now, worker, l.scheduledCall()), true
}

// Wake is the earliest time at which Next has something: the stagger's
// next slot or the earliest half-life of a holding that will renew or
// release. It may be in the past when every worker was busy.
func (l *Lease) Wake() time.Duration {
	w := l.stagger.NextAt()
	if len(l.regrants) > 0 {
		return 0
	}
	for _, h := range l.holders {
		if !l.pairs.is(h.pair, pairInFlight) && !h.stopped && h.renewAt < w {
			w = h.renewAt
		}
	}
	return w
}

// expire drops the beliefs whose lease end has passed.
func (l *Lease) expire(now time.Duration) {
	l.holders = slices.DeleteFunc(l.holders, func(h *holding) bool {
		if h.endAt <= now {
			l.pairs.set(h.pair, pairHeld, false)
			delete(l.holdingAt, h.pair)
			return true
		}
		return false
	})
}

// dueHolding returns the holding with the earliest due half-life that has
// no op in flight and still renews or releases.
func (l *Lease) dueHolding(now time.Duration) (int, bool) {
	var best *holding
	for _, h := range l.holders {
		if l.pairs.is(h.pair, pairInFlight) || h.stopped || h.renewAt > now {
			continue
		}
		if best == nil || h.renewAt < best.renewAt {
			best = h
		}
	}
	if best == nil {
		return 0, false
	}
	return best.pair, true
}

// holdingCall is a renewal (a renew, or a re-grant by the holder), or the
// release that ends the holding's plan, naming the last token the server
// got. The server stops believing it holds the chunk the moment it
// releases.
func (l *Lease) holdingCall(p int) leaseCall {
	if l.holdingOf(p).renewalsLeft > 0 {
		if l.rng.Float64() < regrantShare {
			c := l.call(FGrant, p)
			c.renewal = true
			return c
		}
		return l.call(FRenew, p)
	}
	l.drop(p)
	l.pairs.set(p, pairReacquire, l.rng.Float64() < reacquireShare)
	c := l.call(FRelease, p)
	c.token = l.pairs.lastToken(p)
	return c
}

// scheduledCall draws one stagger op: a grant, a check or a release of a
// lease the server does not hold.
func (l *Lease) scheduledCall() leaseCall {
	r := l.rng.Float64()
	switch {
	case r < grantShare:
		if p, ok := l.pickGrantPair(); ok {
			return l.call(FGrant, p)
		}
	case r >= grantShare+checkShare:
		if p, ok := l.pickFreePair(pairHeld); ok {
			c := l.call(FRelease, p)
			c.token = l.strayToken(p)
			return c
		}
	}
	return leaseCall{f: FCheck, chunk: l.chunkNames[l.rng.IntN(l.opts.Chunks)]}
}

// strayToken draws the token of a release of a pair the server does not
// hold, which must change nothing: in random choice the pair's own stale
// token, a token another server got for the same chunk (right token, wrong
// server), or a random one in [1, strayTokenMax). A choice that has no
// token to offer falls back to a random one.
func (l *Lease) strayToken(p int) int64 {
	switch l.rng.IntN(3) {
	case 0:
		if t := l.pairs.lastToken(p); t != 0 {
			return t
		}
	case 1:
		if t, ok := l.otherServerToken(p); ok {
			return t
		}
	}
	return 1 + l.rng.Int64N(strayTokenMax-1)
}

// otherServerToken picks at random the last token of another server's pair
// on the same chunk, among those that got one.
func (l *Lease) otherServerToken(p int) (int64, bool) {
	server, chunk := p/l.opts.Chunks, p%l.opts.Chunks
	n := 0
	for s := range l.opts.Servers {
		if s != server && l.pairs.lastToken(s*l.opts.Chunks+chunk) != 0 {
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	k := l.rng.IntN(n)
	for s := range l.opts.Servers {
		if t := l.pairs.lastToken(s*l.opts.Chunks + chunk); s != server && t != 0 {
			if k == 0 {
				return t, true
			}
			k--
		}
	}
	panic("unreachable: k < n")
}

// pickGrantPair picks a pair with nothing in flight whose server does not
// hold the chunk, half the time a chunk another server is believed to hold
// (contention).
func (l *Lease) pickGrantPair() (int, bool) {
	if len(l.holders) > 0 && l.opts.Servers > 1 && l.rng.Float64() < contendShare {
		h := l.holders[l.rng.IntN(len(l.holders))].pair
		holder, chunk := h/l.opts.Chunks, h%l.opts.Chunks
		server := (holder + 1 + l.rng.IntN(l.opts.Servers-1)) % l.opts.Servers
		if p := server*l.opts.Chunks + chunk; !l.pairs.is(p, pairInFlight) {
			return p, true
		}
	}
	// A server asks to be granted only a chunk it does not believe it holds;
	// one it holds it renews at half-life. (Granting a held pair again
	// would move the half-life forward and starve renewals at high rates.)
	return l.pickFreePair(pairHeld)
}

// pickFreePair draws random pairs with nothing in flight and without
// flag (pairHeld: a pair whose server does not hold the chunk).
func (l *Lease) pickFreePair(without uint64) (int, bool) {
	for range pickTries {
		p := l.rng.IntN(len(l.pairs))
		if !l.pairs.is(p, pairInFlight|without) {
			return p, true
		}
	}
	return 0, false
}

// call is an op of pair p; a grant or renew asks for a lease_ms drawn
// uniformly from [MinLeaseMs, LeaseMs].
func (l *Lease) call(f string, p int) leaseCall {
	c := leaseCall{f: f, chunk: l.chunkNames[p%l.opts.Chunks], server: l.serverNames[p/l.opts.Chunks]}
	if f == FGrant || f == FRenew {
		c.leaseMs = l.opts.MinLeaseMs + l.rng.Int64N(l.opts.LeaseMs-l.opts.MinLeaseMs+1)
	}
	return c
}

// emit records the call as in flight on worker and renders it.
func (l *Lease) emit(now time.Duration, worker int, c leaseCall) workloads.Invocation {
	for worker >= len(l.inflight) {
		l.inflight = append(l.inflight, workerCall{})
	}
	inv := c.invocation()
	l.inflight[worker] = workerCall{active: true, call: c, value: inv.Value, invokeAt: now}
	l.lastWorker = worker
	if p, ok := l.pairOf(c); ok {
		l.pairs.set(p, pairInFlight, true)
		if c.f == FGrant || c.f == FRenew {
			l.granted[p%l.opts.Chunks/64] |= 1 << (p % l.opts.Chunks % 64)
		}
	}
	return inv
}

// pairOf maps a call's names to its pair; check has none.
func (l *Lease) pairOf(c leaseCall) (int, bool) {
	s, okS := l.serverIndex[c.server]
	ch, okC := l.chunkIndex[c.chunk]
	if c.f == FCheck || !okS || !okC {
		return 0, false
	}
	return s*l.opts.Chunks + ch, true
}

// forget clears worker's in-flight op without learning from it.
func (l *Lease) forget(worker int) (workerCall, bool) {
	if worker < 0 || worker >= len(l.inflight) || !l.inflight[worker].active {
		return workerCall{}, false
	}
	w := l.inflight[worker]
	l.inflight[worker] = workerCall{}
	if p, ok := l.pairOf(w.call); ok {
		l.pairs.set(p, pairInFlight, false)
	}
	return w, true
}

// learn updates beliefs from the completion of the op w. Only ok grants
// to the requesting server and ok renews create beliefs (and teach the
// pair its token); an info grant never does; an ok re-grant by the holder
// counts as a renewal; a failed or unknown renewal (renew or re-grant)
// stops renewing (the belief lasts until its known end).
func (l *Lease) learn(now time.Duration, w workerCall, out leaseOutcome) {
	c := w.call
	p, ok := l.pairOf(c)
	if !ok {
		return
	}
	renewal := c.f == FRenew || c.renewal
	switch {
	case c.f == FGrant && out.c.Type == history.OK && out.primary == c.server && !c.renewal:
		l.gotToken(p, out.token)
		l.acquire(now, p, w.invokeAt+msToDuration(out.expiresInMs))
	case c.f == FGrant && out.c.Type == history.OK && out.primary != c.server:
		l.drop(p) // another server is primary
	case renewal && out.c.Type == history.OK:
		l.gotToken(p, out.token)
		l.renewed(now, p, w.invokeAt+msToDuration(out.expiresInMs))
	case renewal && l.pairs.is(p, pairHeld):
		l.holdingOf(p).stopped = true
	case c.f == FRelease && l.pairs.is(p, pairReacquire):
		l.pairs.set(p, pairReacquire, false)
		l.regrants = append(l.regrants, p)
	}
}

// gotToken remembers the token of an ok grant or renew; a reply without
// one (a token-missing violation) leaves the last token in place.
func (l *Lease) gotToken(p int, token int64) {
	if token != 0 {
		l.pairs.setLastToken(p, token)
	}
}

// acquire starts a holding with a fresh random plan.
func (l *Lease) acquire(now time.Duration, p int, endAt time.Duration) {
	pl := plan{renewalsLeft: l.rng.IntN(l.opts.MaxRenewals + 1), release: l.rng.IntN(2) == 0}
	l.extend(now, p, endAt, &pl)
}

// renewed extends a holding after an ok renew. A renew that succeeded
// after the belief lapsed starts a new holding.
func (l *Lease) renewed(now time.Duration, p int, endAt time.Duration) {
	if !l.pairs.is(p, pairHeld) {
		l.acquire(now, p, endAt)
		return
	}
	h := l.holdingOf(p)
	h.renewalsLeft = max(h.renewalsLeft-1, 0)
	h.stopped = h.renewalsLeft == 0 && !h.release
	l.extend(now, p, endAt, nil)
}

// extend adds a lease end the server was told about, with a fresh plan
// when pl is not nil. The belief lasts until the latest end of every
// lease told (a shorter renewal does not shorten it: clients believe
// every lease they were told about), while the next half-life comes from
// this reply's own end.
func (l *Lease) extend(now time.Duration, p int, endAt time.Duration, pl *plan) {
	var ended holding // a belief that ended before anyone asked: its plan carries on
	if h := l.holdingOf(p); h != nil && h.endAt <= now {
		ended = *h
		l.drop(p) // (expire runs in Next)
	}
	h := l.holdingOf(p)
	switch {
	case h != nil:
		h.endAt = max(h.endAt, endAt)
	case endAt <= now:
		return // the lease ended before the reply came
	default:
		l.pairs.set(p, pairHeld, true)
		ended.pair, ended.endAt = p, endAt
		h = &ended
		l.holders = append(l.holders, h)
		l.holdingAt[p] = h
	}
	if pl != nil {
		h.renewalsLeft, h.release = pl.renewalsLeft, pl.release
		h.stopped = h.renewalsLeft == 0 && !h.release
	}
	h.renewAt = now + max(endAt-now, 0)/2
}

// holdingOf is pair p's holding, nil when its server holds nothing.
func (l *Lease) holdingOf(p int) *holding { return l.holdingAt[p] }

// drop ends the server's belief that it holds the chunk.
func (l *Lease) drop(p int) {
	if !l.pairs.is(p, pairHeld) {
		return
	}
	l.pairs.set(p, pairHeld, false)
	if i := slices.Index(l.holders, l.holdingAt[p]); i >= 0 {
		l.holders = slices.Delete(l.holders, i, i+1)
	}
	delete(l.holdingAt, p)
}

func msToDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
