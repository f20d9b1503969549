package lease_test

import (
	"bytes"
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"chunklease/history"
	"chunklease/lease"
	"chunklease/workloads"
	leasewl "chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// The simulated world: one virtual real-time clock, a heap of timed
// events, nodes whose local clocks run at their own rate (and whose wall
// clocks are off by their own skew), a network that loses, duplicates,
// delays and partitions messages, processes that crash, restart and pause,
// and client workers driven by the lease workload generator, each bound
// to one node as in Maelstrom or behind a load balancer
// (simsites_test.go), each with its own clock rate (simclient_test.go).
// Everything random comes from the scenario's seed, so a schedule replays
// exactly.

// The node's timeouts. clientTimeout is above quorumTimeoutMs, as with
// Maelstrom's 5 s clients; requests that reach a node after their client
// gave up come from pauses and duplicated requests, not from the timeouts.
const (
	clientTimeout   = 3 * time.Second
	quorumTimeoutMs = 1000
	roundTimeoutMs  = 200
	// wallEpochMs is the wall clock at the start of every schedule.
	wallEpochMs = 1_763_856_000_000
)

type eventKind uint8

const (
	evDeliver eventKind = iota
	evRequest
	evWake
	evTimeout
	evPoll
	evNemesis
	evCrash
	evRestart
	evOutage
	evRestore
	evPause
	evResume
	evMember // the member nemesis (simmember_test.go)
	evJoin   // a late node's first start
	evSpread // a configuration one core adopted reaches its member's other cores (simcores_test.go)
)

type event struct {
	at   time.Duration
	seq  uint64
	kind eventKind
	node int
	msg  lease.Msg
	call uint64            // evTimeout, evRequest: the client call
	conf *lease.Membership // evSpread: the configuration
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// simNode is one node process. Its local clock reads
// base + elapsed*(1 + ppm/1e6) where elapsed is real time since start;
// its wall clock is the world's plus wallSkew.
type simNode struct {
	id       string
	core     *simMember // nil while crashed
	base     time.Duration
	start    time.Duration
	ppm      int64
	wallSkew time.Duration
	wakeAt   time.Duration // real time of the pending wake event, or -1
	started  bool          // the node ran at some point: a later start is a restart
	paused   bool
	backlog  []event // deliveries and requests that arrived while paused
}

func (n *simNode) local(real time.Duration) time.Duration {
	e := int64(real - n.start)
	return n.base + time.Duration(e+e*n.ppm/1_000_000)
}

// realFor is the first real time at which the local clock reads >= l.
func (n *simNode) realFor(l time.Duration) time.Duration {
	d := int64(l - n.base)
	r := (d*1_000_000 + 1_000_000 + n.ppm - 1) / (1_000_000 + n.ppm)
	return n.start + time.Duration(max(r, 0))
}

type world struct {
	sc      scenario
	nonces  uint64 // incarnations started: each gets its own nonce
	rng     *rand.Rand
	coreRng *rand.Rand // how many cores each start of a member runs (simcores_test.go)
	// spreading: a member's cores are taking a configuration one of them
	// adopted (spread): what they adopt then spreads no further.
	spreading bool
	now       time.Duration
	events    eventHeap
	seq       uint64
	ids       []string
	nodes     []*simNode
	blocked   [][]bool // blocked[receiver][sender]
	nemesis   bool     // a partition is in force
	held      []event  // messages a holding partition keeps until heal
	slow      int      // the node whose outgoing messages are slow, or -1
	linkDown  bool     // the main site is out, and the link between the sites with it
	remote    []bool   // remote[i]: node i sits at the remote site (simsites_test.go)

	wl      workloads.Workload
	hist    *history.Writer
	buf     bytes.Buffer
	clients clients
	pollAt  time.Duration

	// What the schedule did, for the properties (simprops_test.go).
	restarts int
	// offMin and offMax bound every node's wall-clock estimate minus true
	// time over the run (skew plus drift since its start).
	offMin, offMax time.Duration
	unrecovered    bool            // a restarted acceptor served before it recovered
	proposed       map[uint64]bool // client requests a propose went out for
	definite       []string        // error 11 answers to requests that proposed
	spares         []string        // requests or attempts kept for reuse while still in use (SpareReachable)
	mw             memberWorld     // membership (simmember_test.go)
	accepts        []acceptance    // first propose_ok of each instance (simaccept_test.go)
	acceptSeen     map[acceptance]bool
}

func newWorld(sc scenario) *world {
	w := &world{sc: sc, rng: rand.New(rand.NewPCG(sc.seed, 0xface)), coreRng: rand.New(rand.NewPCG(sc.seed, 0xc07e)),
		pollAt: -1, slow: -1, proposed: map[uint64]bool{}}
	w.hist = history.NewWriter(&w.buf)
	w.remote = remoteSite(sc)
	for i := range sc.nodes {
		w.ids = append(w.ids, "n"+strconv.Itoa(i+1))
	}
	w.blocked = make([][]bool, sc.nodes)
	ahead := w.rng.IntN(sc.nodes)
	for i := range sc.nodes {
		w.blocked[i] = make([]bool, sc.nodes)
		skew := time.Duration(0)
		if sc.wallSkew > 0 {
			skew = time.Duration(w.rng.Int64N(int64(2*sc.wallSkew)+1)) - sc.wallSkew
		}
		switch {
		case i == ahead && sc.aheadSkew != 0:
			skew = sc.aheadSkew
		case sc.behindAll:
			skew = -sc.wallSkew
		}
		w.nodes = append(w.nodes, &simNode{id: w.ids[i], wakeAt: -1, wallSkew: skew})
	}
	w.offMin, w.offMax = time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	if sc.master {
		w.wl = master.NewMaster(master.MasterOptions{Rate: sc.rate}, int64(sc.seed))
	} else {
		w.wl = leasewl.NewLease(leasewl.LeaseOptions{Servers: sc.servers, Chunks: sc.chunks,
			LeaseMs: sc.leaseMs, MinLeaseMs: sc.minLeaseMs, Rate: sc.rate, Workers: sc.workers}, int64(sc.seed))
	}
	w.clients = newClients(w)
	w.startMembership()
	for i := range sc.nodes {
		if !w.startsLate(i) {
			w.boot(i, 0)
		}
	}
	return w
}

// boot (re)starts node i with fresh state, a fresh clock origin and rate,
// and a higher incarnation. A restart waits the boot wait (M) and
// recovers its ballot floor; the first start of the cluster has nothing
// to forget and skips both.
func (w *world) boot(i int, bootWaitMs int64) {
	n := w.nodes[i]
	n.start, n.base = w.now, time.Duration(w.rng.Int64N(int64(time.Hour)))
	n.ppm = w.drawRate()
	n.paused, n.backlog = false, nil
	inc := int64(w.now/time.Microsecond) + 1
	w.nonces++
	cfg := lease.Config{ID: n.id, Acceptors: w.acceptorIDs(i), Nodes: w.ids, Incarnation: inc, Nonce: w.nonces,
		WallMs: w.wallMs(n), DefaultLeaseMs: w.sc.leaseMs, MaxLeaseMs: w.sc.leaseMs, BootWaitMs: bootWaitMs,
		DriftPPM: w.sc.driftPPM, DriftMarginMs: w.sc.marginMs, QuorumTimeoutMs: quorumTimeoutMs, RoundTimeoutMs: roundTimeoutMs,
		BackoffMinMs: 2, BackoffMaxMs: 50, MaxInFlight: w.sc.maxInFlight}
	if w.sc.ballotUnit > 0 {
		cfg = lease.WithBallotUnit(cfg, w.sc.ballotUnit)
	}
	cfg = w.joinConfig(i, cfg)
	if w.sc.weakening != "none" {
		var err error
		if cfg, err = lease.WithWeakening(cfg, w.sc.weakening); err != nil {
			panic(err)
		}
	}
	cores, err := lease.NewCores(cfg, w.drawCores(), n.local(w.now), w.coreRand(i, inc))
	if err != nil {
		panic(err)
	}
	core := newSimMember(cores)
	n.core, n.wakeAt, n.started = core, -1, true
	w.noteOffset(n)
	w.absorb(i, core.Tick(n.local(w.now)))
}

// noteOffset widens the range of wall-clock estimate offsets by node n's
// at this instant: its skew, plus its clock's drift since it started
// (the core counts its wall clock on from the reading at start).
func (w *world) noteOffset(n *simNode) {
	if !w.sc.wallClock || n.core == nil {
		return
	}
	e := int64(w.now - n.start)
	off := n.wallSkew + time.Duration(e*n.ppm/1_000_000)
	w.offMin, w.offMax = min(w.offMin, off), max(w.offMax, off)
}

// endOfLife records what a node's incarnation did before it stops (a
// crash or the end of the schedule).
func (w *world) endOfLife(n *simNode) {
	if n.core == nil {
		return
	}
	w.noteOffset(n)
	w.unrecovered = w.unrecovered || n.core.ServedUnrecovered()
}

// wallMs is node n's wall clock in milliseconds, or 0 in schedules
// without wall clocks (the counter floor is then off).
func (w *world) wallMs(n *simNode) int64 {
	if !w.sc.wallClock {
		return 0
	}
	return wallEpochMs + int64((w.now+n.wallSkew)/time.Millisecond)
}

// drawRate draws a clock's rate error in ppm, within the configured bound.
func (w *world) drawRate() int64 {
	rho := w.sc.driftPPM
	switch {
	case rho == 0:
		return 0
	case w.sc.clockFast:
		return rho
	case w.sc.clockEdge:
		return []int64{-rho, rho}[w.rng.IntN(2)]
	}
	return w.rng.Int64N(2*rho+1) - rho
}

// acceptorIDs is node i's acceptor set: its own id in the unsafe self
// mode, else the configured set, the same on every node.
func (w *world) acceptorIDs(i int) []string {
	switch {
	case w.sc.self:
		return []string{w.ids[i]}
	case w.sc.acceptors == nil:
		return w.ids
	}
	return w.names(w.sc.acceptors)
}

// names maps node indices to node ids.
func (w *world) names(nodes []int) []string {
	ids := make([]string, len(nodes))
	for k, i := range nodes {
		ids[k] = w.ids[i]
	}
	return ids
}

func (w *world) push(e event) {
	w.seq++
	e.seq = w.seq
	heap.Push(&w.events, e)
}

// run plays the schedule to the end and returns the history as JSONL.
func (w *world) run() []byte {
	w.push(event{at: 0, kind: evPoll})
	for _, f := range []struct {
		kind eventKind
		mean time.Duration
	}{{evNemesis, w.sc.partition}, {evCrash, w.sc.crash}, {evOutage, w.sc.outage}, {evPause, w.sc.pause}} {
		if f.mean > 0 {
			w.push(event{at: w.expDelay(f.mean), kind: f.kind})
		}
	}
	for w.events.Len() > 0 {
		e := heap.Pop(&w.events).(event)
		if e.at > w.sc.duration && w.clients.idle() {
			break
		}
		w.now = e.at
		w.handle(e)
	}
	for _, n := range w.nodes {
		w.endOfLife(n)
	}
	return w.buf.Bytes()
}

func (w *world) expDelay(mean time.Duration) time.Duration {
	return w.now + time.Duration(w.rng.ExpFloat64()*float64(mean)) + time.Millisecond
}

func (w *world) handle(e event) {
	switch e.kind {
	case evDeliver, evRequest:
		w.arrive(e)
	case evWake:
		w.wake(e)
	case evTimeout:
		w.clients.timeout(e.call)
	case evPoll:
		if w.pollAt == e.at {
			w.pollAt = -1
		}
		w.clients.poll()
	case evNemesis:
		w.flipPartition()
	case evCrash:
		w.crashSome()
	case evRestart:
		w.restart(e.node)
	case evOutage:
		w.siteOutage()
	case evRestore:
		w.restoreLink()
	case evPause:
		w.pauseOne()
	case evResume:
		w.resume(e.node)
	case evMember:
		w.memberChange(e)
	case evJoin:
		w.joinLate(e.node)
	case evSpread:
		w.spread(e)
	}
}

func (w *world) wake(e event) {
	n := w.nodes[e.node]
	if n.core != nil && !n.paused && n.wakeAt == e.at {
		n.wakeAt = -1
		w.absorb(e.node, n.core.Tick(n.local(w.now)))
	}
}

// absorb sends a node's messages, answers its clients and books its wake.
func (w *world) absorb(i int, out *lease.Output) {
	for _, m := range out.Msgs {
		if m.Type == lease.MsgPropose && m.Request != 0 {
			w.proposed[m.Request] = true
		}
		w.observe(i, m)
		w.send(m)
	}
	w.noteAdopted(i, out.Adopted)
	w.spreadLater(i, out.Adopted)
	for _, r := range out.Replies {
		if w.memberReply(r) {
			continue
		}
		if r.Err != nil && r.Err.Code == lease.CodeTemporarilyUnavailable && w.proposed[r.ID] {
			w.definite = append(w.definite, fmt.Sprintf("%s answered request %d (%v) with error 11 at %v after a propose went out for it: %s",
				w.ids[i], r.ID, w.clients.opOf(r.ID), w.now, r.Err.Text))
		}
		w.clients.reply(r)
	}
	n := w.nodes[i]
	if n.core != nil {
		for _, core := range n.core.cores {
			if s := core.SpareReachable(); s != "" && len(w.spares) < 10 {
				w.spares = append(w.spares, fmt.Sprintf("%s at %v: %s", w.ids[i], w.now, s))
			}
		}
	}
	if out.Wake != lease.Never {
		at := max(n.realFor(out.Wake), w.now)
		if n.wakeAt < 0 || at < n.wakeAt {
			n.wakeAt = at
			w.push(event{at: at, kind: evWake, node: i})
		}
	}
}

// send puts a message on the network: lost, delayed (sometimes far past a
// lease length), and sometimes delivered twice.
func (w *world) send(m lease.Msg) {
	copies := 1
	if w.rng.Float64() < w.sc.dupP {
		copies = 2
	}
	for range copies {
		if w.rng.Float64() < w.sc.lossP {
			continue
		}
		d := w.sc.latency.draw(w.rng) + w.uplinkDelay(w.index(m.From))
		if w.rng.Float64() < w.sc.spikeP || w.slow == w.index(m.From) {
			d += time.Duration(w.rng.Int64N(int64(w.sc.spikeMax)))
		}
		w.push(event{at: w.now + d, kind: evDeliver, node: w.index(m.To), msg: m})
	}
}

func (w *world) index(id string) int {
	i, _ := strconv.Atoi(id[1:])
	return i - 1
}

// arrive hands a message or a client request to its node, unless the node
// is down, paused (it queues, as a stopped process's socket does) or the
// partition in force drops it (checked at delivery). A holding partition
// keeps the message and delivers it after the heal, as a TCP connection
// that reconnects would: the stale messages the safety rules exist for.
// The link between the sites always holds while it is down.
func (w *world) arrive(e event) {
	n := w.nodes[e.node]
	if e.kind == evDeliver {
		from := w.index(e.msg.From)
		if cut := w.siteCut(from, e.node); cut || w.blocked[e.node][from] {
			if cut || w.sc.hold {
				w.held = append(w.held, e)
			}
			return
		}
	}
	switch {
	case n.core == nil:
	case n.paused:
		n.backlog = append(n.backlog, e)
	case e.kind == evRequest:
		w.clients.serve(e)
	default:
		w.absorb(e.node, n.core.Receive(n.local(w.now), e.msg))
	}
}

func (w *world) record(op history.Op) {
	op.Time = int64(w.now)
	if _, err := w.hist.Append(op); err != nil {
		panic(err)
	}
}
