package lease

import (
	"cmp"
	"fmt"
	"time"
)

// Ballot numbers a proposal. Counter is unique across nodes: its low
// LaneBits bits are the proposing node's lane (its position in
// Config.Nodes), the rest is a time in BallotUnit since CounterEpochMs
// that climbs past every promise it is shown, so two nodes never issue
// the same counter (the blog's ballot lanes, here with the wall clock as
// floor and ceiling, see ballotSource). Incarnation is the proposing
// process's start (microseconds of the wall clock): a restarted node whose
// counter happens to land on one of its earlier ballots still never
// issues that ballot again, and an acceptor refuses a different ballot
// with an equal counter (keeps).
//
// The counter of the ballot a lease instance was accepted with is the
// instance's fencing token: unique (lanes), and larger than the token of
// every instance that completed before the attempt was prepared
// (promises, and after restarts the wall-clock floor; see doc.go
// "Fencing tokens").
type Ballot struct {
	Counter     uint64 `json:"counter"`
	Incarnation int64  `json:"incarnation"`
}

// LaneBits is the number of low counter bits that name the proposing
// node: at most 1<<LaneBits nodes.
const LaneBits = 7

// The counter's time part counts BallotUnit since CounterEpochMs. A unit
// of 100 µs lets a node issue 10 000 ballots a second without its
// counter ever running ahead of its wall clock. It stays below maxCounter
// (2^52, so 2^45 units) until 2131: 2^45 * 100 µs is 111 years.
// Counters of the earlier format (the wall clock in milliseconds since
// 1970, shifted past the lane bits) are smaller than every counter of
// this one issued after July 2025 (10*(t-2020) > t from then on), so
// tokens keep growing across an upgrade.
const (
	CounterEpochMs = 1_577_836_800_000 // 2020-01-01T00:00:00Z in ms since 1970
	BallotUnit     = 100 * time.Microsecond
)

// maxWire bounds every number the core puts on the wire: JSON numbers
// beyond 2^53 are not exact in JavaScript or jq.
const maxWire = 1 << 53

// maxCounter bounds every ballot counter the core accepts from the wire
// or observes: 2^52, so that above any counter it has seen a node can
// still issue 2^45 larger ones before reaching maxWire. Honest counters
// are about 2^47.8 today (2025) and reach 2^52 in 2131, so only a broken
// or forged message carries one this large; accepting it would leave no
// ballot above it, and every proposer that saw it could never be
// promised again.
const maxCounter = maxWire >> 1

// Compare returns -1, 0 or +1 as b is lower than, equal to or higher than o.
func (b Ballot) Compare(o Ballot) int {
	if c := cmp.Compare(b.Counter, o.Counter); c != 0 {
		return c
	}
	return cmp.Compare(b.Incarnation, o.Incarnation)
}

// Less reports whether b orders before o.
func (b Ballot) Less(o Ballot) bool { return b.Compare(o) < 0 }

// IsZero reports whether b is the zero ballot, lower than every ballot a
// proposer issues.
func (b Ballot) IsZero() bool { return b == Ballot{} }

// Token is the fencing token of a lease instance accepted at b.
func (b Ballot) Token() int64 { return int64(b.Counter) }

// String renders b as counter.incarnation, for logs and transcripts.
func (b Ballot) String() string { return fmt.Sprintf("%d.%d", b.Counter, b.Incarnation) }

// ballotSource issues this node's ballots. One counter serves every chunk:
// ballots only need to be unique and to climb past promises they are
// shown, and one counter per node keeps idle chunk instances small.
//
// With a wall clock (Config.WallMs) it is a paced hybrid clock: the
// counter's time part never falls below this node's wall clock (its
// reading at start plus elapsed time since), and it is never issued more
// than lead (L = MaxLeaseMs/4) ahead of it. A ballot that would have to
// be issued further ahead, to climb past a promise from a node whose
// clock runs ahead or past this node's own burst, waits until the wall
// clock allows it (next reports when). So every token t satisfies
// time(t) <= wall_issuer(issue) + L: the bound the restart floor rests on
// (doc.go "Fencing tokens"). Without a wall clock (transcripts) the
// counter only counts, and tokens order through promises alone.
type ballotSource struct {
	counter     uint64 // highest counter issued, or observed within the lead bound
	lane        uint64
	incarnation int64
	hasWall     bool
	wallUnits   int64         // the wall clock at start, in units since CounterEpochMs
	start       time.Duration // the core's clock at start
	unit        time.Duration // BallotUnit, or a test's coarser unit
	lead        uint64        // L in units
	pace        bool          // false only under the no-pacing weakening
}

// newBallotSource is the source of a node started at now.
func newBallotSource(cfg Config, now time.Duration) ballotSource {
	s := ballotSource{lane: uint64(cfg.lane()), incarnation: cfg.Incarnation, start: now,
		unit: cfg.unit(), pace: cfg.weaken != weakNoPacing}
	if cfg.weaken == weakNoLanes {
		s.lane = 0
	}
	if cfg.WallMs > 0 {
		s.hasWall = true
		s.wallUnits = int64(ms(cfg.WallMs-CounterEpochMs) / s.unit)
		s.lead = uint64(ms(cfg.MaxLeaseMs) / 4 / s.unit)
	}
	return s
}

// wall is this node's wall clock at now, in units since the epoch.
func (s *ballotSource) wall(now time.Duration) uint64 {
	return uint64(s.wallUnits + int64((now-s.start)/s.unit))
}

// wallAt is the core's time at which the wall clock reads units.
func (s *ballotSource) wallAt(units uint64) time.Duration {
	return s.start + time.Duration(int64(units)-s.wallUnits)*s.unit
}

// next issues a ballot above every ballot issued or observed so far and
// above need (a promise the attempt must climb past), or, when that
// ballot would lead the wall clock by more than L, issues nothing and
// returns when it can be issued.
func (s *ballotSource) next(now time.Duration, need uint64) (b Ballot, readyAt time.Duration) {
	k := max(s.counter, need)>>LaneBits + 1
	if s.hasWall {
		w := s.wall(now)
		k = max(k, w)
		if s.pace && k > w+s.lead {
			return Ballot{}, s.wallAt(k - s.lead)
		}
	}
	s.counter = k<<LaneBits | s.lane
	return Ballot{Counter: s.counter, Incarnation: s.incarnation}, now
}

// leadMs is how far a ballot above need would lead the wall clock at
// now, in whole milliseconds (0 without a wall clock), for error texts.
func (s *ballotSource) leadMs(now time.Duration, need uint64) int64 {
	if !s.hasWall {
		return 0
	}
	k, w := max(s.counter, need)>>LaneBits+1, s.wall(now)
	if k <= w {
		return 0
	}
	return int64(time.Duration(k-w) * s.unit / time.Millisecond)
}

// leadLimitMs is L in milliseconds.
func (s *ballotSource) leadLimitMs() int64 {
	return int64(time.Duration(s.lead) * s.unit / time.Millisecond)
}

// observe lets the source catch up past a counter seen in a promise, a
// request or a recovery answer, so the next attempt is not rejected for
// the same reason; with a wall clock only up to the lead bound, so that
// one node whose clock runs far ahead does not make this node pace every
// chunk: an attempt that must climb further names its need (next).
func (s *ballotSource) observe(now time.Duration, counter uint64) {
	if counter >= maxCounter {
		return
	}
	if s.hasWall && s.pace {
		counter = min(counter, (s.wall(now)+s.lead)<<LaneBits-1)
	}
	s.counter = max(s.counter, counter)
}

// floorAt is the counter of this node's wall clock at now (0 without a
// wall clock): below every ballot it may issue from then on.
func (s *ballotSource) floorAt(now time.Duration) uint64 {
	if !s.hasWall {
		return 0
	}
	return s.wall(now) << LaneBits
}
