package fakelease

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// Network is where the members listen.
type Network uint8

const (
	// Loopback: real HTTP on 127.0.0.1, random ports.
	Loopback Network = iota
	// Pipe: an in-memory network for testing/synctest bubbles; clients
	// dial through Cluster.DialContext.
	Pipe
)

// Options shape a fake cluster; zero fields take the defaults.
type Options struct {
	Nodes          int     // members; default 3
	Network        Network // default Loopback
	DefaultLeaseMs int64   // T when a request names none; default 60000
	MaxLeaseMs     int64   // M; default 60000
	MasterLeaseMs  int64   // the master lease's length; default 1000
	Token          string  // the bearer token asked for; "" asks none
	ClockRate      float64 // the cluster's clock rate against the caller's; default 1
	FirstToken     int64   // tokens start above it; default 1000
	// Batch serves POST /v1/batch (the members' batch endpoint); without
	// it a member answers 404 there, as one without the endpoint would.
	Batch bool
}

// Cluster is a running fake cluster.
type Cluster struct {
	t     testing.TB
	opts  Options
	pipes *pipeNet
	nodes []*Node

	mu        sync.Mutex
	chunks    map[string]*record
	nextToken int64
	master    masterState
	calls     []Call
	handlers  sync.WaitGroup
}

// Call is one request a member received, as the log records it.
type Call struct {
	Node     string // the member's id, n1...
	Op       string // the request type, e.g. lease_renew
	Chunk    string
	Server   string
	LeaseMs  int64
	Token    int64     // a release's token, or the token a grant or renew made
	At       time.Time // when the member performed it (or refused it)
	Status   int       // the status answered; 0 when the connection was cut
	Applied  bool      // the model performed it
	Received time.Time // when the request arrived
	// Batched: the call came in a batch; the batch request itself is
	// logged too, as Op "batch" with the number of its calls in Calls.
	Batched bool
	Calls   int
	// Chunks: a batch request's calls' chunks, in order.
	Chunks []string
	// Cut: the member cut the connection or broke its answer off (a
	// Reset or BreakOff fault): the client got no answer it could read.
	Cut bool
}

// Start starts a fake cluster; t's cleanup stops it.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	opts.DefaultLeaseMs = or(opts.DefaultLeaseMs, 60000)
	opts.MaxLeaseMs = or(opts.MaxLeaseMs, 60000)
	opts.MasterLeaseMs = or(opts.MasterLeaseMs, 1000)
	opts.FirstToken = or(opts.FirstToken, 1000)
	if opts.ClockRate == 0 {
		opts.ClockRate = 1
	}
	c := &Cluster{t: t, opts: opts, chunks: map[string]*record{}, nextToken: opts.FirstToken,
		master: masterState{wanted: map[string]bool{}}}
	if opts.Network == Pipe {
		c.pipes = &pipeNet{listeners: map[string]*pipeListener{}}
	}
	for i := range opts.Nodes {
		n := &Node{c: c, ID: fmt.Sprintf("n%d", i+1)}
		c.nodes = append(c.nodes, n)
		if err := n.listen(); err != nil {
			t.Fatalf("fake member %s: %v", n.ID, err)
		}
	}
	t.Cleanup(c.Close)
	return c
}

func or(v, def int64) int64 {
	if v != 0 {
		return v
	}
	return def
}

// Close stops every member and waits for their handlers.
func (c *Cluster) Close() {
	for _, n := range c.nodes {
		n.Kill()
	}
	c.handlers.Wait()
}

// Endpoints are the members' client URLs, in member order.
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.URL
	}
	return out
}

// Node is member i (0-based).
func (c *Cluster) Node(i int) *Node { return c.nodes[i] }

func (c *Cluster) byID(id string) *Node {
	for _, n := range c.nodes {
		if n.ID == id {
			return n
		}
	}
	panic("fakelease: no member " + id)
}

// DialContext dials a member over the Pipe network (nil for Loopback).
func (c *Cluster) DialContext() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.pipes == nil {
		return nil
	}
	return c.pipes.dial
}

// Holding is a chunk's record as the model has it now.
type Holding struct {
	Server string
	Token  int64
	End    time.Time // on the caller's clock
	Live   bool
}

// Holder returns chunk's record.
func (c *Cluster) Holder(chunk string) Holding {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.chunks[chunk]
	if rec == nil {
		return Holding{}
	}
	return Holding{Server: rec.server, Token: rec.token, End: rec.end, Live: rec.live(time.Now())}
}

// Steal gives chunk to server for leaseMs (of the cluster's clock) at
// once, with a new token, whoever held it: what another server's grant
// would do after the holder's lease ran out.
func (c *Cluster) Steal(chunk, server string, leaseMs int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextToken++
	c.chunks[chunk] = &record{server: server, token: c.nextToken, end: time.Now().Add(c.realDuration(leaseMs))}
	return c.nextToken
}

// Master is the master lease's holder now ("" for none) and its end.
func (c *Cluster) Master() (string, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.masterTick(time.Now())
	return c.master.holder, c.master.end
}

// MasterToken is the token of the master lease's latest instance (0
// before the first), from the counter the chunk tokens come from.
func (c *Cluster) MasterToken() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.masterTick(time.Now())
	return c.master.token
}

// Calls returns the log so far.
func (c *Cluster) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Call(nil), c.calls...)
}

// CallsOf returns the logged calls of one request type.
func (c *Cluster) CallsOf(op string) []Call {
	var out []Call
	for _, call := range c.Calls() {
		if call.Op == op {
			out = append(out, call)
		}
	}
	return out
}

func (c *Cluster) logCall(call Call) {
	c.mu.Lock()
	c.calls = append(c.calls, call)
	c.mu.Unlock()
}
