package netsim

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Errors Send and Recv return. The harness turns them into diagnostics
// that name the offending node.
var (
	// ErrUnknown: a source or destination that is neither a node nor an
	// open client of this test.
	ErrUnknown = errors.New("not a node or open client of this test")
	// ErrClosedClient: the destination is a client that has been closed
	// (its request timed out and its worker moved on, or the test ended).
	ErrClosedClient = errors.New("client is closed")
)

// Net is the simulated network. It is safe for concurrent use.
type Net struct {
	mu      sync.Mutex
	latency Latency
	rng     *rand.Rand // latency draws, in send order
	nextID  int64
	inboxes map[string]*inbox
	closed  map[string]bool            // clients closed so far
	drops   map[string]map[string]bool // receiver -> senders it drops
	packet  map[string]PacketFault     // sender -> the fault on its link (packet.go)
	prng    *rand.Rand                 // packet-fault draws, in send order
	stats   Stats
	journal journal // bounded record of the messages, for the report (journal.go)
	// precise: deliveries end their wait on a kernel timer (wait.go);
	// false under a virtual clock, off Linux, or after the kernel refused.
	precise atomic.Bool
}

// New returns an empty network with the given latency model, which must be
// valid (Latency.Validate). seed fixes the sequence of latency draws.
func New(lat Latency, seed uint64) (*Net, error) {
	if err := lat.Validate(); err != nil {
		return nil, err
	}
	n := &Net{
		latency: lat,
		rng:     rand.New(rand.NewPCG(seed, 0x6e6574)), // stream "net"
		prng:    rand.New(rand.NewPCG(seed, packetStream)),
		inboxes: map[string]*inbox{},
		closed:  map[string]bool{},
		drops:   map[string]map[string]bool{},
	}
	n.precise.Store(haveKernelTimer && !clockIsVirtual())
	return n, nil
}

// Register adds an endpoint (a node or a client) with an empty inbox.
// Registering a name twice is a programming error.
func (n *Net) Register(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, dup := n.inboxes[name]; dup {
		panic(fmt.Sprintf("netsim: %q registered twice", name))
	}
	n.inboxes[name] = newInbox()
	delete(n.closed, name)
}

// Close removes an endpoint: its queued messages are discarded, a Recv
// waiting on it returns ErrClosedClient, and later sends to it fail with
// ErrClosedClient.
func (n *Net) Close(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	in := n.inboxes[name]
	if in == nil {
		return
	}
	delete(n.inboxes, name)
	n.closed[name] = true
	close(in.done)
	in.timer.close()
}

// Send validates and queues one message, and returns it with its id and
// deadline. body must be a compact JSON object. Nothing is numbered or
// counted when validation fails.
func (n *Net) Send(src, dest string, body json.RawMessage) (Message, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.check("src", src); err != nil {
		return Message{}, err
	}
	if err := n.check("dest", dest); err != nil {
		return Message{}, err
	}
	m := Message{ID: n.nextID, Src: src, Dest: dest, Body: body}
	n.nextID++
	var delay time.Duration
	betweenNodes := !IsClient(src) && !IsClient(dest)
	if betweenNodes {
		delay = n.latency.sample(n.rng)
	}
	in := n.inboxes[dest]
	n.note(m, sent)
	if f, faulty := n.packet[src]; faulty && betweenNodes {
		n.sendFaulty(in, m, delay, f)
	} else {
		n.push(in, m, delay)
	}
	return m, nil
}

// push queues m on in for delivery after delay and wakes the receiver.
// The network's lock is held.
func (n *Net) push(in *inbox, m Message, delay time.Duration) {
	heap.Push(&in.queue, pending{deadline: time.Now().Add(delay), msg: m})
	select {
	case in.ready <- struct{}{}:
	default: // the receiver has already been told the inbox is not empty
	}
}

// check validates one endpoint name of a message being sent.
func (n *Net) check(role, name string) error {
	if _, ok := n.inboxes[name]; ok {
		return nil
	}
	if n.closed[name] {
		return fmt.Errorf("%s %q: %w", role, name, ErrClosedClient)
	}
	return fmt.Errorf("%s %q: %w", role, name, ErrUnknown)
}

// Recv is the delivery loop step of endpoint name: it waits for a
// message, takes the inbox head, drops it if name's drop set holds its
// source, and otherwise waits until the head's deadline and returns it.
// It returns ctx's error when ctx ends, and ErrClosedClient when the
// endpoint is closed. One goroutine per endpoint calls Recv.
func (n *Net) Recv(ctx context.Context, name string) (Message, error) {
	for {
		p, in, err := n.take(ctx, name)
		if err != nil {
			return Message{}, err
		}
		if p.dropped {
			continue
		}
		if err := n.waitUntil(ctx, in, p.deadline); err != nil {
			return Message{}, err
		}
		n.mu.Lock()
		n.note(p.msg, delivered)
		n.mu.Unlock()
		return p.msg, nil
	}
}

// RecvReady is Recv without waiting: it returns name's next message if
// one is due now (queued, and its delivery deadline passed), skipping
// (and counting) heads name drops, and ok false otherwise. A receiver
// that writes each delivery into a pipe calls it after Recv to hand
// every message already due over in one write, in the order Recv would
// have returned them.
func (n *Net) RecvReady(name string) (m Message, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	in := n.inboxes[name]
	if in == nil {
		return Message{}, false
	}
	now := time.Now()
	for in.queue.Len() > 0 && !in.queue[0].deadline.After(now) {
		if p := n.pop(in, name); !p.dropped {
			n.note(p.msg, delivered)
			return p.msg, true
		}
	}
	return Message{}, false
}

// take waits until name's inbox is non-empty and pops its head, marking
// it dropped (and counting the drop) when the receiver drops its source.
// It returns the inbox too, whose timer the delivery waits on.
func (n *Net) take(ctx context.Context, name string) (pending, *inbox, error) {
	for {
		n.mu.Lock()
		in := n.inboxes[name]
		if in == nil {
			n.mu.Unlock()
			return pending{}, nil, n.check("receiver", name)
		}
		if in.queue.Len() > 0 {
			p := n.pop(in, name)
			n.mu.Unlock()
			return p, in, nil
		}
		n.mu.Unlock()
		select {
		case <-in.ready:
		case <-in.done:
			return pending{}, nil, fmt.Errorf("receiver %q: %w", name, ErrClosedClient)
		case <-ctx.Done():
			return pending{}, nil, ctx.Err()
		}
	}
}

// pop takes the head of name's inbox, marking it dropped (and counting
// the drop) when name drops its source. The network's lock is held.
func (n *Net) pop(in *inbox, name string) pending {
	p := heap.Pop(&in.queue).(pending)
	if n.drops[name][p.msg.Src] {
		p.dropped = true
		n.note(p.msg, dropped)
	}
	return p
}

// Drop makes dest drop every message from src, from its next dequeue on.
func (n *Net) Drop(src, dest string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	set := n.drops[dest]
	if set == nil {
		set = map[string]bool{}
		n.drops[dest] = set
	}
	set[src] = true
}

// Partition applies a grudge: for each receiver, the senders it drops. It
// adds to the current drop sets, as Jepsen's drop-all! does.
func (n *Net) Partition(grudge map[string][]string) {
	for dest, srcs := range grudge {
		for _, src := range srcs {
			n.Drop(src, dest)
		}
	}
}

// Heal clears every drop set at once.
func (n *Net) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.drops = map[string]map[string]bool{}
}

// Drops returns the current drop sets (receiver -> sorted senders), for
// reports and tests.
func (n *Net) Drops() map[string][]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string][]string{}
	for dest, set := range n.drops {
		for src := range set {
			out[dest] = append(out[dest], src)
		}
		sort.Strings(out[dest])
	}
	return out
}

// Stats returns a copy of the message statistics so far.
func (n *Net) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// inbox is one receiver's queue with its wake-up channels.
type inbox struct {
	queue pendingHeap
	ready chan struct{} // capacity 1: "the queue may be non-empty"
	done  chan struct{} // closed when the endpoint is closed
	timer kernelTimer   // the receiver's precise wait (wait.go)
}

func newInbox() *inbox {
	return &inbox{ready: make(chan struct{}, 1), done: make(chan struct{})}
}

// pending is a queued message with its delivery deadline.
type pending struct {
	deadline time.Time
	msg      Message
	dropped  bool
}

// pendingHeap orders messages by deadline, then by id (send order).
type pendingHeap []pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if !h[i].deadline.Equal(h[j].deadline) {
		return h[i].deadline.Before(h[j].deadline)
	}
	return h[i].msg.ID < h[j].msg.ID
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	last := old[len(old)-1]
	*h = old[:len(old)-1]
	return last
}
