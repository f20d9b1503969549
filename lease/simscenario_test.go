package lease_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// scenario is everything one simulated schedule is made of. Every field
// is drawn from the schedule's seed, so the seed alone replays it.
type scenario struct {
	seed      uint64
	profile   string // "mixed", "stale", "sites" or "clocks"
	nodes     int
	acceptors []int // the acceptor nodes, by index; nil: every node
	servers   int
	chunks    int
	workers   int
	leaseMs   int64
	// minLeaseMs is the shortest lease_ms a request asks for (0: the
	// workload's default, a quarter of leaseMs).
	minLeaseMs int64
	rate       float64
	duration   time.Duration
	latency    latency
	lossP      float64 // each message is lost with this probability
	dupP       float64 // ... delivered twice with this probability
	spikeP     float64 // ... held back up to spikeMax with this probability
	spikeMax   time.Duration
	partition  time.Duration // mean time between nemesis changes; 0: none
	hold       bool          // partitioned messages are held and delivered at heal, not dropped
	crash      time.Duration // mean time between crashes; 0: none
	storm      float64       // probability that a crash takes a majority down at once
	// wholeCluster makes every storm take the whole cluster down;
	// oneAtATime crashes a node only while no node is down or in its boot
	// wait (restarts one at a time). downMin and downMax bound a crashed
	// node's downtime (0: 50 ms to 50 ms + two lease lengths).
	wholeCluster, oneAtATime bool
	downMin, downMax         time.Duration
	oneVictim                bool          // every crash takes node n1, again and again
	pause                    time.Duration // mean time between process pauses; 0: none
	// dupClientP is the probability that a client request reaches a node
	// a second time, up to two client timeouts later.
	dupClientP float64
	// wallClock gives nodes a wall clock (the ballot counter's floor and
	// ceiling, and a restarted acceptor's floor), each off by up to
	// wallSkew; aheadSkew sets one node exactly that far ahead. Whether the
	// nodes' estimates (skew plus drift over their uptime) stayed within
	// the bound is measured while the schedule runs (world.offsets).
	wallClock bool
	wallSkew  time.Duration
	aheadSkew time.Duration
	behindAll bool // every other node wallSkew behind (not random)
	// assertFencing asserts the fencing rules even where the guarantee
	// does not hold (clocks beyond the bound and a restart that served
	// before it recovered): the beyond-the-bound negative control, in
	// which the node ahead has its clock set right when it restarts.
	assertFencing bool
	aheadFixed    bool
	// ballotUnit coarsens the counter's unit (0: BallotUnit), so that the
	// simulation's load drives counters against the lead bound.
	ballotUnit time.Duration
	// marginMs is the nodes' drift margin; clientsInMargin makes every
	// client's clock slower than rho by as much as the margin covers.
	marginMs        int64
	clientsInMargin bool
	// minorityCrashes keeps crashes to a minority of nodes at any time
	// (counting the ones still recovering): with wall clocks absent or
	// far apart, nothing but the surviving majority's promises orders
	// tokens after a restart (the contract's promise covers restarts of a
	// minority).
	minorityCrashes bool
	driftPPM        int64 // clock rates lie in [1-rho, 1+rho]
	clockEdge       bool  // every clock rate is exactly 1-rho or 1+rho
	clockFast       bool  // every node's clock rate is exactly 1+rho (simstretch_test.go)
	self            bool  // every node its own sole acceptor (unsafe)
	// Negative controls that are faults, not weakened rules: restarts
	// without the boot wait, and clients whose clocks run slower than the
	// bound the nodes assume.
	noBootWait    bool
	clientOutside bool
	balanced      bool // each request goes to a random live node, as through a load balancer
	// Two sites (profile "sites"): the acceptors form the main site, the
	// other nodes a remote one. Every message a remote node sends takes
	// uplink more (plus up to a tenth of it in jitter).
	uplink    time.Duration
	outage    time.Duration // mean time between main-site power losses; 0: none
	weakening string        // a rule switched off, or "none"
	// master runs the master workload (master_start, master_stop,
	// master_status) instead of the chunk-lease workload.
	master bool
	// copiesHome sends a client request's copy (dupClientP) to the node
	// the call went to; otherwise the copy reaches a random node, as a
	// client retrying through another node would (simclient_test.go).
	copiesHome bool
	// maxInFlight is the nodes' admission cap (0: the default). A third
	// of the schedules draw a cap of 1 to 4, so that requests wait for a
	// slot and some time out waiting (admission.go), under every fault.
	maxInFlight int
	// loops and minLoops are the most and the fewest cores a member runs
	// (1: one core each); each member draws its number in that range at
	// every start (simcores_test.go).
	loops, minLoops int
	// spreadMax bounds how long a configuration one core of a member
	// adopted takes to reach the member's other cores (simcores_test.go).
	spreadMax time.Duration
	// memberSettings: membership changes (simmember_test.go).
	memberSettings
}

// latency is a one-way message delay distribution.
type latency struct {
	kind string // constant, uniform or exponential
	mean time.Duration
}

func (l latency) draw(rng *rand.Rand) time.Duration {
	switch l.kind {
	case "uniform":
		return time.Duration(rng.Int64N(int64(2*l.mean) + 1))
	case "exponential":
		return time.Duration(rng.ExpFloat64() * float64(l.mean))
	}
	return l.mean
}

// drawScenario picks a schedule's shape. The ranges cover the faults the
// contract names: latency distributions, loss, duplication, reordering,
// symmetric and one-directional partitions, crash and restart with state
// loss, clock-rate error, wall clocks that disagree, and messages delayed
// past lease lengths (the stale proposes and releases the safety rules
// exist for). A tenth of the schedules are "mixed"; the other profiles
// aim faults where a rule is needed (stale 15%, sites 20%, clocks 12.5%,
// amnesia 12.5%, sequential 10%, load 7.5%, bootedge 5%, twice 5%,
// stretch 2.5%), and
// the negative controls that need one draw it alone (controls_test.go).
func drawScenario(seed uint64, weakening string) scenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := scenario{seed: seed, weakening: weakening, maxInFlight: drawCap(seed)}
	s.mixed(rng)
	if p, ok := pickProfile(rng.IntN(40)); ok {
		p(&s, rng)
	}
	drawMembership(seed, &s)
	s.withLoops()
	return s
}

// drawCap draws the admission cap from a stream of its own, so that the
// other settings of a seed are what they were before the cap was drawn.
func drawCap(seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 0xad317))
	if rng.IntN(3) > 0 {
		return 0
	}
	return 1 + rng.IntN(4)
}

// pickProfile maps a draw in 0..39 to a profile (false: stay mixed).
func pickProfile(r int) (func(*scenario, *rand.Rand), bool) {
	for _, p := range []struct {
		upTo    int
		profile func(*scenario, *rand.Rand)
	}{{6, (*scenario).stale}, {14, (*scenario).sites}, {19, (*scenario).clocks}, {24, (*scenario).amnesia},
		{28, (*scenario).sequential}, {31, (*scenario).load}, {33, (*scenario).bootEdge}, {35, (*scenario).twice},
		{36, (*scenario).stretchEdge}} {
		if r < p.upTo {
			return p.profile, true
		}
	}
	return nil, false
}

// drawProfile draws a schedule of one profile only, with weakening.
func drawProfile(seed uint64, weakening string, profile func(*scenario, *rand.Rand)) scenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := scenario{seed: seed, weakening: weakening, maxInFlight: drawCap(seed)}
	s.mixed(rng)
	profile(&s, rng)
	s.withLoops()
	return s
}

// mixed draws every setting independently, each fault present in about
// half the schedules.
func (s *scenario) mixed(rng *rand.Rand) {
	s.profile = "mixed"
	s.nodes = []int{3, 5}[rng.IntN(2)]
	s.servers = 2 + rng.IntN(3)
	s.chunks = 1 + rng.IntN(2)
	s.workers = s.nodes + rng.IntN(2*s.nodes)
	s.leaseMs = 200 + rng.Int64N(800)
	s.rate = 20 + 40*rng.Float64()
	s.duration = time.Duration(4+rng.IntN(6)) * time.Second
	s.latency = latency{kind: []string{"constant", "uniform", "exponential"}[rng.IntN(3)],
		mean: time.Duration(1+rng.IntN(20)) * time.Millisecond}
	s.lossP = pick(rng, 0.5, 0.1*rng.Float64())
	s.dupP = pick(rng, 0.5, 0.2*rng.Float64())
	s.spikeP = pick(rng, 0.5, 0.05*rng.Float64())
	s.spikeMax = time.Duration(3*s.leaseMs) * time.Millisecond
	if rng.IntN(3) > 0 {
		s.partition = time.Duration(300+rng.IntN(1500)) * time.Millisecond
		s.hold = rng.IntN(2) == 0
	}
	if rng.IntN(2) == 0 {
		s.crash = time.Duration(500+rng.IntN(2500)) * time.Millisecond
		s.storm = pick(rng, 0.5, rng.Float64())
	}
	s.driftPPM = pickInt(rng, 0.5, rng.Int64N(20_000))
	if rng.IntN(3) == 0 {
		s.pause = time.Duration(1000+rng.IntN(3000)) * time.Millisecond
	}
	s.dupClientP = pick(rng, 0.3, 0.2*rng.Float64())
	if rng.IntN(3) == 0 {
		s.marginMs = rng.Int64N(s.leaseMs / 10)
	}
	s.drawWallClock(rng)
}

// drawWallClock gives a third of the schedules no wall clock, a third
// clocks within the bound (each within 0.3 M of true time, so any two
// within 0.6 M < M - L) and a third clocks up to a minute apart, beyond
// it, where tokens come from promises and recovery alone. A schedule in
// which a majority can restart at once (storms, site outages) gets clocks
// within the bound: after such a restart nothing else orders tokens.
func (s *scenario) drawWallClock(rng *rand.Rand) {
	within := time.Duration(s.leaseMs) * time.Millisecond * 3 / 10
	switch r := rng.IntN(3); {
	case s.storm > 0 || s.outage > 0 || r == 1:
		s.wallClock, s.wallSkew = true, within
	case r == 2:
		s.wallClock, s.wallSkew, s.minorityCrashes = true, time.Duration(1+rng.IntN(60))*time.Second, true
	default:
		s.wallClock, s.wallSkew, s.minorityCrashes = false, 0, true
	}
}

// stale turns a scenario into a slow, flapping network under heavy
// contention: many messages arrive long after they were sent (past lease
// ends, releases, re-grants and restarts), partitions hold messages and
// deliver them at heal, and crashes often take a majority down at once.
// This is where an abandoned attempt's propose, a late release or a
// duplicate answer can do harm, so it is where the rules are tested.
func (s *scenario) stale(rng *rand.Rand) {
	s.profile = "stale"
	s.servers, s.chunks = 2, 1
	s.leaseMs = 500 + rng.Int64N(500)
	s.spikeMax = time.Duration(3*s.leaseMs) * time.Millisecond
	s.duration = time.Duration(8+rng.IntN(5)) * time.Second
	s.rate = 40 + 40*rng.Float64()
	s.spikeP = 0.1 + 0.4*rng.Float64()
	s.dupP = 0.2 * rng.Float64()
	s.partition = time.Duration(500+rng.IntN(1500)) * time.Millisecond
	s.hold = true
	s.crash = time.Duration(300+rng.IntN(1200)) * time.Millisecond
	s.storm = 0.5 + 0.5*rng.Float64()
	s.pause = time.Duration(500+rng.IntN(2000)) * time.Millisecond
	s.dupClientP = 0.2 * rng.Float64()
	s.drawWallClock(rng)
}

// sites turns a scenario into a two-site deployment: three acceptors at
// the main site and two proposer-only nodes at a remote site, whose
// congested uplink delays everything they send (Jepsen's net/slow shapes
// a node's egress the same way). Clients reach any live node through a
// load balancer. Two faults of such deployments meet here:
//   - A release through a remote node reaches the acceptors an uplink
//     delay after its read round finished, while the same server's next
//     grant, through a main-site node, takes a few LAN hops: a late
//     release meets a newer lease of its server (rule 6).
//   - The main site loses power now and then: its nodes crash together and
//     the link between the sites drops with them. What the remote nodes
//     send meanwhile waits in their connections and arrives, in order,
//     when the link is back, after the site restarted and sat out its boot
//     wait. A propose that was on the slow uplink at the outage then
//     reaches acceptors that forgot every promise and may hold another
//     server's lease (rule 4, A2).
//
// Its schedules run longer than mixed ones, so that each sees a few
// outages.
func (s *scenario) sites(rng *rand.Rand) {
	s.profile = "sites"
	s.nodes = 5
	s.workers = 5 + rng.IntN(10)
	s.acceptors = rng.Perm(s.nodes)[:3]
	slices.Sort(s.acceptors)
	s.balanced = true
	s.duration = time.Duration(8+rng.IntN(5)) * time.Second
	lease := time.Duration(s.leaseMs) * time.Millisecond
	s.uplink = time.Duration(float64(lease) * (0.05 + 0.25*rng.Float64()))
	s.outage = time.Duration(500+rng.IntN(1500)) * time.Millisecond
	s.partition = 0 // the outage is this profile's partition
	s.drawWallClock(rng)
}

// amnesia is a lossy cluster without wall clocks whose nodes keep
// crashing one at a time (never a majority at once), with clients behind a
// load balancer, so renewals go through nodes that missed the latest
// ballots. Here only the surviving promises and a restarted acceptor's
// recovered floor keep tokens in order: the schedules where a promise
// check or the recovery matters.
func (s *scenario) amnesia(rng *rand.Rand) {
	s.profile = "amnesia"
	s.nodes = 3
	s.acceptors, s.uplink, s.outage = nil, 0, 0
	s.balanced = true
	s.servers, s.chunks = 1+rng.IntN(2), 1
	s.workers = 4 + rng.IntN(6)
	s.leaseMs = 300 + rng.Int64N(500)
	s.rate = 40 + 40*rng.Float64()
	s.duration = time.Duration(6+rng.IntN(5)) * time.Second
	s.lossP = 0.05 + 0.2*rng.Float64()
	s.dupP, s.spikeP, s.dupClientP, s.pause = 0.05*rng.Float64(), 0, 0, 0
	s.partition = 0
	s.crash = time.Duration(300+rng.IntN(700)) * time.Millisecond
	s.storm = 0
	s.wallClock, s.wallSkew, s.minorityCrashes = false, 0, true
}

// clocks is a fast LAN with long leases and every clock at the edge of the
// configured rate bound. Without the drift stretch (rule 5) an acceptor
// whose clock runs fast forgets a lease up to about T*rho early in real
// time: tens of milliseconds, a gap only a network this fast lets a
// competitor's grant fit in.
func (s *scenario) clocks(rng *rand.Rand) {
	s.profile = "clocks"
	s.servers, s.chunks = 2, 1
	s.leaseMs = 700 + rng.Int64N(300)
	s.rate = 50 + 30*rng.Float64()
	s.latency = latency{kind: "uniform", mean: time.Millisecond}
	s.lossP, s.dupP, s.spikeP = 0, 0, 0
	s.partition, s.crash, s.pause, s.dupClientP = 0, 0, 0, 0
	s.driftPPM = 10_000 + rng.Int64N(10_001)
	s.clockEdge = true
	if rng.IntN(2) == 0 {
		s.margined(rng)
	}
}

// margined gives the nodes a drift margin of 5-15% of the lease and every
// client a clock slower than rho by what the margin covers (80% of it):
// only the margin keeps such a client's belief inside the protection.
func (s *scenario) margined(rng *rand.Rand) {
	s.marginMs = s.leaseMs/20 + rng.Int64N(s.leaseMs/10+1)
	s.clientsInMargin = true
}

// sequential is the sequential-restart schedule under which an earlier
// core let tokens go backwards: restarts one at a time (each waits until no node is down or in its boot wait), with
// partitions that drop what crosses them and pauses between them, so a
// restarted node often serves before it heard its peers' high-water
// marks, and over a few restarts a majority forgot what it promised. The
// wall clocks disagree as much as the bound allows (one node 0.35 M
// ahead, the others within 0.35 M, little drift), and messages are held
// back past the boot wait now and then: the stale ballots the restart
// floor exists for.
func (s *scenario) sequential(rng *rand.Rand) {
	s.profile = "sequential"
	s.nodes = []int{3, 3, 5}[rng.IntN(3)]
	s.acceptors, s.uplink, s.outage = nil, 0, 0
	s.balanced = true
	s.servers, s.chunks = 2+rng.IntN(2), 1
	s.workers = 5 + rng.IntN(6)
	s.leaseMs = 300 + rng.Int64N(500)
	s.rate = 40 + 40*rng.Float64()
	s.duration = time.Duration(8+rng.IntN(5)) * time.Second
	s.latency = latency{kind: "uniform", mean: time.Duration(1+rng.IntN(4)) * time.Millisecond}
	s.lossP, s.dupP = 0.05*rng.Float64(), 0.05*rng.Float64()
	s.spikeP, s.spikeMax = 0.02+0.08*rng.Float64(), time.Duration(2*s.leaseMs)*time.Millisecond
	s.partition, s.hold = time.Duration(300+rng.IntN(700))*time.Millisecond, rng.IntN(2) == 0
	s.crash, s.storm, s.oneAtATime, s.minorityCrashes = time.Duration(100+rng.IntN(400))*time.Millisecond, 0, true, false
	s.downMin, s.downMax = 10*time.Millisecond, time.Duration(s.leaseMs)*time.Millisecond
	s.pause = time.Duration(1000+rng.IntN(2000)) * time.Millisecond
	s.driftPPM, s.clockEdge, s.dupClientP = rng.Int64N(200), false, 0
	s.minLeaseMs = s.leaseMs * 9 / 10
	bound := time.Duration(s.leaseMs) * time.Millisecond * 35 / 100
	s.wallClock, s.wallSkew, s.aheadSkew, s.behindAll = true, bound, bound, true
}

// load is a whole-cluster restart after sustained load: many servers
// contend for few chunks at a high rate, with a coarse counter unit (50
// or 100 ms, so tens of ballots a second do what 10 000 do with 100 us),
// and storms take the whole cluster down at once. Pacing keeps every
// counter within L of its node's wall clock, so tokens after the restart
// start above every earlier one.
func (s *scenario) load(rng *rand.Rand) {
	s.profile = "load"
	s.nodes = []int{3, 5}[rng.IntN(2)]
	s.acceptors, s.uplink, s.outage, s.balanced = nil, 0, 0, rng.IntN(2) == 0
	s.servers, s.chunks = 4+rng.IntN(3), 1+rng.IntN(2)
	s.workers = 10 + rng.IntN(10)
	s.leaseMs = 300 + rng.Int64N(300)
	s.rate = 100 + 100*rng.Float64()
	s.duration = time.Duration(6+rng.IntN(5)) * time.Second
	s.latency = latency{kind: "uniform", mean: time.Duration(1+rng.IntN(3)) * time.Millisecond}
	s.lossP, s.dupP, s.spikeP, s.dupClientP, s.pause, s.partition = 0, 0, 0, 0, 0, 0
	s.crash, s.storm, s.wholeCluster, s.minorityCrashes = time.Duration(1500+rng.IntN(1500))*time.Millisecond, 1, true, false
	s.downMin, s.downMax = 10*time.Millisecond, 200*time.Millisecond
	s.driftPPM, s.clockEdge = rng.Int64N(1000), false
	s.ballotUnit = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}[rng.IntN(2)]
	s.wallClock, s.wallSkew = true, time.Duration(s.leaseMs/8)*time.Millisecond
}

// bootEdge restarts acceptors within milliseconds, on a fast LAN with
// every clock at the edge of a wide rate bound (5-10%) and every lease
// asked for at M: a boot wait that is not stretched ends 5-10% of M too
// early on a fast clock,
// while a lease the acceptor accepted just before it crashed is still
// believed by a client with a slow clock. Loss makes some leases rest on
// a bare majority that includes the restarted acceptor.
func (s *scenario) bootEdge(rng *rand.Rand) {
	s.profile = "bootedge"
	s.nodes, s.acceptors, s.uplink, s.outage, s.balanced = 3, nil, 0, 0, false
	s.servers, s.chunks = 2, 1
	s.workers = 6 + rng.IntN(5)
	s.leaseMs = 300 + rng.Int64N(300)
	s.rate = 60 + 40*rng.Float64()
	s.duration = time.Duration(8+rng.IntN(5)) * time.Second
	s.latency = latency{kind: "uniform", mean: time.Millisecond}
	s.lossP, s.dupP, s.spikeP, s.dupClientP, s.pause, s.partition = 0.05+0.15*rng.Float64(), 0, 0, 0, 0, 0
	s.crash, s.storm, s.minorityCrashes = time.Duration(200+rng.IntN(300))*time.Millisecond, 0, true
	s.downMin, s.downMax = 0, 5*time.Millisecond
	s.driftPPM, s.clockEdge = 50_000+rng.Int64N(50_001), true
	s.minLeaseMs = s.leaseMs
	s.wallClock, s.wallSkew = true, time.Duration(s.leaseMs/10)*time.Millisecond
}

// twice restarts one node again and again within milliseconds while its
// answers are held back (delay spikes of up to two lease lengths), so
// answers meant for an earlier incarnation of a node reach a later one:
// only request ids that start at the incarnation keep a check from
// taking them for answers to its own read.
func (s *scenario) twice(rng *rand.Rand) {
	s.profile = "twice"
	s.nodes, s.acceptors, s.uplink, s.outage, s.balanced = 3, nil, 0, 0, false
	s.servers, s.chunks = 2+rng.IntN(2), 1
	s.workers = 4 + rng.IntN(5)
	s.leaseMs = 300 + rng.Int64N(300)
	s.rate = 50 + 30*rng.Float64()
	s.duration = time.Duration(8+rng.IntN(5)) * time.Second
	s.latency = latency{kind: "uniform", mean: time.Duration(1+rng.IntN(3)) * time.Millisecond}
	s.lossP, s.dupP, s.dupClientP, s.pause, s.partition = 0, 0.05*rng.Float64(), 0, 0, 0
	s.spikeP, s.spikeMax = 0.2+0.2*rng.Float64(), time.Duration(2*s.leaseMs)*time.Millisecond
	s.drawWallClock(rng)
	s.crash, s.storm, s.minorityCrashes, s.oneVictim = time.Duration(100+rng.IntN(200))*time.Millisecond, 0, false, true
	s.downMin, s.downMax = 0, 20*time.Millisecond
	s.driftPPM = rng.Int64N(1000)
}

// selfAcceptors turns s into the unsafe single-process mode: three nodes,
// each its own sole acceptor, under partitions (the acceptors=self
// negative control). Membership is off: each node is its own acceptor
// set, and the member nemesis's late nodes may lie beyond the three.
func (s *scenario) selfAcceptors() {
	s.self, s.nodes = true, 3
	s.acceptors, s.uplink, s.outage, s.balanced = nil, 0, 0, false
	s.memberSettings = memberSettings{}
	if s.partition == 0 {
		s.partition = 500 * time.Millisecond
	}
}

func pick(rng *rand.Rand, p, v float64) float64 {
	if rng.Float64() < p {
		return v
	}
	return 0
}

func pickInt(rng *rand.Rand, p float64, v int64) int64 {
	if rng.Float64() < p {
		return v
	}
	return 0
}

func (s scenario) String() string {
	acc := "all"
	switch {
	case s.self:
		acc = "self"
	case s.acceptors != nil:
		acc = fmt.Sprint(s.acceptors)
	}
	return fmt.Sprintf("seed=%d profile=%s nodes=%d acceptors=%s servers=%d chunks=%d workers=%d lease=%dms rate=%.0f/s "+
		"duration=%v latency=%s/%v loss=%.3f dup=%.3f spike=%.3f partition=%v hold=%v crash=%v storm=%.2f pause=%v dup-client=%.3f "+
		"wall=%v/%v ahead=%v drift=%dppm edge=%v margin=%dms/%v unit=%v whole=%v one-at-a-time=%v down=%v..%v "+
		"balanced=%v uplink=%v outage=%v no-boot-wait=%v client-outside=%v in-flight=%d loops=%d..%d weakening=%s",
		s.seed, s.profile, s.nodes, acc, s.servers, s.chunks, s.workers, s.leaseMs, s.rate, s.duration,
		s.latency.kind, s.latency.mean, s.lossP, s.dupP, s.spikeP, s.partition, s.hold, s.crash, s.storm, s.pause, s.dupClientP,
		s.wallClock, s.wallSkew, s.aheadSkew, s.driftPPM, s.clockEdge, s.marginMs, s.clientsInMargin, s.ballotUnit, s.wholeCluster,
		s.oneAtATime, s.downMin, s.downMax, s.balanced, s.uplink, s.outage, s.noBootWait, s.clientOutside, s.maxInFlight, s.minLoops, s.loops, s.weakening) +
		map[bool]string{true: " workload=master", false: ""}[s.master] + s.memberText()
}
