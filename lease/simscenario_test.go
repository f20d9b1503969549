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
	rate      float64
	duration  time.Duration
	latency   latency
	lossP     float64 // each message is lost with this probability
	dupP      float64 // ... delivered twice with this probability
	spikeP    float64 // ... held back up to spikeMax with this probability
	spikeMax  time.Duration
	partition time.Duration // mean time between nemesis changes; 0: none
	hold      bool          // partitioned messages are held and delivered at heal, not dropped
	crash     time.Duration // mean time between crashes; 0: none
	storm     float64       // probability that a crash takes a majority down at once
	pause     time.Duration // mean time between process pauses; 0: none
	// dupClientP is the probability that a client request reaches a node
	// a second time, up to two client timeouts later.
	dupClientP float64
	// wallClock gives nodes a wall clock (the ballot counter's floor), each
	// off by up to wallSkew. Schedules where a majority can restart at once
	// keep the skew below the boot wait: tokens then rely on it.
	wallClock bool
	wallSkew  time.Duration
	// minorityCrashes keeps crashes to a minority of nodes at any time
	// (counting the ones still recovering): with wall clocks absent or
	// far apart, nothing but the surviving majority's promises orders
	// tokens after a restart (the contract's promise covers restarts of a
	// minority).
	minorityCrashes bool
	driftPPM        int64 // clock rates lie in [1-rho, 1+rho]
	clockEdge       bool  // every clock rate is exactly 1-rho or 1+rho
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
// loss, clock-rate error, and messages delayed past lease lengths (the
// stale proposes and releases the safety rules exist for). A third of the
// schedules are "mixed"; the other profiles (stale 20%, sites 30%, clocks
// 15%) aim faults where a rule is needed, and their shares keep each
// single-rule negative control caught within the default budget
// (controls_test.go).
func drawScenario(seed uint64, weakening string) scenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := scenario{seed: seed, weakening: weakening}
	s.mixed(rng)
	switch r := rng.IntN(20); {
	case r < 4:
		s.stale(rng)
	case r < 9:
		s.sites(rng)
	case r < 12:
		s.clocks(rng)
	case r < 16:
		s.amnesia(rng)
	}
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
	s.drawWallClock(rng)
}

// drawWallClock gives a third of the schedules no wall clock, a third
// nearly agreeing clocks and a third clocks a minute apart, where tokens
// must come from promises and recovery alone. A schedule in which a
// majority can restart at once (storms, site outages) gets agreeing
// clocks: after such a restart nothing else orders tokens.
func (s *scenario) drawWallClock(rng *rand.Rand) {
	switch r := rng.IntN(3); {
	case s.storm > 0 || s.outage > 0 || r == 1:
		s.wallClock, s.wallSkew = true, time.Duration(s.leaseMs/4)*time.Millisecond
	case r == 2:
		s.wallClock, s.wallSkew, s.minorityCrashes = true, time.Minute, true
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
	s.lossP = 0.25 + 0.2*rng.Float64()
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
}

// selfAcceptors turns s into the unsafe single-process mode: three nodes,
// each its own sole acceptor, under partitions (the acceptors=self
// negative control).
func (s *scenario) selfAcceptors() {
	s.self, s.nodes = true, 3
	s.acceptors, s.uplink, s.outage, s.balanced = nil, 0, 0, false
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
		"wall=%v/%v drift=%dppm edge=%v balanced=%v uplink=%v outage=%v no-boot-wait=%v client-outside=%v weakening=%s",
		s.seed, s.profile, s.nodes, acc, s.servers, s.chunks, s.workers, s.leaseMs, s.rate, s.duration,
		s.latency.kind, s.latency.mean, s.lossP, s.dupP, s.spikeP, s.partition, s.hold, s.crash, s.storm, s.pause, s.dupClientP,
		s.wallClock, s.wallSkew, s.driftPPM, s.clockEdge, s.balanced, s.uplink, s.outage, s.noBootWait, s.clientOutside, s.weakening) +
		map[bool]string{true: " workload=master", false: ""}[s.master]
}
