package lease_test

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"chunklease/lease"
	"chunklease/workloads"
)

// The simulated world: one virtual real-time clock, a heap of timed
// events, nodes whose local clocks run at their own rate, a network that
// loses, duplicates, delays and partitions messages, and client workers
// driven by the lease workload generator, each bound to one node as in
// Maelstrom or behind a load balancer (simsites_test.go). Everything
// random comes from the scenario's seed, so a schedule replays exactly.

// clientTimeout must stay above quorumTimeoutMs: a node answers every
// request within its quorum timeout, so when a client gives up, its request
// has stopped acting. A release still reading after its client timed out
// could find, and release by its exact ballot, the lease the same server
// was granted after that timeout: rule 6 cannot tell the two apart.
const (
	clientTimeout   = 3 * time.Second
	quorumTimeoutMs = 1000
	roundTimeoutMs  = 200
)

type eventKind uint8

const (
	evDeliver eventKind = iota
	evWake
	evTimeout
	evPoll
	evNemesis
	evCrash
	evRestart
	evOutage
	evRestore
)

type event struct {
	at   time.Duration
	seq  uint64
	kind eventKind
	node int
	msg  lease.Msg
	call uint64
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
// base + elapsed*(1 + ppm/1e6) where elapsed is real time since start.
type simNode struct {
	id     string
	core   *lease.Node // nil while crashed
	base   time.Duration
	start  time.Duration
	ppm    int64
	inc    int64
	wakeAt time.Duration // real time of the pending wake event, or -1
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

type simCall struct {
	id     uint64
	worker int
	node   int
	inv    workloads.Invocation
	done   bool
}

type simWorker struct {
	process int
	call    *simCall
}

type world struct {
	sc       scenario
	rng      *rand.Rand
	now      time.Duration
	events   eventHeap
	seq      uint64
	ids      []string
	nodes    []*simNode
	blocked  [][]bool // blocked[receiver][sender]
	nemesis  bool     // a partition is in force
	held     []event  // messages a holding partition keeps until heal
	slow     int      // the node whose outgoing messages are slow, or -1
	linkDown bool     // the main site is out, and the link between the sites with it
	remote   []bool   // remote[i]: node i sits at the remote site (simsites_test.go)

	wl       workloads.Workload
	hist     *workloads.Writer
	buf      bytes.Buffer
	workers  []simWorker
	calls    map[uint64]*simCall
	callSeq  uint64
	pollAt   time.Duration
	messages int
}

func newWorld(sc scenario) *world {
	w := &world{sc: sc, rng: rand.New(rand.NewPCG(sc.seed, 0xface)), calls: map[uint64]*simCall{}, pollAt: -1, slow: -1}
	w.hist = workloads.NewWriter(&w.buf)
	w.remote = remoteSite(sc)
	for i := range sc.nodes {
		w.ids = append(w.ids, "n"+strconv.Itoa(i+1))
	}
	w.blocked = make([][]bool, sc.nodes)
	for i := range sc.nodes {
		w.blocked[i] = make([]bool, sc.nodes)
		w.nodes = append(w.nodes, &simNode{id: w.ids[i], wakeAt: -1})
		w.boot(i, 0)
	}
	w.wl = workloads.NewLease(workloads.LeaseOptions{Servers: sc.servers, Chunks: sc.chunks,
		LeaseMs: sc.leaseMs, Rate: sc.rate, Workers: sc.workers}, int64(sc.seed))
	w.workers = make([]simWorker, sc.workers)
	for i := range w.workers {
		w.workers[i].process = i
	}
	return w
}

// boot (re)starts node i with fresh state, a fresh clock origin and rate,
// and a higher incarnation. A restart waits the boot wait (M); the first
// start of the cluster has nothing to forget and skips it.
func (w *world) boot(i int, bootWaitMs int64) {
	n := w.nodes[i]
	n.start, n.base = w.now, time.Duration(w.rng.Int64N(int64(time.Hour)))
	n.ppm = w.drawRate()
	n.inc = int64(w.now) + 1
	cfg := lease.Config{ID: n.id, Acceptors: w.acceptorIDs(i), Incarnation: n.inc, DefaultLeaseMs: w.sc.leaseMs,
		MaxLeaseMs: w.sc.leaseMs, BootWaitMs: bootWaitMs, DriftPPM: w.sc.driftPPM,
		QuorumTimeoutMs: quorumTimeoutMs, RoundTimeoutMs: roundTimeoutMs, BackoffMinMs: 2, BackoffMaxMs: 50,
		Rand: rand.New(rand.NewPCG(w.sc.seed, uint64(i)<<32|uint64(n.inc)))}
	if w.sc.weakening != "none" {
		var err error
		if cfg, err = lease.WithWeakening(cfg, w.sc.weakening); err != nil {
			panic(err)
		}
	}
	core, err := lease.NewNode(cfg, n.local(w.now))
	if err != nil {
		panic(err)
	}
	n.core, n.wakeAt = core, -1
}

// drawRate draws a clock's rate error in ppm, within the configured bound.
func (w *world) drawRate() int64 {
	rho := w.sc.driftPPM
	switch {
	case rho == 0:
		return 0
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
	if w.sc.partition > 0 {
		w.push(event{at: w.expDelay(w.sc.partition), kind: evNemesis})
	}
	if w.sc.crash > 0 {
		w.push(event{at: w.expDelay(w.sc.crash), kind: evCrash})
	}
	if w.sc.outage > 0 {
		w.push(event{at: w.expDelay(w.sc.outage), kind: evOutage})
	}
	for w.events.Len() > 0 {
		e := heap.Pop(&w.events).(event)
		w.now = e.at
		if w.now > w.sc.duration && w.idle() {
			break
		}
		w.handle(e)
	}
	return w.buf.Bytes()
}

// idle reports whether no client op is in flight.
func (w *world) idle() bool {
	for _, wk := range w.workers {
		if wk.call != nil {
			return false
		}
	}
	return true
}

func (w *world) expDelay(mean time.Duration) time.Duration {
	return w.now + time.Duration(w.rng.ExpFloat64()*float64(mean)) + time.Millisecond
}

func (w *world) handle(e event) {
	switch e.kind {
	case evDeliver:
		w.deliver(e)
	case evWake:
		n := w.nodes[e.node]
		if n.core != nil && n.wakeAt == e.at {
			n.wakeAt = -1
			w.absorb(e.node, n.core.Tick(n.local(w.now)))
		}
	case evTimeout:
		w.timeout(e.call)
	case evPoll:
		if w.pollAt == e.at {
			w.pollAt = -1
		}
		w.poll()
	case evNemesis:
		w.flipPartition()
	case evCrash:
		w.crashOne()
	case evRestart:
		w.boot(e.node, w.sc.leaseMs)
	case evOutage:
		w.siteOutage()
	case evRestore:
		w.restoreLink()
	}
}

// absorb sends a node's messages, answers its clients and books its wake.
func (w *world) absorb(i int, out *lease.Output) {
	for _, m := range out.Msgs {
		w.send(m)
	}
	for _, r := range out.Replies {
		w.reply(r)
	}
	n := w.nodes[i]
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
	w.messages++
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

// deliver hands a message to its node unless the node is down or the
// partition in force drops it (checked at delivery). A holding partition
// keeps the message and delivers it after the heal, as a TCP connection
// that reconnects would: the stale messages the safety rules exist for.
// The link between the sites always holds while it is down.
func (w *world) deliver(e event) {
	n := w.nodes[e.node]
	from := w.index(e.msg.From)
	if cut := w.siteCut(from, e.node); cut || w.blocked[e.node][from] {
		if cut || w.sc.hold {
			w.held = append(w.held, e)
		}
		return
	}
	if n.core == nil {
		return
	}
	w.absorb(e.node, n.core.Receive(n.local(w.now), e.msg))
}

// poll offers every free worker an operation, and books the next poll.
func (w *world) poll() {
	if w.now >= w.sc.duration {
		return
	}
	for i := range w.workers {
		if w.workers[i].call == nil {
			if inv, ok := w.wl.Next(w.now, i); ok {
				w.invoke(i, inv)
			}
		}
	}
	at := max(w.wl.Wake(), w.now+time.Millisecond)
	if w.pollAt < 0 || at < w.pollAt {
		w.pollAt = at
		w.push(event{at: at, kind: evPoll})
	}
}

func (w *world) invoke(worker int, inv workloads.Invocation) {
	w.callSeq++
	c := &simCall{id: w.callSeq, worker: worker, node: w.route(worker), inv: inv}
	w.calls[c.id] = c
	w.workers[worker].call = c
	w.record(workloads.Op{Process: workloads.Process{ID: w.workers[worker].process}, Type: workloads.Invoke,
		F: inv.F, Node: w.ids[c.node], Value: inv.Value})
	w.push(event{at: w.now + clientTimeout, kind: evTimeout, call: c.id})
	body := w.wl.Request(inv)
	var head struct{ Type string }
	_ = json.Unmarshal(body, &head)
	req, err := lease.DecodeRequest(head.Type, body)
	if err != nil {
		w.reply(lease.Reply{ID: c.id, Err: err})
		return
	}
	req.ID = c.id
	if n := w.nodes[c.node]; n.core != nil {
		w.absorb(c.node, n.core.Request(n.local(w.now), req))
	}
}

// reply renders a node's answer as the Maelstrom body a client would get
// and completes the op. A reply after the client timed out is dropped.
func (w *world) reply(r lease.Reply) {
	c := w.calls[r.ID]
	if c == nil || c.done {
		return
	}
	var body []byte
	if r.Err != nil {
		body, _ = json.Marshal(map[string]any{"type": "error", "in_reply_to": r.ID, "code": r.Err.Code, "text": r.Err.Text})
	} else {
		fields, _ := json.Marshal(r.Body)
		body = append([]byte(fmt.Sprintf(`{"type":%q,"in_reply_to":%d,`, r.Type, r.ID)), fields[1:]...)
	}
	w.complete(c, body)
}

func (w *world) timeout(id uint64) {
	if c := w.calls[id]; c != nil && !c.done {
		w.complete(c, nil)
	}
}

func (w *world) complete(c *simCall, body json.RawMessage) {
	c.done = true
	delete(w.calls, c.id)
	wk := &w.workers[c.worker]
	comp := w.wl.Complete(w.now, c.worker, c.inv, body)
	w.record(workloads.Op{Process: workloads.Process{ID: wk.process}, Type: comp.Type, F: c.inv.F,
		Node: w.ids[c.node], Value: comp.Value, Error: comp.Error})
	if comp.Type == workloads.Info {
		wk.process += w.sc.workers
	}
	wk.call = nil
	w.poll()
}

func (w *world) record(op workloads.Op) {
	op.Time = int64(w.now)
	if _, err := w.hist.Append(op); err != nil {
		panic(err)
	}
}
