package netns

import (
	"errors"
	"fmt"
)

// ErrNeedRoot is wrapped by every error that comes from missing
// privileges: building a lab needs CAP_SYS_ADMIN and CAP_NET_ADMIN.
var ErrNeedRoot = errors.New("the real network (--network netns) needs root")

// ErrUnsupported is wrapped by every error that comes from the system
// itself: not Linux, or a kernel without network namespaces.
var ErrUnsupported = errors.New("the real network (--network netns) needs Linux network namespaces")

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

// PacketStats counts what one node's userspace delay path did since the
// lab was created (doc.go: the kernel's loss and duplicate rules are not
// counted here).
type PacketStats struct {
	// Delayed is how many packets were held for a delay.
	Delayed uint64 `json:"delayed"`
	// Immediate is how many queued packets left at once: reorders, and
	// draws whose jittered delay came to 0.
	Immediate uint64 `json:"immediate"`
	// MaxHeld is the most packets held at one time.
	MaxHeld int `json:"max_held"`
	// MeanLateUs and MaxLateUs say how long after its due time a held
	// packet got its verdict (the userspace path's own added delay), in
	// microseconds, over the packets released so far.
	MeanLateUs int64 `json:"mean_late_us"`
	MaxLateUs  int64 `json:"max_late_us"`
}
