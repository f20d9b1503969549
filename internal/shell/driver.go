package shell

import (
	"time"

	"chunklease/internal/shrink"
	"chunklease/lease"
)

// Edges are what a shell gives its Driver. H is the shell's handle for a
// client request (what it needs to answer it).
type Edges[H any] interface {
	// Now reads the shell's clock.
	Now() time.Duration
	// After runs f on the loop once d has passed and returns a cancel
	// function. The Driver keeps at most one such timer: it cancels the
	// previous one before it asks for the next.
	After(d time.Duration, f func()) (cancel func())
	// Send carries one peer message out; it must not block the loop.
	Send(m lease.Msg)
	// Reply answers the client request h with r (r.ID is the Driver's id).
	Reply(h H, r lease.Reply)
	// Log writes one of the core's lines for the operator (Output.Logs:
	// the boot wait, recovery, serving).
	Log(line string)
}

// Adopter is what Edges may also implement to learn of every
// configuration the core adopts (Output.Adopted, membership): a shell
// that must reach members added at run time, or that runs several cores
// of one member and hands the configuration to the others.
type Adopter interface {
	Adopted(c lease.Membership)
}

// Timer is what Edges may also implement: a timer set at a time on the
// shell's clock (the one Now reads), not after a delay. The Driver then
// hands it the core's wake-up as it is. Through After it reads the clock
// to turn the wake-up into a delay, which the edges turn back into a time
// by reading it again: two clock reads at almost every event, since the
// wake-up moves with every request's round timeout. A renew in a member
// of the network service moves it twice (its round timeout comes, and
// goes when a majority answers): four of its seven clock reads.
type Timer interface {
	// At runs f on the loop once the clock reaches at (at once if it
	// has) and returns a cancel function, as After does.
	At(at time.Duration, f func()) (cancel func())
}

// Driver carries a lease core's outputs to a shell's edges.
type Driver[H any] struct {
	// The pads keep each member loop's Driver, written at every event,
	// off the lines of the next loop's, made just after it in the same
	// size class (internal/apart).
	_       [128]byte
	core    *lease.Node
	edges   Edges[H]
	timer   Timer        // edges as a Timer; nil when they are not
	pending map[uint64]H // client requests the core has not answered, by id
	// pendingPeak lets pending give its memory back after a burst
	// (internal/shrink).
	pendingPeak int
	nextID      uint64
	cancel      func()        // cancels the wake-up timer; nil when none is set
	wakeAt      time.Duration // when that timer fires; lease.Never when none
	tick        func()        // the timer's callback, made once
	_           [128]byte
}

// New drives core through edges.
func New[H any](core *lease.Node, edges Edges[H]) *Driver[H] {
	d := &Driver[H]{core: core, edges: edges, pending: make(map[uint64]H), wakeAt: lease.Never}
	d.timer, _ = edges.(Timer)
	d.tick = d.onTimer
	return d
}

// Core is the driven core, for read-only questions (lease.Node.Stats).
func (d *Driver[H]) Core() *lease.Node { return d.core }

// Request hands the client request r, answered later through h, to the
// core at now. The Driver numbers it; r.ID is overwritten.
func (d *Driver[H]) Request(now time.Duration, r lease.Request, h H) {
	d.nextID++
	r.ID = d.nextID
	d.pending[r.ID] = h
	d.pending = shrink.Map(d.pending, &d.pendingPeak)
	d.Apply(d.core.Request(now, r))
}

// Receive hands a peer message to the core at now.
func (d *Driver[H]) Receive(now time.Duration, m lease.Msg) {
	d.Apply(d.core.Receive(now, m))
}

// Apply carries out one core output: log lines, peer messages, then
// replies, then the next wake-up.
func (d *Driver[H]) Apply(out *lease.Output) {
	for _, l := range out.Logs {
		d.edges.Log(l)
	}
	if out.Adopted != nil {
		if a, ok := d.edges.(Adopter); ok {
			a.Adopted(*out.Adopted)
		}
	}
	for _, m := range out.Msgs {
		d.edges.Send(m)
	}
	for _, r := range out.Replies {
		h, ok := d.pending[r.ID]
		if !ok {
			continue
		}
		delete(d.pending, r.ID)
		d.pending = shrink.Map(d.pending, &d.pendingPeak)
		d.edges.Reply(h, r)
	}
	d.Schedule(out.Wake)
}

// Schedule keeps exactly one timer, at the core's next wake-up at.
func (d *Driver[H]) Schedule(at time.Duration) {
	if at == d.wakeAt {
		return
	}
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
	}
	d.wakeAt = at
	if at == lease.Never {
		return
	}
	if d.timer != nil {
		d.cancel = d.timer.At(at, d.tick)
		return
	}
	d.cancel = d.edges.After(max(at-d.edges.Now(), 0), d.tick)
}

// onTimer lets the core's time pass, with the clock read once.
func (d *Driver[H]) onTimer() {
	d.cancel, d.wakeAt = nil, lease.Never
	d.Apply(d.core.Tick(d.edges.Now()))
}

// Pending is the number of client requests the core has not answered.
func (d *Driver[H]) Pending() int { return len(d.pending) }
