package lease

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Never is the Wake of an Output when nothing is pending.
const Never = time.Duration(math.MaxInt64)

// Output is what one call into a Node produced. It is owned by the Node and
// valid until the next call.
type Output struct {
	// Msgs go to other nodes. Messages a node addresses to itself (its own
	// acceptor) are delivered inside the same call, at the same time.
	Msgs []Msg
	// Replies answer client requests, in the order they were decided.
	Replies []Reply
	// Wake is when Tick must be called next, or Never.
	Wake time.Duration
	// Logs are lines for the operator's log: where a restarted node is in
	// its boot wait and recovery (recovery.go). The core writes nothing
	// itself; the shell prints them.
	Logs []string
	// Adopted is the configuration this call adopted, if any (doc.go
	// "Membership"): a shell that runs several cores of one member hands
	// it to the others (Node.Adopt).
	Adopted *Membership
}

// Node is one node's lease core: a proposer for every chunk it is asked
// about and, if it is in the acceptor set, an acceptor for every chunk. It
// is a pure state machine: time comes in as `now` (a monotonic clock with
// an arbitrary origin), messages and replies go out in Output, and nothing
// inside reads a clock, performs I/O, starts a goroutine or uses global
// randomness. It is not safe for concurrent use; one event loop owns it.
type Node struct {
	cfg    Config
	conf   Membership     // the configuration: the acceptor set (membership.go)
	accIdx map[string]int // member id -> position in conf.Members
	quorum int
	// known is false only for a joining node until it learnt a
	// configuration; activated once a majority of conf.Prev is known to
	// have adopted conf (member.go).
	known, activated bool
	change           changeAcceptor // this acceptor's side of the change instance (member.go)
	changer          *changeRun     // this node's change in flight, if any (member.go)

	ballots   ballotSource
	bootUntil time.Duration

	chunks  chunkTable            // acceptor state, one instance per chunk
	queues  map[string][]*request // grant and renew requests per chunk; the head runs
	byReq   map[uint64]*request   // check and release requests by request id
	pending []*request            // every unanswered request, in arrival order
	// spareQueues are emptied queues kept for reuse (keepQueue).
	spareQueues [][]*request
	// endedAttempts are the attempts of requests finished in the call in
	// progress, spareAttempts those of earlier calls, kept for reuse
	// (retireAttempt).
	endedAttempts, spareAttempts []*attempt
	// spareRequests are answered requests kept for reuse, spareReads the
	// read rounds of answered checks (dropAnswered).
	spareRequests []*request
	spareReads    []*readRound
	// waiting holds requests that found every slot taken, inFlight counts
	// the slots taken (admission.go).
	waiting  []*request
	inFlight int
	// limit is how many slots are open now, cutUntil when it may be
	// halved again (admission.go).
	limit    int
	cutUntil time.Duration
	taken    int // requests taken since the maps above were last resized (reclaim.go)
	reqSeq   uint64
	// floor is the lowest counter this acceptor still promises above for
	// every chunk: after a restart its wall clock at the end of the boot
	// wait, raised by the recovered high-water marks (recovery.go) and by
	// reclaimed instances (reclaim.go).
	floor uint64
	// promisedHigh is the highest promise this acceptor made on any chunk
	// (the ballot counter may not follow it: it catches up only within
	// the lead bound); a recovering peer is told it (recovery.go).
	promisedHigh uint64
	nextSweep    time.Duration // when idle instances are next reclaimed (reclaim.go)
	recovering   bool
	sync         syncRound
	boot         bootState
	master       masterState
	sticky       stickiness

	loop []Msg // messages to this node's own acceptor, not yet delivered
	// selfRecords hold the Records of the acceptor's answers in loop
	// (attachRecord); finish empties it once loop is delivered.
	selfRecords []Record
	// primaryRefs are the names checks' answers point to (primaryRef).
	primaryRefs map[string]*string
	logs        []string // log lines not yet handed out (NewNode's go out with the first call)
	out         Output
	now         time.Duration // the time of the call in progress
}

// NewNode builds a node's core at time now. The acceptor does nothing but
// answer "booting" until now + BootWaitMs (stretched by the drift factor).
func NewNode(cfg Config, now time.Duration) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{
		cfg:       cfg,
		known:     !cfg.Join,
		activated: true,
		ballots:   newBallotSource(cfg, now),
		bootUntil: now + bootWait(cfg),
		chunks:    newChunkTable(),
		queues:    make(map[string][]*request),
		byReq:     make(map[uint64]*request),
		// Request ids start at the incarnation, so that they seldom
		// repeat across restarts; what makes an answer to an earlier
		// incarnation's read (late, on a slow link) never match is the
		// nonce it must echo (answered).
		reqSeq: firstReqID(cfg),
		limit:  min(slowStart, cfg.MaxInFlight),
	}
	n.setConf(Membership{Members: slices.Clone(cfg.Acceptors)})
	n.master.nextAt, n.master.releaseAt = Never, Never
	n.master.promised = restartPromise(n.bootUntil)
	n.startRecovery(now)
	return n, nil
}

// Request starts serving a client request.
func (n *Node) Request(now time.Duration, r Request) *Output {
	n.begin(now)
	n.handleRequest(now, r)
	return n.finish(now)
}

// Receive handles a peer message addressed to this node. A core of a
// member with several drops a chunk's message that another core serves
// (a lost message: the shell routed it wrongly, see Route).
func (n *Node) Receive(now time.Duration, m Msg) *Output {
	n.begin(now)
	if m.Type.nodeLevel() || n.owns(m.Chunk) {
		n.dispatch(now, m)
	}
	return n.finish(now)
}

// Tick lets time pass: deadlines, round timeouts and backoffs that are due
// at or before now fire.
func (n *Node) Tick(now time.Duration) *Output {
	n.begin(now)
	// Timers never add requests, so indexing stays valid; answered
	// requests are only marked done and dropped in finish.
	for i := 0; i < len(n.pending); i++ {
		if r := n.pending[i]; !r.done && r.nextEvent() <= now {
			n.onTimer(now, r)
		}
	}
	n.syncTimer(now)
	n.changerTimer(now)
	n.masterTimer(now)
	n.sweep(now)
	return n.finish(now)
}

// Pending is the number of unanswered client requests.
func (n *Node) Pending() int { return len(n.pending) }

func (n *Node) begin(now time.Duration) {
	n.now = now
	n.out.Msgs = n.out.Msgs[:0]
	n.out.Replies = n.out.Replies[:0]
	n.out.Logs = n.out.Logs[:0]
	n.out.Adopted = nil
}

// finish delivers self-addressed messages, drops answered requests and
// computes the next wake-up.
func (n *Node) finish(now time.Duration) *Output {
	// Delivering may queue more (an acceptor's answer to its own node);
	// indexing sees them, and the buffer is reused by the next call.
	// Requests answered meanwhile free slots for waiting ones, whose
	// first messages to this node's own acceptor are delivered in turn.
	for n.admitWaiting(now) || len(n.loop) > 0 {
		for i := 0; i < len(n.loop); i++ {
			n.dispatch(now, n.loop[i])
		}
		n.loop = n.loop[:0]
	}
	n.reuseSelfRecords()
	n.bootTimer(now)
	n.settleRecovery(now)
	n.chunks.names.endCall()
	n.out.Logs = append(n.out.Logs, n.logs...)
	n.logs = n.logs[:0]
	n.dropAnswered()
	n.afterBurst()
	n.spareEnded()
	n.out.Wake = min(n.syncWake(), n.bootWake(), n.settleWake(now), n.sweepWake(), n.masterWake(), n.changerWake())
	for _, r := range n.pending {
		n.out.Wake = min(n.out.Wake, r.nextEvent())
	}
	return &n.out
}

// send queues m for its destination; a message to this node itself goes to
// the local acceptor within the same call, when this core is where Route
// sends it. One for another core of the member, or for every core (a
// change prepare, its answers from the other cores, which go to the lead),
// goes out to the shell, which hands it to those cores as a peer's. A
// lease request carries the node's epoch (membership).
func (n *Node) send(m Msg) {
	m.From = n.cfg.ID
	if m.Type.leaseRequest() {
		m.Epoch = n.conf.Epoch
	}
	if m.To == n.cfg.ID && n.handledHere(&m) {
		n.loop = append(n.loop, m)
		return
	}
	n.out.Msgs = append(n.out.Msgs, m)
}

// handledHere reports whether a message to this node itself is for this
// core (Route), which then handles it within the same call. A message a
// core sends about a chunk is about one it serves (its requests and its
// acceptor's messages reach it by CoreOf), so Route would pick this core
// again: only the node-level messages, which go to every core, and the
// chunkless ones of a core other than the lead leave it, and the chunk's
// hash is not computed again for each message
// (TestSelfMessagesStayOnTheirCore).
func (n *Node) handledHere(m *Msg) bool {
	return n.cfg.Cores <= 1 || !m.Type.nodeLevel() && (m.Chunk != "" || n.cfg.Core == 0)
}

// broadcast sends m to every acceptor.
func (n *Node) broadcast(m Msg) {
	for _, a := range n.voters() {
		m.To = a
		n.send(m)
	}
}

func (n *Node) reply(r *request, typ string, body any) {
	r.done = true
	n.freeSlot(r)
	if r.internal {
		n.masterResult(n.now, r, body, nil)
		return
	}
	n.out.Replies = append(n.out.Replies, Reply{ID: r.ID, Type: typ, Body: body})
}

func (n *Node) fail(r *request, err *Error) {
	r.done = true
	n.freeSlot(r)
	if r.internal {
		n.masterResult(n.now, r, nil, err)
		return
	}
	n.out.Replies = append(n.out.Replies, Reply{ID: r.ID, Err: err})
}

// dispatch routes a peer message to the acceptor or to the request
// waiting for it. Answers from nodes outside the acceptor set are ignored:
// they cannot count towards a quorum. An answer that carries a newer
// configuration is a refusal of a lower epoch: the node adopts it and its
// rounds start again. An answer from an acceptor behind this node's
// epoch did nothing: the round asks it again, with the configuration
// (askAgain).
func (n *Node) dispatch(now time.Duration, m Msg) {
	if m.Type.isRequest() {
		n.accept(now, m)
		return
	}
	if m.Conf != nil && m.Type != MsgSyncResp && (!n.known || m.Conf.Epoch > n.conf.Epoch) {
		n.adopt(now, *m.Conf)
		return
	}
	switch m.Type {
	case MsgSyncResp:
		n.onSyncResp(now, m)
		return
	case MsgConfigResp, MsgChangePrepareResp, MsgChangeProposeResp:
		n.onChangeResp(now, m)
		return
	}
	idx, ok := n.accIdx[m.From]
	if !ok {
		return
	}
	if m.Type != MsgBooting && m.Epoch != n.conf.Epoch {
		if m.Epoch < n.conf.Epoch {
			n.askAgain(m)
		}
		return
	}
	switch m.Type {
	case MsgPrepareResp:
		n.onPrepareResp(now, m, idx)
	case MsgProposeResp:
		n.onProposeResp(now, m, idx)
	case MsgReadResp:
		n.onReadResp(now, m, idx)
	case MsgReleaseResp:
		n.onReleaseResp(m, idx)
	case MsgBooting:
		n.onBooting(now, m, idx)
	}
}

// intern returns the id of server name s, so that acceptor records keep a
// small number instead of a string. The id is s's until the call into the
// Node returns; a record that stores it takes its own reference
// (names.go), and s is forgotten once no record names it.
func (n *Node) intern(s string) uint32 { return n.chunks.names.hold(s) }

// serverName is the server an acceptor record names.
func (n *Node) serverName(id uint32) string { return n.chunks.names.name(id) }

// logf adds a line about the member to the operator's log. In a member
// of several cores the lead speaks for all (the others hear the same
// sync answers and reach the same floors); coreLogf is for what differs.
func (n *Node) logf(format string, args ...any) {
	if n.lead() {
		n.logs = append(n.logs, fmt.Sprintf(format, args...))
	}
}

// coreLogf adds a line about this core alone, from whichever core, naming
// it when the member runs several.
func (n *Node) coreLogf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if n.cfg.Cores > 1 {
		line = fmt.Sprintf("core %d of %d: %s", n.cfg.Core, n.cfg.Cores, line)
	}
	n.logs = append(n.logs, line)
}

// bootWait is how long, on the node's own clock, a restarted acceptor
// stays silent: BootWaitMs stretched by the drift factor, so that it lasts
// at least BootWaitMs of real time whatever this clock's rate within rho.
func bootWait(cfg Config) time.Duration {
	if cfg.weaken == weakBootNoStretch {
		return ms(cfg.BootWaitMs)
	}
	return stretch(ms(cfg.BootWaitMs), cfg.DriftPPM)
}

// firstReqID is where request ids start: at the incarnation.
func firstReqID(cfg Config) uint64 {
	if cfg.weaken == weakReqIDsFromZero {
		return 0
	}
	return uint64(cfg.Incarnation)
}

// answered is the request an answer to a read or release belongs to, or
// nil: it must name a round in flight and echo this incarnation's nonce.
func (n *Node) answered(m Msg) *request {
	if !n.ownNonce(m) {
		return nil
	}
	return n.byReq[m.ReqID]
}

// ownNonce reports whether an answer echoes this incarnation's nonce.
// The req-ids-from-zero weakening also ignores the nonce, as before it
// existed: request ids then repeat across every restart.
func (n *Node) ownNonce(m Msg) bool {
	return m.Nonce == n.cfg.Nonce || n.cfg.weaken == weakReqIDsFromZero
}

// nextReqID issues an id for a read, release or sync round.
func (n *Node) nextReqID() uint64 {
	n.reqSeq++
	return n.reqSeq
}
