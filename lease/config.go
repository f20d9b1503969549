package lease

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Config fixes one node's lease core. Every node of a cluster must agree on
// Acceptors, MaxLeaseMs and DriftPPM; the rest is local.
type Config struct {
	// ID is this node's id, the same string peers use to address it.
	ID string
	// Acceptors is the acceptor set, identical on every node, at most 64
	// ids. A quorum is a majority of it. A single-element set holding only
	// ID is the single-process grader mode: safe only while no other node
	// grants.
	Acceptors []string
	// Nodes is every node that may propose (Maelstrom's node_ids),
	// identical on every node, at most 1<<LaneBits ids. A node's position
	// in it is its ballot lane, which makes counters, and so fencing
	// tokens, unique across nodes. Empty means Acceptors (then ID must be
	// one of them).
	Nodes []string
	// Incarnation distinguishes this process start from every earlier one
	// of the same node and must grow across restarts (the binary uses the
	// wall clock in microseconds at start, below 2^53 until the year
	// 2255). It makes ballots unique without disk.
	Incarnation int64
	// Nonce names this incarnation in every read, release and sync it
	// sends; acceptors echo it, and an answer counts only if it carries
	// this incarnation's Nonce. The shell draws it at random at each start
	// (1..2^53-1), so an answer meant for an earlier incarnation of this
	// node never matches a request of this one, even when the wall clock
	// stepped back across the restart and request ids repeat.
	Nonce uint64
	// WallMs is the wall clock in milliseconds since 1970 when the core is
	// created: the floor and, with pacing, the ceiling of the ballot
	// counter (ballotSource), and after a restart the acceptor's floor
	// (recovery.go). Zero means no wall clock (transcripts): tokens then
	// order through promises and recovery alone. Otherwise it must be
	// after CounterEpochMs.
	WallMs int64
	// DefaultLeaseMs is the lease length T when a request names none.
	DefaultLeaseMs int64
	// MaxLeaseMs is M, the longest lease a request may ask for.
	MaxLeaseMs int64
	// BootWaitMs is the paper's restart rule: the acceptor does nothing
	// with prepare, propose, read and release this long after the core is
	// created (it answers "booting"), stretched by the drift factor. Set it
	// >= MaxLeaseMs wherever a node can crash and restart, or a restarted
	// acceptor forgets a live lease. A node with a boot wait is a
	// restarted node: from the end of its boot wait its acceptor refuses
	// every ballot up to its wall clock then, and raises that floor with
	// the ballot high-water marks its peers report (recovery.go), so that
	// fencing tokens keep growing across the restart.
	BootWaitMs int64
	// DriftMarginMs is subtracted from every remaining time the proposer
	// reports to a client: the client's lease ends this much before the
	// proposer's deadline.
	DriftMarginMs int64
	// DriftPPM is rho, the bound on clock-rate error in parts per million.
	// Acceptors keep a lease of length T live for T*(1+rho)/(1-rho) on
	// their own clock (rule 5), so a fast proposer clock and a
	// slow acceptor clock cannot open a gap.
	DriftPPM int64
	// QuorumTimeoutMs bounds how long a request may take before the node
	// answers error 11 (grant, renew, check) or gives up (release).
	QuorumTimeoutMs int64
	// RoundTimeoutMs bounds one prepare, propose or read round; a round
	// that gets no decision by then is retried with a fresh ballot or a
	// fresh read.
	RoundTimeoutMs int64
	// BackoffMinMs and BackoffMaxMs bound the random wait before a
	// contended attempt is retried (the paper's liveness remedy).
	BackoffMinMs int64
	BackoffMaxMs int64
	// MaxInFlight caps the client grant, renew, check and release
	// requests running at this node at once; more wait for a slot, and
	// fail with error 11 if none frees within their quorum timeout
	// (admission.go). Zero means DefaultMaxInFlight. A member of several
	// cores shares it out: each core opens MaxInFlight/Cores slots,
	// rounded up.
	MaxInFlight int
	// Core and Cores place this Node among the cores of one member
	// (cores.go, doc.go "Cores sharing one member"): the member runs
	// Cores Nodes, each on its own loop, and this one serves the chunks
	// CoreOf maps to Core. Core 0 also serves the master lease and sends
	// a restarted member's sync rounds. Zero Cores means 1: the whole
	// member in this Node.
	Core, Cores int
	// Rand supplies every random choice of the core (backoff). It must be
	// seeded by the caller; the core never reads global randomness.
	Rand *rand.Rand
	// Membership lets the acceptor set change while the cluster runs
	// (doc.go "Membership"): Acceptors is then epoch 0, every node of
	// Nodes may become a member, and a restarted member votes only once
	// it recovered the configuration from its peers. Every node of a
	// cluster must agree on it. With several cores
	// the shell hands every configuration a core adopts to the others
	// (doc.go "Membership and cores").
	Membership bool
	// Join starts a node that is new to a running cluster (membership
	// only): it takes no configuration from Acceptors, which are only the
	// nodes it asks for the configuration, and votes on nothing and
	// proposes nothing until it learnt one. A brand-new identity needs no
	// boot wait.
	Join bool

	// weaken switches off one safety rule, only in tests (weaken.go).
	weaken weakening
	// ballotUnit replaces BallotUnit, only in tests: the simulation runs
	// some schedules with a coarse unit so that its modest load drives
	// the counter against the lead bound (export_test.go).
	ballotUnit time.Duration
}

// counterSpanMs is how long after CounterEpochMs the counter's time part
// reaches maxCounter: 111 years with BallotUnit.
func (c Config) counterSpanMs() int64 {
	return int64(maxCounter>>LaneBits) * int64(c.unit()/time.Microsecond) / 1000
}

// unit is the ballot counter's time unit.
func (c Config) unit() time.Duration {
	switch {
	case c.weaken == weakUnitMs:
		return time.Millisecond
	case c.ballotUnit > 0:
		return c.ballotUnit
	}
	return BallotUnit
}

// Defaults for the optional settings, chosen for Maelstrom latencies of up
// to about 100 ms a hop.
const (
	DefaultQuorumTimeoutMs = 2000
	DefaultBackoffMinMs    = 5
	DefaultBackoffMaxMs    = 200
	maxAcceptors           = 64
	maxLengthMs            = 7 * 24 * 3600 * 1000 // a week: longer leases are a configuration mistake
	ppmScale               = 1_000_000
)

// withDefaults fills the optional settings left at zero.
func (c Config) withDefaults() Config {
	if c.QuorumTimeoutMs == 0 {
		c.QuorumTimeoutMs = DefaultQuorumTimeoutMs
	}
	if c.RoundTimeoutMs == 0 {
		c.RoundTimeoutMs = max(c.QuorumTimeoutMs/2, 1)
	}
	if c.BackoffMinMs == 0 {
		c.BackoffMinMs = DefaultBackoffMinMs
	}
	if c.BackoffMaxMs == 0 {
		c.BackoffMaxMs = max(DefaultBackoffMaxMs, c.BackoffMinMs)
	}
	if c.DefaultLeaseMs == 0 {
		c.DefaultLeaseMs = c.MaxLeaseMs
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.Cores == 0 {
		c.Cores = 1
	}
	if c.Cores > 1 && c.Cores <= MaxCores {
		c.MaxInFlight = (c.MaxInFlight + c.Cores - 1) / c.Cores
	}
	return c
}

// validate returns the first setting that is wrong, named so a person can
// fix it.
func (c Config) validate() error {
	switch {
	case c.ID == "":
		return errors.New("ID is empty")
	case len(c.Acceptors) == 0:
		return errors.New("the acceptor set is empty")
	case len(c.Acceptors) > maxAcceptors:
		return fmt.Errorf("%d acceptors, at most %d are supported", len(c.Acceptors), maxAcceptors)
	case c.MaxLeaseMs <= 0 || c.MaxLeaseMs > maxLengthMs:
		return fmt.Errorf("MaxLeaseMs is %d, must be in 1..%d (a week)", c.MaxLeaseMs, maxLengthMs)
	case c.DefaultLeaseMs <= 0 || c.DefaultLeaseMs > c.MaxLeaseMs:
		return fmt.Errorf("DefaultLeaseMs is %d, must be in 1..%d (MaxLeaseMs)", c.DefaultLeaseMs, c.MaxLeaseMs)
	case c.BootWaitMs < 0 || c.BootWaitMs > maxLengthMs || c.DriftMarginMs < 0:
		return fmt.Errorf("BootWaitMs must be in 0..%d and DriftMarginMs >= 0", maxLengthMs)
	case c.DriftMarginMs >= c.DefaultLeaseMs:
		return fmt.Errorf("DriftMarginMs is %d, must be below DefaultLeaseMs %d, or a default lease could tell no client any time", c.DriftMarginMs, c.DefaultLeaseMs)
	case c.DriftPPM < 0 || c.DriftPPM >= ppmScale/2:
		return fmt.Errorf("DriftPPM is %d, must be in 0..%d", c.DriftPPM, ppmScale/2-1)
	case c.Incarnation < 0 || c.Incarnation >= maxWire:
		return fmt.Errorf("Incarnation (%d) must be in 0..2^53", c.Incarnation)
	case c.Nonce == 0 || c.Nonce >= maxWire:
		return fmt.Errorf("Nonce (%d) must be in 1..2^53-1, drawn at random at each start", c.Nonce)
	case c.WallMs != 0 && (c.WallMs < CounterEpochMs || c.WallMs-CounterEpochMs >= c.counterSpanMs()):
		return fmt.Errorf("WallMs is %d; the wall clock must read between 2020 and 2131 (ms since 1970), or 0 for none", c.WallMs)
	case c.QuorumTimeoutMs <= 0 || c.RoundTimeoutMs <= 0:
		return errors.New("QuorumTimeoutMs and RoundTimeoutMs must be > 0")
	case c.Cores < 1 || c.Cores > MaxCores || c.Core < 0 || c.Core >= c.Cores:
		return fmt.Errorf("core %d of %d: a member runs 1..%d cores, numbered from 0", c.Core, c.Cores, MaxCores)
	case c.MaxInFlight < 1:
		return fmt.Errorf("MaxInFlight is %d, must be at least 1 (0 before defaults: DefaultMaxInFlight)", c.MaxInFlight)
	case c.BackoffMinMs < 0 || c.BackoffMaxMs < c.BackoffMinMs:
		return fmt.Errorf("backoff range %d..%d ms is empty", c.BackoffMinMs, c.BackoffMaxMs)
	case c.Rand == nil:
		return errors.New("Rand is nil: the caller must inject a seeded source")
	}
	if err := c.validateAcceptors(); err != nil {
		return err
	}
	if err := c.validateNodes(); err != nil {
		return err
	}
	return c.validateMembership()
}

// validateMembership checks what membership needs: every member of any
// configuration has a ballot lane, so the start set lies within Nodes.
func (c Config) validateMembership() error {
	switch {
	case c.Join && !c.Membership:
		return errors.New("Join needs Membership: only a cluster whose acceptor set can change takes new members")
	case !c.Membership:
		return nil
	}
	for _, a := range c.Acceptors {
		if !slices.Contains(c.nodes(), a) {
			return fmt.Errorf("with Membership every acceptor must be one of Nodes %v (its ballot lane); %q is not", c.nodes(), a)
		}
	}
	return nil
}

// nodes is Config.Nodes, or the acceptors when it is empty.
func (c Config) nodes() []string {
	if len(c.Nodes) == 0 {
		return c.Acceptors
	}
	return c.Nodes
}

// lane is this node's position in nodes(), or -1.
func (c Config) lane() int {
	return slices.Index(c.nodes(), c.ID)
}

func (c Config) validateNodes() error {
	nodes := c.nodes()
	switch {
	case len(nodes) > 1<<LaneBits:
		return fmt.Errorf("%d nodes, at most %d are supported", len(nodes), 1<<LaneBits)
	case c.lane() < 0:
		return fmt.Errorf("ID %q is not in Nodes %v: every proposer needs its ballot lane", c.ID, nodes)
	}
	seen := make(map[string]bool, len(nodes))
	for _, id := range nodes {
		if id == "" || seen[id] {
			return fmt.Errorf("Nodes %v has an empty or repeated id", nodes)
		}
		if len(id) > MaxServerBytes {
			return fmt.Errorf("a node id is %d bytes; the limit is %d bytes (MaxServerBytes: a node is the server of its own master lease)", len(id), MaxServerBytes)
		}
		seen[id] = true
	}
	return nil
}

func (c Config) validateAcceptors() error {
	seen := make(map[string]bool, len(c.Acceptors))
	for _, a := range c.Acceptors {
		if a == "" {
			return errors.New("the acceptor set contains an empty id")
		}
		if seen[a] {
			return fmt.Errorf("acceptor %q is listed twice", a)
		}
		seen[a] = true
	}
	return nil
}

// stretch converts a length measured by a correct clock into the length an
// acceptor must wait on its own clock, whose rate may be off by rho either
// way: d*(1+rho)/(1-rho), rounded up.
//
// The division is split so that no intermediate product overflows for any
// length up to maxLengthMs.
func stretch(d time.Duration, ppm int64) time.Duration {
	num, den := ppmScale+ppm, int64(ppmScale-ppm)
	q, r := int64(d)/den, int64(d)%den
	return time.Duration(q*num + (r*num+den-1)/den)
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// margin is DriftMarginMs, which every reported remaining time is
// shortened by.
func (n *Node) margin() time.Duration {
	if n.cfg.weaken == weakNoMargin {
		return 0
	}
	return ms(n.cfg.DriftMarginMs)
}

// floorMs converts a remaining time to whole milliseconds, rounding down so
// that a reported time is never more than the truth.
func floorMs(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(d / time.Millisecond)
}
