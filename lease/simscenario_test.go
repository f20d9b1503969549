package lease_test

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// scenario is everything one simulated schedule is made of. Every field
// is drawn from the schedule's seed, so the seed alone replays it.
type scenario struct {
	seed      uint64
	profile   string // "mixed" or "stale"
	nodes     int
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
	driftPPM  int64         // clock rates lie in [1-rho, 1+rho]
	self      bool          // every node its own sole acceptor (unsafe)
	weakening string        // a rule switched off, or "none"
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
// stale proposes and releases the safety rules exist for).
func drawScenario(seed uint64, weakening string) scenario {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := scenario{seed: seed, weakening: weakening}
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
	s.profile = "mixed"
	if rng.IntN(4) == 0 {
		s.stale(rng)
	}
	return s
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
	if s.self {
		acc = "self"
	}
	return fmt.Sprintf("seed=%d profile=%s nodes=%d acceptors=%s servers=%d chunks=%d workers=%d lease=%dms rate=%.0f/s "+
		"duration=%v latency=%s/%v loss=%.3f dup=%.3f spike=%.3f partition=%v hold=%v crash=%v storm=%.2f drift=%dppm weakening=%s",
		s.seed, s.profile, s.nodes, acc, s.servers, s.chunks, s.workers, s.leaseMs, s.rate, s.duration,
		s.latency.kind, s.latency.mean, s.lossP, s.dupP, s.spikeP, s.partition, s.hold, s.crash, s.storm, s.driftPPM, s.weakening)
}
