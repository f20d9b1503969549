package lease

import (
	"fmt"
	"sort"
	"time"
)

// WithWeakening returns c with one safety rule switched off, for the
// simulation's negative controls. It exists only in test builds.
func WithWeakening(c Config, name string) (Config, error) {
	for w, n := range weakeningNames {
		if n == name {
			c.weaken = w
			return c, nil
		}
	}
	return c, fmt.Errorf("unknown weakening %q", name)
}

// WeakeningNames lists the weakenings, "none" excluded.
func WeakeningNames() []string {
	var out []string
	for w, n := range weakeningNames {
		if w != strong {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ServedUnrecovered reports whether the node's acceptor began serving
// after its boot wait before its recovery was complete.
func (n *Node) ServedUnrecovered() bool { return n.boot.unrecovered }

// Booting reports whether the node's acceptor is in its boot wait at now.
func (n *Node) Booting(now time.Duration) bool { return now < n.bootUntil }

// WithBallotUnit returns c with a coarser ballot-counter unit, so that a
// simulated load of tens of ballots a second drives the counter against
// the lead bound as 10 000 a second would with BallotUnit.
func WithBallotUnit(c Config, unit time.Duration) Config {
	c.ballotUnit = unit
	return c
}

// SlotsTaken is how many client requests hold a request slot
// (admission.go), and how many wait for one.
func (n *Node) SlotsTaken() int { return n.inFlight + len(n.waiting) }

// SpareReachable reports the first kept request or attempt (kept for
// reuse: dropAnswered, retireAttempt) that the node still points to, or
// "" when none is: a kept one that is reachable could be reused while in
// use. The simulation asks after every step.
func (n *Node) SpareReachable() string {
	spareReq := map[*request]bool{}
	for _, r := range n.spareRequests {
		spareReq[r] = true
	}
	spareAtt := map[*attempt]bool{}
	for _, a := range n.spareAttempts {
		spareAtt[a] = true
	}
	for _, a := range n.endedAttempts {
		spareAtt[a] = true
	}
	spareRead := map[*readRound]bool{}
	for _, rd := range n.spareReads {
		spareRead[rd] = true
	}
	if len(spareReq) != len(n.spareRequests) || len(spareAtt) != len(n.spareAttempts)+len(n.endedAttempts) ||
		len(spareRead) != len(n.spareReads) {
		return "a request or attempt is kept twice"
	}
	live := func(where string, r *request) string {
		switch {
		case spareReq[r]:
			return fmt.Sprintf("request %d (%v %s) is kept for reuse and still in %s", r.ID, r.Op, r.Chunk, where)
		case r.att != nil && spareAtt[r.att]:
			return fmt.Sprintf("the attempt of request %d (%v %s), in %s, is kept for reuse", r.ID, r.Op, r.Chunk, where)
		case r.rd != nil && spareRead[r.rd]:
			return fmt.Sprintf("the read round of request %d (%v %s), in %s, is kept for reuse", r.ID, r.Op, r.Chunk, where)
		}
		return ""
	}
	for _, r := range n.pending {
		if s := live("the pending list", r); s != "" {
			return s
		}
	}
	for _, r := range n.waiting {
		if s := live("the waiting list", r); s != "" {
			return s
		}
	}
	for chunk, q := range n.queues {
		for _, r := range q {
			if s := live("the queue of "+chunk, r); s != "" {
				return s
			}
		}
	}
	for _, r := range n.byReq {
		if s := live("the reads and releases by id", r); s != "" {
			return s
		}
	}
	if n.changer != nil && n.changer.r != nil {
		if s := live("the change run", n.changer.r); s != "" {
			return s
		}
	}
	return n.selfRecordLeft()
}

// selfRecordLeft reports a message of the call's output whose Lease
// points into selfRecords (which the next call reuses), or "" when none
// does: only answers handled within the call may (attachRecord).
func (n *Node) selfRecordLeft() string {
	buf := n.selfRecords[:cap(n.selfRecords)]
	for _, m := range n.out.Msgs {
		for i := range buf {
			if m.Lease == &buf[i] {
				return fmt.Sprintf("the %s to %s about %q points into the records the node reuses", m.Type, m.To, m.Chunk)
			}
		}
	}
	return ""
}

// DecodeFields decodes a client request through encoding/json only, as
// DecodeRequest does every body that decodeFlat leaves to it.
func DecodeFields(typ string, body []byte) (Request, *Error) {
	return decodeFields(typ, Ops[typ], body)
}

// DecodesFlat reports whether DecodeRequest reads body without
// encoding/json (decodeFlat).
func DecodesFlat(typ string, body []byte) bool {
	_, ok := decodeFlat(Ops[typ], body)
	return ok
}
