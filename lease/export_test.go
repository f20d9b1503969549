package lease

import (
	"fmt"
	"sort"
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

// Recovering reports whether the node's acceptor is still recovering its
// ballot floor after a restart.
func (n *Node) Recovering() bool { return n.recovering }
