package lease

import (
	"cmp"
	"fmt"
)

// Ballot numbers a proposal. Ballots are compared field by field, counter
// first, so a proposer that is shown a higher promise can jump past it by
// raising its counter (the blog's "ballot lanes" without fixed lane widths).
// Incarnation makes ballots unique across restarts of one node without
// disk: a restarted node starts its counter again at zero but with a
// larger incarnation. Node makes ballots unique across nodes.
type Ballot struct {
	Counter     uint64 `json:"counter"`
	Incarnation int64  `json:"incarnation"`
	Node        string `json:"node"`
}

// Compare returns -1, 0 or +1 as b is lower than, equal to or higher than o.
func (b Ballot) Compare(o Ballot) int {
	if c := cmp.Compare(b.Counter, o.Counter); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Incarnation, o.Incarnation); c != 0 {
		return c
	}
	return cmp.Compare(b.Node, o.Node)
}

// Less reports whether b orders before o.
func (b Ballot) Less(o Ballot) bool { return b.Compare(o) < 0 }

// IsZero reports whether b is the zero ballot, lower than every ballot a
// proposer issues (issued counters start at 1).
func (b Ballot) IsZero() bool { return b == Ballot{} }

// String renders b as counter.incarnation.node, for logs and transcripts.
func (b Ballot) String() string {
	return fmt.Sprintf("%d.%d.%s", b.Counter, b.Incarnation, b.Node)
}

// ballotSource issues this node's ballots. One counter serves every chunk:
// ballots only need to be unique and to climb past promises they are shown,
// and one counter per node keeps idle chunk instances small.
type ballotSource struct {
	counter     uint64
	incarnation int64
	node        string
}

// next issues a ballot higher than every ballot issued or observed so far.
func (s *ballotSource) next() Ballot {
	s.counter++
	return Ballot{Counter: s.counter, Incarnation: s.incarnation, Node: s.node}
}

// observe lets the source catch up past a ballot seen in a promise or a
// request, so the next attempt is not rejected for the same reason.
func (s *ballotSource) observe(b Ballot) {
	if b.Counter > s.counter {
		s.counter = b.Counter
	}
}
