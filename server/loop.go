package server

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/internal/apart"
	"chunklease/internal/clock"
	"chunklease/internal/peer"
	"chunklease/internal/shell"
	"chunklease/internal/shrink"
	"chunklease/lease"
)

// call is one client request on its way through the loop: the HTTP
// handler waits on done (capacity 1, so the loop never blocks on a
// handler whose client went away).
type call struct {
	req  lease.Request
	done chan lease.Reply
}

var callPool = sync.Pool{New: func() any { return &call{done: make(chan lease.Reply, 1)} }}

// loopTimer is a loop's one timer (the Driver keeps at most one): f
// runs on the loop once the clock reaches at. Its fields are the loop's
// own (held); the time.Timer is reset by whoever holds the loop (armTimer).
//
// The time.Timer runs no later than at, but may run earlier: a wake-up
// that moved later leaves it as it is, and fire sets it again when it
// finds the time not come. Resetting a runtime timer locks the timer
// heap of the core it sits on, and the core's wake-up moves at almost
// every call (the earliest round timeout of the requests in flight);
// it moves earlier seldom.
type loopTimer struct {
	t       *time.Timer
	at      time.Duration
	f       func()
	set     bool
	armed   bool          // t runs, at armedAt on the node's clock
	armedAt time.Duration // when armed
	rearm   bool          // the clock's rate changed, or t ran early: set t afresh
	cancel  func()        // made once: clears set
}

// peerEdge is where a member's loops send peer messages: the TLS
// transport (internal/peer), or a benchmark's fake peers. Both methods
// may be called from every loop at once. Send must not keep m past its
// return (the transport encodes it into its queue at once): the loop
// reuses it.
type peerEdge interface {
	Send(m *lease.Msg)
	Flush()
}

// member is a member's cores, each on a loop of its own (lease/doc.go
// "Cores sharing one member"): a client call goes to its chunk's loop
// (run on the caller's own goroutine when that loop is free, coreLoop)
// (lease.CoreOf; the master_* calls, which name no chunk, to loop 0,
// whose core serves the master lease), a peer message to the loop the
// transport's Route picks (its chunk's, or every loop for the
// node-level ones). The loops share nothing but the clock (read without
// a lock), the peers' send queues (which lock) and the log, so a member
// of n loops keeps n cores busy.
type member struct {
	loops    []*coreLoop
	stopLoop chan struct{}
	stopOnce sync.Once
	loopDone chan struct{} // closed once every loop has returned
	// fences keep the cores' and the loops' memory apart
	// (internal/apart.Each): kept for as long as the loops.
	fences [][]any
}

// newMember puts each core on a loop of its own; inbox(i) is loop i's
// peer messages. Nothing runs until start. Each loop is built on a
// goroutine of its own, all at once (internal/apart.Each), as the cores
// are (buildCores), so that what one loop writes at every call lies,
// as far as Go's allocator lets it be placed, on other cache lines than
// what another does. coreFences are buildCores' fences, kept with the
// loops' own.
func newMember(cores []*lease.Node, coreFences [][]any, clk *clock.Clock, peers peerEdge, inbox func(i int) <-chan lease.Msg, logger *log.Logger) *member {
	m := &member{stopLoop: make(chan struct{}), loopDone: make(chan struct{}), loops: make([]*coreLoop, len(cores))}
	loopFences := apart.Each(len(cores), func(i int) {
		l := &coreLoop{index: i, clock: clk, peers: peers, log: logger, inbox: inbox(i), stop: m.stopLoop,
			nudge: make(chan struct{}, 1), queries: make(chan func())}
		l.drv = shell.New[*call](cores[i], l)
		// Made before any goroutine runs the core: a caller may run one
		// before the loop's goroutine starts (member.call).
		l.timer.t = time.NewTimer(time.Hour)
		l.timer.t.Stop()
		l.recoveringNow.Store(cores[i].AwaitingRecovery())
		m.loops[i] = l
	})
	m.fences = append(coreFences, loopFences...)
	return m
}

// buildCores builds a member's cores (lease.BuildCores), each on a
// goroutine of its own, all at once (internal/apart.Each), and returns
// the fences to keep with them.
func buildCores(cfg lease.Config, cores int, now time.Duration, rnd func(core int) *rand.Rand) ([]*lease.Node, [][]any, error) {
	var fences [][]any
	nodes, err := lease.BuildCores(cfg, cores, now, rnd, func(n int, build func(i int)) { fences = apart.Each(n, build) })
	return nodes, fences, err
}

// start runs every loop; loopDone closes once all have returned.
func (m *member) start() {
	var wg sync.WaitGroup
	for _, l := range m.loops {
		wg.Go(l.loop)
	}
	go func() { wg.Wait(); close(m.loopDone) }()
}

// signalStop tells every loop to stop (once, whoever asks first); the
// handlers still waiting for a loop answer 504 (awaitReply).
func (m *member) signalStop() { m.stopOnce.Do(func() { close(m.stopLoop) }) }

// stopLoops stops every loop and waits for them.
func (m *member) stopLoops() {
	m.signalStop()
	<-m.loopDone
}

// loopOf is the loop whose core serves chunk.
func (m *member) loopOf(chunk string) *coreLoop {
	return m.loops[lease.CoreOf(chunk, len(m.loops))]
}

// call hands a client call to its chunk's loop (give); false when the
// loops have stopped.
func (m *member) call(c *call) bool {
	return m.give(m.loopOf(c.req.Chunk), input{kind: inCall, c: c})
}

// give hands a caller's input (a call, or a batch's share) to loop l;
// false when the loops have stopped.
//
// When no one holds the loop (its goroutine is waiting for input, or
// busy elsewhere), the caller runs the input on its own goroutine
// (coreLoop.runAndLetGo): no hand-over to the loop's goroutine and back,
// which on several cores moved the call, the core's state and two
// wake-ups between cores at every call, and kept a member's cores from
// adding up (docs/performance.md "A call runs where it arrives").
// Otherwise the input is posted for the holder, which runs it before it
// lets go (coreLoop.post). Either way the caller waits for no one.
//
// loopDone is looked at without a lock (a receive that finds an open
// channel empty takes none): every call of every loop reads it.
func (m *member) give(l *coreLoop, in input) bool {
	if l.tryHold() {
		ran, _ := l.runAndLetGo(in)
		return ran
	}
	select {
	case <-m.loopDone:
		return false
	default:
	}
	l.handedOver.Add(1)
	l.post(in)
	return true
}

// submit hands the calls of a batch to their loops (give), each loop's
// share as one event, so that their peer messages leave together. It
// returns the calls no loop took because the loops had stopped (none
// otherwise). The loops keep each share until they ran it: cs is not
// changed after.
func (m *member) submit(cs []*call) (refused []*call) {
	if len(m.loops) == 1 {
		if !m.give(m.loops[0], input{kind: inBatch, cs: cs}) {
			return cs
		}
		return nil
	}
	shares := make([][]*call, len(m.loops))
	for _, c := range cs {
		k := lease.CoreOf(c.req.Chunk, len(m.loops))
		shares[k] = append(shares[k], c)
	}
	for k, share := range shares {
		if len(share) > 0 && !m.give(m.loops[k], input{kind: inBatch, cs: share}) {
			refused = append(refused, share...)
		}
	}
	return refused
}

// onEveryLoop runs f on every loop, by whoever holds that loop between
// two events (so f may read its core), and returns once each ran: false if a
// loop did not get to it within limit or had stopped. It is the one way
// a node-level question or event reaches every core of the member from
// outside the loops: the metrics read each core's figures through it,
// and a configuration one core adopted reaches the others through it
// (spread). f runs on several loops at once: it may
// touch only its own loop's state (or a slot of its own, by l.index).
func (m *member) onEveryLoop(limit time.Duration, f func(l *coreLoop)) bool {
	done := make(chan struct{}, len(m.loops))
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	for _, l := range m.loops {
		select {
		case l.queries <- func() { f(l); done <- struct{}{} }:
		case <-m.loopDone:
			return false
		case <-timeout.C:
			return false
		}
	}
	for range m.loops {
		select {
		case <-done:
		case <-m.loopDone:
			return false
		case <-timeout.C:
			return false
		}
	}
	return true
}

// recovering reports whether any core is still recovering, as the loops
// last saw it (HTTP goroutines never touch a core).
func (m *member) recovering() bool {
	for _, l := range m.loops {
		if l.recoveringNow.Load() {
			return true
		}
	}
	return false
}

// coreLoop is one loop of a member: one lease core, its Driver, its one
// timer and its inputs (client calls, batches, peer messages, queries).
//
// The loop is held (held) by whoever runs the core: the loop's
// goroutine while it handles an input (turn), or a caller that found the
// loop free and runs its own call or batch share (member.give).
// Everything under "the loop's own" is touched only by the holder. The
// loop's goroutine stays the one that waits: for peer messages, the
// timer, queries, a nudge, and the stop.
//
// Nobody waits for the loop to be free (but the loop's goroutine, at
// the stop and while maxPosted inputs wait). An input that finds it held is
// posted (post) and run by the holder before it lets go (drainReady), or
// else, when it arrived just as the holder let go, by the loop's
// goroutine, which the holder then nudges (release). A goroutine that
// waited would take a core from the work while the holder runs, and a
// holder the scheduler preempted may not run again for a time slice or
// more; the loop's goroutine, which once yielded until the loop was
// free, kept a core busy at about one yield per call in
// BenchmarkMemberCores at two cores (docs/performance.md "Nobody waits
// for the loop").
//
// Its fields fall in three parts, each on cache lines of its own: what
// other goroutines read (the channels) and never write; what only the
// loop touches, written at every event; and recoveringNow, written by
// the loop when it changes and read by readiness. A write of one loop
// never invalidates what another loop's clients read (false sharing of
// neighbouring loops would make the loops pay for each other's events).
type coreLoop struct {
	_ cacheLinePad
	// Read by the clients' goroutines, written once by newMember.
	index   int
	queries chan func()   // read-only questions the loop answers (metrics, onEveryLoop)
	nudge   chan struct{} // input was posted as the holder let go (release)
	_       cacheLinePad
	// held: someone runs the core (tryHold, release); stopping: the loop
	// is stopping, and callers no longer take it. pending: input was
	// posted and not yet taken. Written at every call, read by every
	// caller of this loop.
	held     atomic.Bool
	stopping atomic.Bool
	pending  atomic.Bool
	_        cacheLinePad
	// backlog is how many posted inputs the holder has not taken yet.
	backlog atomic.Int32
	_       cacheLinePad
	// posted is the input that found the loop held (post), for the
	// holder; postMu guards it.
	postMu sync.Mutex
	posted []input
	_      cacheLinePad
	// The loop's own (held). stopped: the loop's goroutine returned,
	// and no caller may run the core any more.
	stopped bool
	// taking is posted's other buffer: the input the holder is running.
	taking []input
	// timerDue: the timer ran, and fires after the input waiting (burst).
	timerDue bool
	clock    *clock.Clock
	peers    peerEdge
	log      *log.Logger
	drv      *shell.Driver[*call]
	inbox    <-chan lease.Msg
	stop     <-chan struct{}
	timer    loopTimer
	// replies are the burst's replies, not yet handed out (deliver).
	replies []pendingReply
	sending lease.Msg // Send's scratch
	// adopted is told every configuration the core adopts (membership:
	// the Driver calls Adopted); nil when nothing listens.
	adopted func(lease.Membership)
	_       cacheLinePad
	// recoveringNow is the core's AwaitingRecovery, published by the loop
	// after an event that changed it, for readiness.
	recoveringNow atomic.Bool
	_             cacheLinePad
	// handedOver counts the calls and batch shares that found the loop
	// held and were posted for the holder (member.give).
	handedOver atomic.Uint64
	_          cacheLinePad
}

// cacheLinePad keeps what precedes it and what follows it off one cache
// line (two lines: x86 fetches lines in adjacent pairs).
type cacheLinePad [128]byte

// publishRecovering stores the core's AwaitingRecovery for readiness, only when
// it changed: an atomic store at every event would make the line bounce
// between the loop's core and a reader's.
func (l *coreLoop) publishRecovering() {
	if r := l.drv.Core().AwaitingRecovery(); r != l.recoveringNow.Load() {
		l.recoveringNow.Store(r)
	}
}

// loop waits for the core's input: every event reads the clock once and
// goes through the Driver, which carries the output to the peers' queues,
// the waiting handlers and the timer. The peers' writers are woken, and
// the burst's replies handed out, only when no other input is ready, so
// that the frames of a burst leave together and its handlers wake
// together.
func (l *coreLoop) loop() {
	defer l.timer.t.Stop()
	// The core's first wake-up, as the Maelstrom shell schedules it at
	// init: a restarted member starts its recovery (sync) and its boot
	// wait's bookkeeping at once, not at the first request or peer
	// message, which an idle cluster may never send while /readyz waits
	// for the recovery.
	l.run(input{kind: inStart})
	for l.turn() {
	}
}

// The kinds of input a loop runs.
const (
	inCall = iota
	inBatch
	inPeer
	inTimer
	inRate
	inQuery
	inStart
	inNudge
)

// input is one input for the core: a call, a batch's share, a peer
// message, a query, or one of the loop's own events.
type input struct {
	kind int
	c    *call
	cs   []*call
	m    lease.Msg
	q    func()
}

// turn waits for one input, and runs it (run); false once the loop is
// told to stop. A burst that answered calls yields once after it lets
// go (deliver).
func (l *coreLoop) turn() bool {
	var in input
	select {
	case in.m = <-l.inbox:
		in.kind = inPeer
	case <-l.timer.t.C:
		in.kind = inTimer
		// (armed is cleared by the holder: fire)
	case <-l.clock.Changed():
		in.kind = inRate
	case in.q = <-l.queries:
		in.kind = inQuery
	case <-l.nudge:
		in.kind = inNudge
	case <-l.stop:
		l.halt()
		return false
	}
	if l.run(in) {
		// The handlers just woken run while the loop yields, and their
		// next calls are likely waiting (or run by themselves) when it
		// looks again, so it need not park and be woken for each (on
		// several cores, every park and wake-up is a trip through the
		// scheduler and often a futex).
		runtime.Gosched()
	}
	return true
}

// run runs in and the input waiting after it, or posts in for the
// holder when the loop is held; it reports whether the burst answered
// calls.
func (l *coreLoop) run(in input) bool {
	if !l.tryHold() {
		if in.kind != inNudge {
			l.post(in)
			l.awaitBacklog()
		}
		return false
	}
	_, answered := l.runAndLetGo(in)
	return answered
}

// awaitBacklog holds the loop's goroutine back while maxPosted inputs
// wait for the holder, so that peer messages wait in the inbox, whose
// bound backs pressure up to the transport's readers (internal/peer), not
// in posted, which has none. It runs the backlog itself when the loop
// is free. (The loop cannot be stopping here: only the loop's goroutine,
// the one waiting, stops it.)
func (l *coreLoop) awaitBacklog() {
	for l.backlog.Load() >= maxPosted {
		if l.tryHold() {
			l.runAndLetGo(input{kind: inNudge})
			return
		}
		runtime.Gosched()
	}
}

// maxPosted is the most posted input the loop's goroutine adds to
// before it waits (awaitBacklog): a burst's worth (drainReady).
const maxPosted = 256

// halt marks the loop stopped for good. New callers no longer take it
// (stopping), so the loop's goroutine gets it once the holder lets go:
// it waits here (yielding), the only place it does, once.
func (l *coreLoop) halt() {
	l.stopping.Store(true)
	for !l.held.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
	l.stopped = true
	l.held.Store(false)
}

// tryHold takes the loop if no one holds it and it is not stopping.
func (l *coreLoop) tryHold() bool {
	return !l.stopping.Load() && l.held.CompareAndSwap(false, true)
}

// release lets the loop go. Input posted after the holder last looked
// (drainReady) and before it let go found the loop held and was left
// for it: the loop's goroutine is nudged to run it. The order matters:
// a poster sets pending and then tries to hold (post); the holder lets
// go and then reads pending. Go's atomics are sequentially consistent,
// so at least one of the two sees the other: the poster holds the loop,
// or the holder sees pending.
func (l *coreLoop) release() {
	l.held.Store(false)
	if l.pending.Load() {
		select {
		case l.nudge <- struct{}{}:
		default: // a nudge is already waiting
		}
	}
}

// post leaves in for the loop's holder, and runs it (with whatever else
// was posted) if the holder let go meanwhile.
func (l *coreLoop) post(in input) {
	l.postMu.Lock()
	l.posted = append(l.posted, in)
	l.postMu.Unlock()
	l.backlog.Add(1)
	l.pending.Store(true)
	if l.tryHold() {
		l.runAndLetGo(input{kind: inNudge})
	}
}

// runAndLetGo (held) runs in and the input waiting after it (burst),
// ends the burst and lets the loop go: what every holder does, the
// loop's goroutine (run), a caller (member.call) and a poster that found
// the loop free after all (post, awaitBacklog). It reports whether in
// ran and whether the burst answered calls.
//
// Nothing runs once the loop stopped: a poster may take the loop after
// the stop (tryHold reads stopping, then takes held: halt may run
// between the two).
//
// A panic in the core ends the process (dieOnPanic): the holder may be
// an HTTP handler, whose panic net/http recovers, and the loop would
// stay held for ever, its member alive to its peers and its clients but
// serving nothing.
func (l *coreLoop) runAndLetGo(in input) (ran, answered bool) {
	defer dieOnPanic()
	if !l.stopped {
		l.handle(&in)
		l.burst()
		answered, ran = l.endBurst(), true
	}
	l.release()
	return ran, answered
}

// dieOnPanic, deferred by a holder, ends the process on a panic, with the
// panic and its stack on standard error, as the runtime does for a panic
// nobody recovers (exit status 2). A core that panicked stopped half way
// through an event, its state no longer what the rules of the core
// promise: serving on from it could break them, and only a restart,
// which forgets it all (diskless), is safe.
func dieOnPanic() {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "panic in a member's loop: %v\n\n%s", r, debug.Stack())
		os.Exit(2)
	}
}

// takePosted (held) runs the input posted so far; it returns how many.
func (l *coreLoop) takePosted() int {
	l.pending.Store(false)
	l.postMu.Lock()
	l.taking, l.posted = l.posted, l.taking[:0]
	l.postMu.Unlock()
	n := len(l.taking)
	l.backlog.Add(-int32(n))
	for i := range l.taking {
		l.handle(&l.taking[i])
	}
	l.taking = shrink.Slice(l.taking, maxKept) // a flood's burst gives its memory back
	return n
}

// handle (held) runs one input through the Driver.
func (l *coreLoop) handle(in *input) {
	switch in.kind {
	case inCall:
		l.drv.Request(l.clock.Now(), in.c.req, in.c)
	case inBatch:
		l.requestAll(in.cs)
	case inPeer:
		l.drv.Receive(l.clock.Now(), in.m)
	case inTimer:
		l.timerDue = true // fired after the input waiting: burst
	case inRate:
		l.timer.rearm = true // the rate changed: the real delay did too
	case inQuery:
		in.q()
	case inStart:
		l.drv.Schedule(l.clock.Now())
	case inNudge: // only the posted input
	}
}

// burst (held) runs the input waiting, then a timer that ran, then
// the input its firing left waiting. A process starved of CPU wakes with
// its timer due and the peers' answers that arrived meanwhile waiting; a
// round timeout that runs first gives up the round those answers
// complete.
func (l *coreLoop) burst() {
	l.drainReady()
	if l.timerDue {
		l.timerDue = false
		l.fire()
		l.drainReady()
	}
}

// endBurst (held) ends a burst of input: the peers' writers are woken
// for its frames, readiness learns whether the core still recovers, the
// timer is set to the core's next wake-up, and the burst's replies are
// handed out, after its peer messages left. It reports whether any were.
func (l *coreLoop) endBurst() bool {
	l.peers.Flush()
	l.publishRecovering()
	l.armTimer()
	return l.deliver()
}

// deliver hands out the replies of the burst just handled, together; it
// reports whether there were any. A reply's channel has room for it, so
// this never waits for a handler.
func (l *coreLoop) deliver() bool {
	if len(l.replies) == 0 {
		return false
	}
	for i := range l.replies {
		r := &l.replies[i]
		r.c.done <- r.r
	}
	l.replies = shrink.Slice(l.replies, maxKept) // a huge batch's burst gives its memory back
	return true
}

// maxKept is the most room for replies, and for posted input, a loop
// keeps between bursts.
const maxKept = 1024

// pendingReply is a reply the loop holds until the end of its burst.
type pendingReply struct {
	c *call
	r lease.Reply
}

// drainReady handles the posted input and the peer messages that are
// already waiting (at most a bounded number, so timers are not starved).
// A receive that finds the inbox empty takes no lock.
func (l *coreLoop) drainReady() {
	for n := 0; n < 256; {
		got := false
		if l.pending.Load() {
			n += l.takePosted()
			got = true
		}
		select {
		case m := <-l.inbox:
			l.drv.Receive(l.clock.Now(), m)
			got = true
			n++
		default:
		}
		if !got {
			return
		}
	}
}

// requestAll hands the calls of one batch to the core in one event, so
// that their peer messages leave together at the next Flush.
func (l *coreLoop) requestAll(cs []*call) {
	for _, c := range cs {
		l.drv.Request(l.clock.Now(), c.req, c)
	}
}

// armTimer (held) sets the timer when the core's next wake-up comes
// before the time it runs at (or it runs not at all), or it must be set
// afresh. The loop's goroutine waits on the timer's channel all along,
// so a caller that moved the wake-up earlier resets the timer it waits
// on. A cancelled wake-up leaves the timer running: fire drops it.
func (l *coreLoop) armTimer() {
	t := &l.timer
	if !t.set || !t.rearm && t.armed && t.armedAt <= t.at {
		return
	}
	t.rearm, t.armed, t.armedAt = false, true, t.at
	t.t.Reset(l.clock.RealDelay(t.at - l.clock.Now()))
}

// fire (held; the timer just ran) runs the callback if one is set and
// its time has come on the node's clock; when it has not (the wake-up
// moved later, or the clock's rate changed since the timer was set),
// the timer is set again.
func (l *coreLoop) fire() {
	t := &l.timer
	t.armed = false
	if !t.set {
		return
	}
	if l.clock.Now() < t.at {
		t.rearm = true
		return
	}
	t.set = false
	t.f()
}

// Now, After, At, Send, Reply and Log are the loop's edges for its Driver.
func (l *coreLoop) Now() time.Duration { return l.clock.Now() }

func (l *coreLoop) After(d time.Duration, f func()) func() { return l.At(l.clock.Now()+d, f) }

// At is the Driver's shell.Timer: the core's wake-up as it is, on the
// node's clock, with no clock read (armTimer sets the real timer when the
// burst ends).
func (l *coreLoop) At(at time.Duration, f func()) func() {
	t := &l.timer
	t.at, t.f, t.set = at, f, true
	if t.cancel == nil {
		t.cancel = func() { t.set = false }
	}
	return t.cancel
}

// Send passes m through the loop's scratch message, so that handing a
// pointer to the peers' edge (an interface: the compiler cannot see that
// it keeps nothing) costs no allocation per message.
func (l *coreLoop) Send(m lease.Msg) {
	l.sending = m
	l.peers.Send(&l.sending)
	l.sending = lease.Msg{}
}

// Reply keeps r for deliver, at the end of the loop's burst.
func (l *coreLoop) Reply(c *call, r lease.Reply) { l.replies = append(l.replies, pendingReply{c, r}) }

// Log writes one of the core's lines for the operator (boot wait,
// recovery, serving).
func (l *coreLoop) Log(line string) { l.log.Print(line) }

// Adopted passes on a configuration the core adopted (membership).
func (l *coreLoop) Adopted(c lease.Membership) {
	if l.adopted != nil {
		l.adopted(c)
	}
}

// adopted publishes a configuration a core adopted (membership), if it
// is newer than the one published (or the first a joining node learnt),
// and makes every member it names with
// an address a peer: a member added at run time is dialled, and its
// certificate accepted, from now on. With several loops it hands the
// configuration to every other core (spread). It runs on the loop of
// the core that adopted.
func (n *serveNode) adopted(c lease.Membership) {
	n.configMu.Lock()
	cur := n.config.Load()
	newer := c.Epoch > cur.Epoch || len(cur.Members) == 0 // a joining node's first
	if newer {
		n.config.Store(&c)
	}
	n.configMu.Unlock()
	if !newer {
		return
	}
	for _, id := range c.Members {
		if addr := c.Addrs[id]; addr != "" {
			n.peers.AddMember(peer.Member{ID: id, Addr: addr})
		}
	}
	if len(n.loops) > 1 {
		go n.spread(c)
	}
}

// spread hands configuration c, which one core adopted, to every core of
// the member (each adopts it if it is newer), and once every core holds
// it tells the lead, whose waiting rule then runs again from that
// moment: until then the lead promises no change (lease/doc.go
// "Membership and cores"). It runs on a goroutine of its own, since
// onEveryLoop waits for every loop, the calling one too; a loop too busy
// to take it within a second is asked again until the loops stop.
func (m *member) spread(c lease.Membership) {
	adopt := func(l *coreLoop) { l.drv.Apply(l.drv.Core().Adopt(l.clock.Now(), c)) }
	for !m.onEveryLoop(time.Second, adopt) {
		select {
		case <-m.loopDone:
			return
		default:
		}
	}
	lead, done := m.loops[0], make(chan struct{})
	select {
	case lead.queries <- func() { adopt(lead); close(done) }:
		// The loop may stop before it runs the query (posted for a
		// holder, then the stop): do not wait for it then.
		select {
		case <-done:
		case <-m.loopDone:
		}
	case <-m.loopDone:
	}
}

// inflight counts the client requests admitted and not yet answered, so
// that a drain can refuse new ones and wait for these.
type inflight struct {
	mu       sync.Mutex
	n        int
	draining bool
	idle     chan struct{} // closed when draining and n reaches 0
	drained  atomic.Bool   // draining, for readers that take no lock
}

// enter admits a request, unless the node is draining.
func (f *inflight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.draining {
		return false
	}
	f.n++
	return true
}

func (f *inflight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.draining && f.n == 0 {
		close(f.idle)
	}
}

// drain refuses every later request; the channel closes once the
// admitted ones are answered.
func (f *inflight) drain() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.draining {
		f.draining, f.idle = true, make(chan struct{})
		f.drained.Store(true)
		if f.n == 0 {
			close(f.idle)
		}
	}
	return f.idle
}

func (f *inflight) isDraining() bool { return f.drained.Load() }

func (f *inflight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}
