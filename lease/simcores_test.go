package lease_test

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"chunklease/lease"
)

// Members of several cores (doc.go "Cores sharing one member"). A third
// of the schedules run members whose lease state is split over up to 2-4
// cores, each member drawing its number at every start (so members of
// different numbers talk to each other, and a restart may change it),
// with a few more chunks so that the cores share the load. The world
// drives a member's cores as the serve shell does (simMember): a client
// request goes to its chunk's core, a peer message to the core
// lease.Route names or to every core, and each core wakes at its own
// wake-up. -loops sets the number for every schedule instead. A
// configuration one core adopts is handed to the others, as the serve
// shell does, after a delay the schedule draws (doc.go "Membership and
// cores").

var simLoops = flag.Int("loops", 0, "cores a member runs: 0 a third of the schedules draw members of several; 1 one core everywhere; "+
	"N > 1 every member of every schedule runs 2..N, drawn at each start (the soak with several loops per member)")

// withLoops draws the schedule's cores per member, after its profile,
// from a stream of its own, so that the other settings of a seed are
// what they were before cores existed: the most and the fewest cores a
// member runs, and a few more chunks for members of several.
func (s *scenario) withLoops() {
	switch *simLoops {
	case 0:
	case 1:
		s.loops, s.minLoops = 1, 1
		return
	default:
		s.loops, s.minLoops = *simLoops, 2
		s.drawSpread(rand.New(rand.NewPCG(s.seed, 0x5b7ead)))
		return
	}
	rng := rand.New(rand.NewPCG(s.seed, 0x100b5))
	if rng.IntN(3) > 0 {
		s.loops, s.minLoops = 1, 1
		return
	}
	s.loops, s.minLoops = 2+rng.IntN(3), 1
	s.chunks += rng.IntN(4)
	s.drawSpread(rng)
	s.drawAlike()
}

// drawSpread draws how long a configuration takes to reach a member's
// other cores: at once, within a millisecond or ten (a loop finishing an
// event), within half a lease (a loop held up), or within three leases (a
// loop busy for seconds: a long batch, a process that the scheduler
// starves).
func (s *scenario) drawSpread(rng *rand.Rand) {
	s.spreadMax = []time.Duration{0, time.Millisecond, 10 * time.Millisecond,
		time.Duration(s.leaseMs/2) * time.Millisecond, time.Duration(3*s.leaseMs) * time.Millisecond}[rng.IntN(5)]
}

// drawAlike runs every member on the same number of cores (identical
// machines, each serve shell on GOMAXPROCS loops) in half the schedules
// with members of several, from a stream of its own. Then a chunk has the
// same core index at every member, and while a configuration has reached
// only the leads (a commit names no chunk), no proposer or acceptor of a
// chunk served off the lead holds it: only the shell's spread or a
// change's own prepare brings it there (doc.go "Membership and cores").
func (s *scenario) drawAlike() {
	if s.loops > 1 && rand.New(rand.NewPCG(s.seed, 0xa11e)).IntN(2) == 0 {
		s.minLoops = s.loops
	}
}

// drawCores is how many cores a member runs at one start.
func (w *world) drawCores() int {
	if w.sc.loops <= 1 {
		return 1
	}
	return w.sc.minLoops + w.coreRng.IntN(w.sc.loops-w.sc.minLoops+1)
}

// coreRand is core c's random source: core 0's is what a member of one
// core always had, so that such schedules replay as before.
func (w *world) coreRand(i int, inc int64) func(c int) *rand.Rand {
	return func(c int) *rand.Rand {
		return rand.New(rand.NewPCG(w.sc.seed^uint64(c)<<56, uint64(i)<<32|uint64(inc)))
	}
}

// simMember is one member's cores. Its Output merges what its cores
// said in one step; Wake is the earliest of every core's wake-up.
type simMember struct {
	cores []*lease.Node
	wakes []time.Duration // each core's latest wake-up, on the member's clock
	out   lease.Output
}

func newSimMember(cores []*lease.Node) *simMember {
	return &simMember{cores: cores, wakes: make([]time.Duration, len(cores))}
}

// Request hands a client request to its chunk's core.
func (m *simMember) Request(now time.Duration, r lease.Request) *lease.Output {
	c := lease.CoreOf(r.Chunk, len(m.cores))
	if len(m.cores) == 1 {
		return m.cores[0].Request(now, r)
	}
	m.begin()
	m.add(c, m.cores[c].Request(now, r))
	return m.end()
}

// Receive hands a peer message to the core Route names, or to each core.
func (m *simMember) Receive(now time.Duration, msg lease.Msg) *lease.Output {
	if len(m.cores) == 1 {
		return m.cores[0].Receive(now, msg)
	}
	m.begin()
	c, every := lease.Route(&msg, len(m.cores))
	for k, core := range m.cores {
		if every || k == c {
			m.add(k, core.Receive(now, msg))
		}
	}
	return m.end()
}

// Tick lets time pass at every core whose wake-up is due (each core
// keeps its own timer, as each loop of the serve shell does).
func (m *simMember) Tick(now time.Duration) *lease.Output {
	if len(m.cores) == 1 {
		return m.cores[0].Tick(now)
	}
	m.begin()
	for k, core := range m.cores {
		if m.wakes[k] <= now {
			m.add(k, core.Tick(now))
		}
	}
	return m.end()
}

func (m *simMember) begin() {
	m.out.Msgs, m.out.Replies, m.out.Logs = m.out.Msgs[:0], m.out.Replies[:0], m.out.Logs[:0]
	m.out.Adopted = nil
}

// add takes core k's output in before the core's next call reuses it.
func (m *simMember) add(k int, o *lease.Output) {
	m.out.Msgs = append(m.out.Msgs, o.Msgs...)
	m.out.Replies = append(m.out.Replies, o.Replies...)
	m.out.Logs = append(m.out.Logs, o.Logs...)
	if o.Adopted != nil && (m.out.Adopted == nil || o.Adopted.Epoch > m.out.Adopted.Epoch) {
		m.out.Adopted = o.Adopted
	}
	m.wakes[k] = o.Wake
}

// Spread hands configuration c, which one core adopted, to every core
// (each adopts it if it is newer), then tells the lead that every core
// holds it, which starts its waiting rule again (Node.Adopt), as the
// serve shell does.
func (m *simMember) Spread(now time.Duration, c lease.Membership) *lease.Output {
	m.begin()
	for k, core := range m.cores {
		m.add(k, core.Adopt(now, c))
	}
	m.add(0, m.cores[0].Adopt(now, c))
	return m.end()
}

// spreadLater schedules the spread of a configuration one core of member
// i adopted to its other cores, within the schedule's spreadMax (the
// serve shell's loops take it between two events).
func (w *world) spreadLater(i int, c *lease.Membership) {
	n := w.nodes[i]
	if c == nil || w.spreading || n.core == nil || len(n.core.cores) == 1 {
		return
	}
	conf := *c
	delay := time.Duration(0)
	if w.sc.spreadMax > 0 {
		delay = time.Duration(w.coreRng.Int64N(int64(w.sc.spreadMax) + 1))
	}
	w.push(event{at: w.now + delay, kind: evSpread, node: i, conf: &conf})
}

// spread hands a configuration to every core of a member (Spread); a
// paused process does it once it runs again, a crashed one never.
func (w *world) spread(e event) {
	n := w.nodes[e.node]
	switch {
	case n.core == nil:
		return
	case n.paused:
		e.at = w.now + time.Millisecond
		w.push(e)
		return
	}
	w.spreading = true
	w.absorb(e.node, n.core.Spread(n.local(w.now), *e.conf))
	w.spreading = false
}

func (m *simMember) end() *lease.Output {
	m.out.Wake = lease.Never
	for _, w := range m.wakes {
		m.out.Wake = min(m.out.Wake, w)
	}
	return &m.out
}

// Booting reports whether the member's acceptor is in its boot wait (one
// for all its cores: they start together).
func (m *simMember) Booting(now time.Duration) bool { return m.cores[0].Booting(now) }

// Recovering reports whether any core still recovers.
func (m *simMember) Recovering() bool {
	for _, c := range m.cores {
		if c.Recovering() {
			return true
		}
	}
	return false
}

// ServedUnrecovered reports whether any core served before it recovered.
func (m *simMember) ServedUnrecovered() bool {
	for _, c := range m.cores {
		if c.ServedUnrecovered() {
			return true
		}
	}
	return false
}

// TestMembershipSchedulesRunSeveralCores: the simulation draws
// membership on members of several cores (doc.go "Membership and
// cores") as often as without it, and -loops N puts those schedules on
// 2..N cores too.
func TestMembershipSchedulesRunSeveralCores(t *testing.T) {
	saved := *simLoops
	defer func() { *simLoops = saved }()
	for _, loops := range []int{0, 4} {
		*simLoops = loops
		member, several := 0, 0
		for seed := uint64(1); seed <= 2000; seed++ {
			s := drawScenario(seed, "none")
			if s.membership {
				member++
				if s.loops > 1 {
					several++
				}
			}
		}
		if member == 0 || several == 0 || loops > 1 && several != member {
			t.Errorf("-loops %d: of %d schedules with membership in 2000, %d on several cores", loops, member, several)
		}
	}
}
