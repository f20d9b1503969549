package fakelease

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Node is one fake member.
type Node struct {
	c   *Cluster
	ID  string // n1, n2, ...
	URL string // its client URL

	addr    string // where it listens; kept across Restart
	mu      sync.Mutex
	srv     *http.Server
	killed  chan struct{} // closed when the process dies
	faults  []Fault
	latIn   time.Duration
	latOut  time.Duration
	alive   atomic.Bool
	stalled atomic.Bool
}

// Fault is what one request meets at a member. Zero fields do nothing.
type Fault struct {
	// Op limits the fault to one request type (e.g. "lease_renew"); ""
	// takes the next request of any type.
	Op string
	// Status answers with this status instead of the model's answer: 503
	// (code 11, with Retry-After), 504 (code 0), or any other.
	Status int
	// RetryAfter is a 503's Retry-After header; "" means "1".
	RetryAfter string
	// Reset cuts the connection instead of answering.
	Reset bool
	// BreakOff performs the request and starts the answer (status line,
	// headers with the full Content-Length, half the body), then cuts the
	// connection: an answer that broke off.
	BreakOff bool
	// Apply performs the request before the Status or Reset: the member
	// acted, the client cannot know it.
	Apply bool
	// DelayIn waits before performing the request; DelayOut after it,
	// before answering (the answer's expires_in_ms is measured before).
	DelayIn, DelayOut time.Duration
}

// Inject queues faults; each is used by one matching request, in order.
func (n *Node) Inject(faults ...Fault) {
	n.mu.Lock()
	n.faults = append(n.faults, faults...)
	n.mu.Unlock()
}

// ClearFaults drops the queued faults.
func (n *Node) ClearFaults() {
	n.mu.Lock()
	n.faults = nil
	n.mu.Unlock()
}

// SetLatency delays every request: in before it is performed, out before
// its answer is written.
func (n *Node) SetLatency(in, out time.Duration) {
	n.mu.Lock()
	n.latIn, n.latOut = in, out
	n.mu.Unlock()
}

// StallMaster stops (true) or resumes (false) the member's renewals of
// its master lease, as if it could not reach a majority.
func (n *Node) StallMaster(stalled bool) { n.stalled.Store(stalled) }

// Alive reports whether the member runs.
func (n *Node) Alive() bool { return n.alive.Load() }

func (n *Node) canRenew() bool { return n.alive.Load() && !n.stalled.Load() }

// Kill is the process dying: the listener closes, every connection
// breaks (requests in flight are cut, performed or not), and the member
// forgets its master campaign; connections are refused until Restart.
func (n *Node) Kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.alive.Load() {
		return
	}
	n.alive.Store(false)
	close(n.killed)
	n.srv.Close()
	n.c.mu.Lock()
	n.c.master.wanted[n.ID] = false
	n.c.mu.Unlock()
}

// Restart starts a killed member again at the same address.
func (n *Node) Restart() error {
	if n.alive.Load() {
		return nil
	}
	return n.listen()
}

// listen starts serving on n.addr (a fresh address the first time).
func (n *Node) listen() error {
	var ln net.Listener
	var err error
	if n.c.pipes != nil {
		if n.addr == "" {
			n.addr = n.ID + ".fake:80"
		}
		ln = n.c.pipes.listen(n.addr)
	} else {
		addr := n.addr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return err
		}
		n.addr = ln.Addr().String()
	}
	if n.URL == "" {
		n.URL = "http://" + n.addr
	}
	srv := &http.Server{Handler: n, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}
	n.mu.Lock()
	n.srv, n.killed = srv, make(chan struct{})
	n.alive.Store(true)
	n.mu.Unlock()
	go srv.Serve(ln)
	return nil
}

// takeFault pops the first queued fault for op.
func (n *Node) takeFault(op string) Fault {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, f := range n.faults {
		if f.Op == "" || f.Op == op {
			n.faults = append(n.faults[:i:i], n.faults[i+1:]...)
			f.DelayIn += n.latIn
			f.DelayOut += n.latOut
			return f
		}
	}
	return Fault{DelayIn: n.latIn, DelayOut: n.latOut}
}

// pause waits d; false when the member dies or the client leaves first.
func (n *Node) pause(d time.Duration, killed, gone <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-killed:
	case <-gone:
	}
	return false
}
