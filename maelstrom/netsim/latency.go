package netsim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Dist is a latency distribution name, as Maelstrom's --latency-dist.
type Dist string

// The distributions Maelstrom offers (maelstrom-spec C.2).
const (
	Constant    Dist = "constant"    // every message takes exactly the mean
	Uniform     Dist = "uniform"     // an integer number of ms in [0, 2*mean)
	Exponential Dist = "exponential" // exponential with rate 1/mean, truncated to ms
)

// Latency is the node-to-node delay model: --latency MeanMs with
// --latency-dist Dist.
type Latency struct {
	MeanMs int
	Dist   Dist
}

// ParseDist reads a --latency-dist value.
func ParseDist(s string) (Dist, error) {
	switch d := Dist(s); d {
	case Constant, Uniform, Exponential:
		return d, nil
	}
	return "", fmt.Errorf("unknown latency distribution %q: use constant, uniform or exponential", s)
}

// Validate rejects models Maelstrom cannot run: a negative mean, and a zero
// mean with the uniform (Maelstrom's sampler never returns) or exponential
// (a division by zero) distribution.
func (l Latency) Validate() error {
	if _, err := ParseDist(string(l.Dist)); err != nil {
		return err
	}
	if l.MeanMs < 0 {
		return fmt.Errorf("latency must be >= 0 ms, got %d", l.MeanMs)
	}
	if l.MeanMs == 0 && l.Dist != Constant {
		return fmt.Errorf("--latency-dist %s needs --latency > 0 (a zero mean is only meaningful for constant)", l.Dist)
	}
	return nil
}

// sample draws one node-to-node delay.
func (l Latency) sample(rng *rand.Rand) time.Duration {
	var ms int64
	switch l.Dist {
	case Uniform:
		ms = rng.Int64N(2 * int64(l.MeanMs))
	case Exponential:
		ms = int64(rng.ExpFloat64() * float64(l.MeanMs))
	default:
		ms = int64(l.MeanMs)
	}
	return time.Duration(ms) * time.Millisecond
}

// IsClient reports whether an endpoint name is a client's. Maelstrom tells
// clients by a leading 'c': they get zero latency, are never partitioned
// and count as client traffic in the statistics.
func IsClient(name string) bool {
	return strings.HasPrefix(name, "c")
}
