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
