package server

import (
	"sync"
	"time"

	"chunklease/internal/peer"
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

// loopTimer is the loop's one timer (the Driver keeps at most one): f
// runs on the loop once the clock reaches at.
type loopTimer struct {
	t      *time.Timer
	at     time.Duration
	f      func()
	set    bool
	rearm  bool   // at changed, or the clock's rate did: Reset before waiting
	cancel func() // made once: clears set
}

// loop owns the core: every event reads the clock once and goes through
// the Driver, which carries the output to the peers' queues, the waiting
// handlers and the timer. The peers' writers are woken only when no
// other input is ready, so that the frames of a burst leave together.
func (n *serveNode) loop() {
	defer close(n.loopDone)
	n.timer.t = time.NewTimer(time.Hour)
	n.timer.t.Stop()
	defer n.timer.t.Stop()
	inbox := n.peers.Inbox()
	// The core's first wake-up, as the Maelstrom shell schedules it at
	// init: a restarted member starts its recovery (sync) and its boot
	// wait's bookkeeping at once, not at the first request or peer
	// message, which an idle cluster may never send while /readyz waits
	// for the recovery.
	n.drv.Schedule(n.clock.Now())
	n.recoveringNow.Store(n.drv.Core().Recovering())
	for {
		select {
		case c := <-n.calls:
			n.drv.Request(n.clock.Now(), c.req, c)
		case cs := <-n.batches:
			n.requestAll(cs)
		case m := <-inbox:
			n.drv.Receive(n.clock.Now(), m)
		case <-n.wakeC():
			n.fire()
		case <-n.clock.Changed():
			n.timer.rearm = true // the rate changed: the real delay did too
		case q := <-n.queries:
			q()
		case <-n.stopLoop:
			return
		}
		n.drainReady(inbox)
		n.peers.Flush()
		n.recoveringNow.Store(n.drv.Core().Recovering())
	}
}

// recovering reports the core's Recovering as the loop last saw it.
func (n *serveNode) recovering() bool { return n.recoveringNow.Load() }

// drainReady handles the client requests and peer messages that are
// already waiting (at most a bounded number, so timers are not starved).
func (n *serveNode) drainReady(inbox <-chan lease.Msg) {
	for range 256 {
		select {
		case c := <-n.calls:
			n.drv.Request(n.clock.Now(), c.req, c)
		case cs := <-n.batches:
			n.requestAll(cs)
		case m := <-inbox:
			n.drv.Receive(n.clock.Now(), m)
		default:
			return
		}
	}
}

// requestAll hands the calls of one batch to the core in one event, so
// that their peer messages leave together at the next Flush.
func (n *serveNode) requestAll(cs []*call) {
	for _, c := range cs {
		n.drv.Request(n.clock.Now(), c.req, c)
	}
}

// wakeC arms the timer for the next wake-up when it changed and returns
// its channel (nil, never ready, when none is set).
func (n *serveNode) wakeC() <-chan time.Time {
	t := &n.timer
	if !t.set {
		return nil
	}
	if t.rearm {
		t.t.Reset(n.clock.RealDelay(t.at - n.clock.Now()))
		t.rearm = false
	}
	return t.t.C
}

// fire runs the timer's callback if its time has come on the node's
// clock (a timer armed before a rate change may fire early).
func (n *serveNode) fire() {
	t := &n.timer
	if n.clock.Now() < t.at {
		t.rearm = true
		return
	}
	t.set = false
	t.f()
}

// Now, After, Send, Reply and Log are the network edges of the Driver.
func (n *serveNode) Now() time.Duration { return n.clock.Now() }

func (n *serveNode) After(d time.Duration, f func()) func() {
	t := &n.timer
	t.at, t.f, t.set, t.rearm = n.clock.Now()+d, f, true, true
	if t.cancel == nil {
		t.cancel = func() { t.set = false }
	}
	return t.cancel
}

func (n *serveNode) Send(m lease.Msg) { n.peers.Send(&m) }

func (n *serveNode) Reply(c *call, r lease.Reply) { c.done <- r }

// Log writes one of the core's lines for the operator (boot wait,
// recovery, serving).
func (n *serveNode) Log(line string) { n.log.Print(line) }

// Adopted publishes a configuration the core adopted (membership) and
// makes every member it names with an address a peer: a member added at
// run time is dialled, and its certificate accepted, from now on.
func (n *serveNode) Adopted(c lease.Membership) {
	n.config.Store(&c)
	for _, id := range c.Members {
		if addr := c.Addrs[id]; addr != "" {
			n.peers.AddMember(peer.Member{ID: id, Addr: addr})
		}
	}
}

// inflight counts the client requests admitted and not yet answered, so
// that a drain can refuse new ones and wait for these.
type inflight struct {
	mu       sync.Mutex
	n        int
	draining bool
	idle     chan struct{} // closed when draining and n reaches 0
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
		if f.n == 0 {
			close(f.idle)
		}
	}
	return f.idle
}

func (f *inflight) isDraining() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.draining
}

func (f *inflight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}
