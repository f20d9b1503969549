package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Fault is one kind of fault --nemesis can name.
type Fault string

// The faults --nemesis accepts, as Jepsen's combined nemesis names them.
const (
	Partition Fault = "partition" // partitions of the network (grudge.go)
	Kill      Fault = "kill"      // SIGKILL node processes, later start fresh ones
	Pause     Fault = "pause"     // SIGSTOP node processes, later SIGCONT them
	Clock     Fault = "clock"     // skew nodes' wall clocks and clock rates, later reset them (clock.go)
	// Packet delays (with jitter), loses, duplicates and reorders the
	// packets some nodes send, for a period (Jepsen's packet nemesis).
	Packet Fault = "packet"
	// Member changes the acceptor set while the run goes on: removes a
	// member or adds a node, one at a time, through a node's membership
	// procedure (the nodes run with LEASE_MEMBERSHIP=on).
	Member Fault = "member"
)

// KnownFaults lists the faults in the order help texts name them.
var KnownFaults = []Fault{Partition, Kill, Pause, Clock, Packet, Member}

// Faults is the set of faults a run injects.
type Faults struct {
	Partition, Kill, Pause, Clock, Packet, Member bool
}

// ParseFaults reads --nemesis: a comma-separated list of faults. As in
// Maelstrom the list is a set, so a fault named twice counts once; spaces
// around names are ignored, and an empty string means no faults.
func ParseFaults(s string) (Faults, error) {
	var f Faults
	if strings.TrimSpace(s) == "" {
		return f, nil
	}
	for _, name := range strings.Split(s, ",") {
		switch Fault(strings.TrimSpace(name)) {
		case Partition:
			f.Partition = true
		case Kill:
			f.Kill = true
		case Pause:
			f.Pause = true
		case Clock:
			f.Clock = true
		case Packet:
			f.Packet = true
		case Member:
			f.Member = true
		default:
			return Faults{}, fmt.Errorf("unknown fault %q: must be a comma-separated list of %s", strings.TrimSpace(name), faultNames())
		}
	}
	return f, nil
}

func faultNames() string {
	var names []string
	for _, f := range KnownFaults {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// Any reports whether some fault is enabled.
func (f Faults) Any() bool {
	return f.Partition || f.Kill || f.Pause || f.Clock || f.Packet || f.Member
}

// Process reports whether a process fault (kill or pause) is enabled:
// Jepsen's db package.
func (f Faults) Process() bool { return f.Kill || f.Pause }

// String lists the enabled faults, comma-separated, in KnownFaults order.
func (f Faults) String() string {
	var names []string
	for _, k := range KnownFaults {
		if f.Has(k) {
			names = append(names, string(k))
		}
	}
	return strings.Join(names, ",")
}

// Has reports whether fault k is enabled.
func (f Faults) Has(k Fault) bool {
	switch k {
	case Partition:
		return f.Partition
	case Kill:
		return f.Kill
	case Pause:
		return f.Pause
	case Clock:
		return f.Clock
	case Packet:
		return f.Packet
	case Member:
		return f.Member
	}
	return false
}

// NodeSpec chooses the nodes a kill or pause acts on: Jepsen's db-nodes
// specification for a database without primaries.
type NodeSpec string

// The node specifications; a kill or pause picks one uniformly.
const (
	SpecRandom        NodeSpec = ""               // Jepsen's nil: a random non-empty subset
	SpecOne           NodeSpec = "one"            // one random node
	SpecMinorityThird NodeSpec = "minority-third" // floor((n-1)/3) random nodes (none at n <= 3)
	SpecMinority      NodeSpec = "minority"       // majority(n)-1 random nodes
	SpecMajority      NodeSpec = "majority"       // majority(n) random nodes
	SpecAll           NodeSpec = "all"            // every node
)

// NodeSpecs are the specifications in Jepsen's order (node-specs).
var NodeSpecs = []NodeSpec{SpecRandom, SpecOne, SpecMinorityThird, SpecMinority, SpecMajority, SpecAll}

// PickNodes returns the nodes spec selects, in the order of nodes.
func PickNodes(spec NodeSpec, nodes []string, rng *rand.Rand) ([]string, error) {
	n := len(nodes)
	var k int
	switch spec {
	case SpecAll:
		return slices.Clone(nodes), nil
	case SpecRandom:
		if n == 0 {
			return nil, nil
		}
		k = 1 + rng.IntN(n)
	case SpecOne:
		k = min(1, n)
	case SpecMinorityThird:
		k = minorityThird(n)
	case SpecMinority:
		k = majority(n) - 1
	case SpecMajority:
		k = min(majority(n), n)
	default:
		return nil, fmt.Errorf("unknown node specification %q", spec)
	}
	chosen := map[string]bool{}
	for _, x := range shuffled(nodes, rng)[:k] {
		chosen[x] = true
	}
	return slices.DeleteFunc(slices.Clone(nodes), func(x string) bool { return !chosen[x] }), nil
}
