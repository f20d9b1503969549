package lease

import (
	"cmp"
	"fmt"
	"time"
)

// Ballot numbers a proposal. Counter is unique across nodes: its low
// LaneBits bits are the proposing node's lane (its position in
// Config.Nodes), the rest climbs, so two nodes never issue the same
// counter (the blog's ballot lanes, here with the wall clock as a floor).
// Incarnation is the proposing process's start (microseconds of the wall
// clock): a restarted node whose counter happens to start below its
// earlier ballots still never issues an earlier ballot again, and an
// acceptor refuses a different ballot with an equal counter (atLeast).
//
// The counter of the ballot a lease instance was accepted with is the
// instance's fencing token: unique (lanes), and larger than the token of
// every instance that completed before the attempt was prepared
// (promises, see doc.go "Fencing tokens").
type Ballot struct {
	Counter     uint64 `json:"counter"`
	Incarnation int64  `json:"incarnation"`
}

// LaneBits is the number of low counter bits that name the proposing
// node: at most 1<<LaneBits nodes.
const LaneBits = 7

// maxWire bounds every number the core puts on the wire: JSON numbers
// beyond 2^53 are not exact in JavaScript or jq.
const maxWire = 1 << 53

// maxCounter bounds every ballot counter the core accepts from the wire
// or observes: 2^52, so that above any counter it has seen a node can
// still issue 2^45 larger ones before reaching maxWire. Honest counters
// are the wall clock in milliseconds shifted past the lane bits (about
// 2^40.7 ms << 7 = 2^47.7 today; 2^52 when the clock reaches 2^45 ms, in
// the year 3084), so only a broken or forged message carries one this
// large; accepting it would leave no ballot above it, and every proposer
// that saw it could never be promised again.
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
// shown, and one counter per node keeps idle chunk instances small. It is
// a hybrid clock: the counter never falls below the wall clock in
// milliseconds (shifted past the lane bits), so that after a restart of
// the whole cluster, when no acceptor remembers any promise, new tokens
// still exceed the old ones as long as the old counters did not run
// ahead of the wall clock (fewer than 1000 ballots a second on average)
// and the nodes' wall clocks agree within the boot wait.
type ballotSource struct {
	counter     uint64 // highest counter issued or observed
	lane        uint64
	incarnation int64
	wallMs      int64         // wall clock in ms at start; 0 disables the floor
	start       time.Duration // the core's clock at start
}

// next issues a ballot higher than every ballot issued or observed so far.
func (s *ballotSource) next(now time.Duration) Ballot {
	k := s.counter>>LaneBits + 1
	if s.wallMs > 0 {
		k = max(k, uint64(s.wallMs+int64((now-s.start)/time.Millisecond)))
	}
	s.counter = k<<LaneBits | s.lane
	return Ballot{Counter: s.counter, Incarnation: s.incarnation}
}

// observe lets the source catch up past a counter seen in a promise, a
// request or a recovery answer, so the next attempt is not rejected for
// the same reason.
func (s *ballotSource) observe(counter uint64) {
	if counter > s.counter && counter < maxCounter {
		s.counter = counter
	}
}
