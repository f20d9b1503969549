package netns

import "fmt"

// Config says what a lab holds.
type Config struct {
	// Nodes are the node ids, one namespace and address each: the i-th
	// (from 0) gets 198.18.0.(i+1). 1 to maxNodes ids, unique, each 1 to
	// 64 letters, digits, '_', '.' or '-'.
	Nodes []string
	// Seed seeds the userspace delay path (jitter and reorder draws),
	// one independent stream per node, so a seed fixes each node's
	// sequence of draws. The kernel's loss and duplicate draws are the
	// kernel's own and cannot be seeded.
	Seed uint64
	// Logf receives one line for everything a lab does that the caller
	// did not ask for: a stale lab removed, a process left in a
	// namespace killed at Close. nil: standard error.
	Logf func(format string, args ...any)
}

// maxNodes: node addresses are 198.18.0.1 to .126 (198.18.0.0/25, the
// block the packet rules match), the client is 198.18.0.254.
const maxNodes = 126

func (c Config) validate() error {
	if len(c.Nodes) == 0 || len(c.Nodes) > maxNodes {
		return fmt.Errorf("a lab holds 1 to %d nodes, not %d", maxNodes, len(c.Nodes))
	}
	seen := map[string]bool{}
	for _, id := range c.Nodes {
		if err := validNodeID(id); err != nil {
			return err
		}
		if seen[id] {
			return fmt.Errorf("node id %q is listed twice", id)
		}
		seen[id] = true
	}
	return nil
}
