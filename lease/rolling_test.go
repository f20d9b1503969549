package lease_test

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"chunklease/lease"
)

// A rolling restart, as an operator does it with the service: three
// members, each restarted in turn with the default boot wait, the next
// once the previous serves again. Meanwhile a holder keeps its lease the
// way client.Session does (a renewal at a third of the lease, through
// the member it last used, failing over at once to the next live one,
// and again at once when a renewal fails or gets no answer within half
// the time left, until the lease it was told about runs out), and a standby asks for the same chunk again and again
// through every live member in turn. With two members serving at every
// instant, the holder must never lose its lease, and the standby must
// never be granted the chunk.

// rollingCluster drives three cores over a network with a fixed one-way
// delay, in simulated time, deterministically from its seed.
type rollingCluster struct {
	t     *testing.T
	seed  uint64
	now   time.Duration
	delay time.Duration
	ids   []string
	nodes []*rollingNode
	queue rollingQueue
	seq   int
	reqID uint64
	// waiting maps a request id to the callback of its reply.
	waiting map[uint64]func(lease.Reply)
	log     []string
	// quiet: the clients send no more requests.
	quiet bool
}

type rollingNode struct {
	core   *lease.Node
	up     bool
	wakeAt time.Duration
	gen    int // incarnation count, so that old wakes are ignored
}

const (
	rollingLeaseMs = 1000
	rollingBootMs  = 1000
)

func newRollingCluster(t *testing.T, seed uint64) *rollingCluster {
	c := &rollingCluster{t: t, seed: seed, delay: 500 * time.Microsecond, ids: []string{"n1", "n2", "n3"}, waiting: map[uint64]func(lease.Reply){}}
	for i := range c.ids {
		c.nodes = append(c.nodes, &rollingNode{})
		c.start(i, 0)
	}
	return c
}

// start boots node i with the given boot wait.
func (c *rollingCluster) start(i int, bootWaitMs int64) {
	n := c.nodes[i]
	n.gen++
	inc := int64(c.now/time.Microsecond) + 1 + int64(i)
	core, err := lease.NewNode(lease.Config{ID: c.ids[i], Acceptors: c.ids, Nodes: c.ids, Incarnation: inc, Nonce: uint64(n.gen*10 + i),
		WallMs: 1_763_856_000_000 + c.now.Milliseconds(), DefaultLeaseMs: rollingLeaseMs, MaxLeaseMs: rollingLeaseMs, BootWaitMs: bootWaitMs,
		Rand: rand.New(rand.NewPCG(c.seed, uint64(i)<<32|uint64(n.gen)))}, c.now)
	if err != nil {
		c.t.Fatal(err)
	}
	n.core, n.up, n.wakeAt = core, true, -1
	c.absorb(i, core.Tick(c.now))
}

// kill stops node i: it answers nothing until started again.
func (c *rollingCluster) kill(i int) { c.nodes[i].up = false }

type rollingEvent struct {
	at  time.Duration
	seq int
	f   func()
}

type rollingQueue []rollingEvent

func (q rollingQueue) Len() int { return len(q) }
func (q rollingQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q rollingQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *rollingQueue) Push(x any)   { *q = append(*q, x.(rollingEvent)) }
func (q *rollingQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// at runs f at time t.
func (c *rollingCluster) at(t time.Duration, f func()) {
	c.seq++
	heap.Push(&c.queue, rollingEvent{at: t, seq: c.seq, f: f})
}

// runUntil handles every event up to end.
func (c *rollingCluster) runUntil(end time.Duration) {
	for c.queue.Len() > 0 && c.queue[0].at <= end {
		e := heap.Pop(&c.queue).(rollingEvent)
		c.now = e.at
		e.f()
	}
	c.now = end
}

// absorb carries out one output of node i: messages after the delay,
// replies to their callbacks, the next wake-up.
func (c *rollingCluster) absorb(i int, out *lease.Output) {
	n := c.nodes[i]
	for _, m := range out.Msgs {
		to := c.index(m.To)
		c.at(c.now+c.delay, func() {
			if dst := c.nodes[to]; dst.up {
				c.absorb(to, dst.core.Receive(c.now, m))
			}
		})
	}
	for _, r := range out.Replies {
		if f := c.waiting[r.ID]; f != nil {
			delete(c.waiting, r.ID)
			rep := r
			c.at(c.now+c.delay, func() { f(rep) })
		}
	}
	if out.Wake != lease.Never && out.Wake != n.wakeAt {
		n.wakeAt = out.Wake
		gen := n.gen
		c.at(max(out.Wake, c.now), func() {
			if n.up && n.gen == gen && n.wakeAt == out.Wake {
				n.wakeAt = -1
				c.absorb(i, n.core.Tick(c.now))
			}
		})
	}
}

func (c *rollingCluster) index(id string) int {
	for i, x := range c.ids {
		if x == id {
			return i
		}
	}
	panic(id)
}

// request sends r to node i after the client's delay; done gets the
// reply, or nothing if the node is down (the client's timeout says so).
func (c *rollingCluster) request(i int, r lease.Request, done func(lease.Reply)) uint64 {
	c.reqID++
	r.ID = c.reqID
	c.waiting[r.ID] = done
	c.at(c.now+c.delay, func() {
		if n := c.nodes[i]; n.up {
			c.absorb(i, n.core.Request(c.now, r))
		}
	})
	return r.ID
}

// serving reports whether node i runs and is past its boot wait.
func (c *rollingCluster) serving(i int) bool {
	n := c.nodes[i]
	return n.up && c.now >= n.core.BootUntil()
}

func (c *rollingCluster) logf(format string, args ...any) {
	c.log = append(c.log, fmt.Sprintf("%8.3fs ", c.now.Seconds())+fmt.Sprintf(format, args...))
}

// rollingHolder keeps cs1's lease of chunk "c" as client.Session does.
type rollingHolder struct {
	c       *rollingCluster
	member  int
	until   time.Duration // the end of the lease it was told about
	lost    time.Duration // when it lost the lease; -1 while it holds
	renewed int
}

func (h *rollingHolder) renew() {
	c := h.c
	if h.lost >= 0 || c.quiet {
		return
	}
	if c.now >= h.until {
		h.lost = c.now
		c.logf("holder: lease lost (it ended at %v)", h.until)
		return
	}
	for k := 0; k < len(c.ids) && !c.nodes[h.member].up; k++ {
		h.member = (h.member + 1) % len(c.ids) // connection refused: the next member
	}
	invoked, member := c.now, h.member
	c.logf("holder: renew through %s", c.ids[member])
	id := c.request(member, lease.Request{Op: lease.OpRenew, Chunk: "c", Server: "cs1", LeaseMs: rollingLeaseMs}, func(r lease.Reply) {
		if r.Err != nil {
			c.logf("holder: renew through %s failed: %s", c.ids[member], r.Err.Text)
			h.member = (member + 1) % len(c.ids)
			h.renew()
			return
		}
		ok := r.Body.(lease.RenewOK)
		h.until = max(h.until, invoked+time.Duration(ok.NewExpiresInMs)*time.Millisecond)
		c.logf("holder: renewed through %s until %v", c.ids[member], h.until)
		h.renewed++
		c.at(c.now+rollingLeaseMs*time.Millisecond/3, h.renew)
	})
	// No answer (the member went down with the request): the client's
	// attempt times out and it fails over to the next member. As
	// client.Client does, an attempt gets half the time left before the
	// lease ends (at least 20 ms, at most 3 s).
	c.at(c.now+min(max((h.until-c.now)/2, 20*time.Millisecond), 3*time.Second), func() {
		if c.waiting[id] != nil {
			delete(c.waiting, id)
			h.member = (member + 1) % len(c.ids)
			h.renew()
		}
	})
}

// TestRollingRestartKeepsTheHolder: the holder alone (a control for the
// model: a Session that fails over within its lease keeps it).
func TestRollingRestartKeepsTheHolder(t *testing.T) {
	rollingRestarts(t, 0)
}

// TestRollingRestartKeepsTheHolderFromAStandby: a standby asks for the
// chunk every 1 to 20 ms through each member in turn. Before, it took the
// chunk in every run: its grant through the holder's member waited a
// round for an acceptor that was down (its answer could have been open)
// while the holder's renewal waited behind it at that member; the grants
// queued behind took every request slot of the member, so the renewal
// could not even start; and a restarted acceptor, holding no record,
// promised the standby's prepares, which the holder's renewal had to
// outbid over and over. Now the holder goes first (holderFirst), a
// chunk's queue holds one slot (admission.go), and the holder's fast
// renewal teaches its lease to an acceptor that missed it (onPropose).
func TestRollingRestartKeepsTheHolderFromAStandby(t *testing.T) {
	for _, poll := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		rollingRestarts(t, poll)
	}
}

// TestRollingRestartStandbyStickyPromise replays, every run, seeds whose
// restarts once cost the holder its lease (the random bases above hit
// them only now and then). Seed 662254690, standby every 1 ms: n1 has
// restarted (no record of cs1's lease) and n2 is down. The standby's
// grants through n1 and n2 find cs1's lease live at n3 but are promised
// by n1, which makes each promise sticky; the holder's renewal through
// n3 had its fast propose refused by n1 (a standby's higher promise) and
// waited a round for the silent n2, and its renewal through n1 was
// refused by n1's sticky promise for the standby and waited for n2 in
// its boot wait: the lease ran out. Now a prepare that learns another
// server's lease outlasts its sticky promises cancels them at once
// (dropStickyForHolder), and a fast propose refused for a higher promise
// falls back to prepare at once (onProposeResp).
func TestRollingRestartStandbyStickyPromise(t *testing.T) {
	for _, seed := range []uint64{662254690} {
		if log, err := rollingRestart(t, seed, time.Millisecond); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, strings.Join(log, "\n"))
		}
	}
}

// rollingRestarts runs rolling restarts from seeds, with a standby
// asking every poll (0: none), and fails at the first that goes wrong.
func rollingRestarts(t *testing.T, poll time.Duration) {
	t.Helper()
	base := uint64(rand.Uint32())
	if *simSeed != 0 {
		base = *simSeed
	}
	runs := uint64(20)
	if raceEnabled {
		runs = 4
	}
	t.Logf("seeds %d to %d, standby every %v (replay one: -seed S)", base, base+runs-1, poll)
	for seed := base; seed < base+runs; seed++ {
		if log, err := rollingRestart(t, seed, poll); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, strings.Join(log, "\n"))
		}
	}
}

// rollingRestart runs one rolling restart with a standby asking every
// poll (0: none); it returns the log and what went wrong. The seed draws
// the member the holder starts with, when the restarts begin, how long
// each member stays down and how long the operator waits after each.
func rollingRestart(t *testing.T, seed uint64, poll time.Duration) ([]string, error) {
	c := newRollingCluster(t, seed)
	rng := rand.New(rand.NewPCG(seed, 0x4011))
	h := &rollingHolder{c: c, lost: -1, member: rng.IntN(3)}
	var granted error
	c.request(h.member, lease.Request{Op: lease.OpGrant, Chunk: "c", Server: "cs1", LeaseMs: rollingLeaseMs}, func(r lease.Reply) {
		g := r.Body.(lease.GrantOK)
		h.until = time.Duration(g.ExpiresInMs) * time.Millisecond
		c.at(c.now+rollingLeaseMs*time.Millisecond/3, h.renew)
	})
	// The standby, through each live member in turn.
	next := 0
	var ask func()
	ask = func() {
		if c.quiet {
			return
		}
		for k := 0; k < 3 && !c.nodes[next].up; k++ {
			next = (next + 1) % 3
		}
		via := next
		next = (next + 1) % 3
		c.request(via, lease.Request{Op: lease.OpGrant, Chunk: "c", Server: "cs2", LeaseMs: rollingLeaseMs}, func(r lease.Reply) {
			if r.Err == nil && r.Body.(lease.GrantOK).Primary == "cs2" && granted == nil {
				granted = fmt.Errorf("the standby cs2 was granted the chunk through %s at %v while cs1 held it until %v", c.ids[via], c.now, h.until)
				c.logf("standby: granted")
			}
		})
		c.at(c.now+poll, ask)
	}
	if poll > 0 {
		c.at(200*time.Millisecond, ask)
	}
	// Restart n1, n2, n3 in turn, each once the previous serves again.
	ms := func(lo, hi int64) time.Duration { return time.Duration(lo+rng.Int64N(hi-lo+1)) * time.Millisecond }
	restartAt := ms(400, 900)
	for i := range 3 {
		c.runUntil(restartAt)
		c.kill(i)
		c.logf("%s killed", c.ids[i])
		c.runUntil(restartAt + ms(1, 300))
		c.start(i, rollingBootMs)
		c.logf("%s started (boot wait until %v)", c.ids[i], c.nodes[i].core.BootUntil())
		restartAt = c.nodes[i].core.BootUntil() + ms(0, 400)
	}
	c.runUntil(restartAt + 2*time.Second)
	switch {
	case h.lost >= 0:
		return c.log, fmt.Errorf("the holder lost its lease at %v after %d renewals during a rolling restart", h.lost, h.renewed)
	case granted != nil:
		return c.log, granted
	}
	// The clients stop; once every request has had its quorum timeout,
	// every request slot must be free again (a chunk's queue passes its
	// slot on, and the holder's request takes the slot of the one it
	// goes before: none may be lost or counted twice).
	c.quiet = true
	c.runUntil(c.now + 5*time.Second)
	for i, n := range c.nodes {
		if slots := n.core.SlotsTaken(); slots != 0 || n.core.Pending() != 0 {
			return c.log, fmt.Errorf("with every request answered %s has %d request slots taken and %d requests pending, want none", c.ids[i], slots, n.core.Pending())
		}
	}
	return c.log, nil
}
