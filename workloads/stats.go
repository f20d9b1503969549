package workloads

import (
	"math"
	"slices"
	"sort"
)

// Partition nemesis f values (Jepsen's).
const (
	StartPartition = "start-partition"
	StopPartition  = "stop-partition"
)

// Interval is a time span in nanoseconds since the test started. A
// partition that was never healed in the history has EndNs = math.MaxInt64.
type Interval struct {
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
}

// contains reports whether t is in [StartNs, EndNs).
func (iv Interval) contains(t int64) bool { return iv.StartNs <= t && t < iv.EndNs }

// Partitions returns the intervals during which the network was
// partitioned: from a start-partition op to the next stop-partition op.
// When the nemesis writes both an invoke and a completion for a step, the
// later one (the completion) counts: the partition is in force from the
// moment the nemesis finished installing it until it finished healing it.
func Partitions(history []Op) []Interval {
	var out []Interval
	open := false
	for _, op := range history {
		if !op.Process.Nemesis {
			continue
		}
		switch op.F {
		case StartPartition:
			if !open {
				out = append(out, Interval{StartNs: op.Time, EndNs: math.MaxInt64})
				open = true
			} else {
				out[len(out)-1].StartNs = op.Time // the completion of the same start
			}
		case StopPartition:
			if open {
				out[len(out)-1].EndNs = op.Time
				open = false
			} else if len(out) > 0 {
				out[len(out)-1].EndNs = op.Time // the completion of the same stop
			}
		}
	}
	return out
}

// Stats is what every workload adds to results.json beside its checker's
// verdict.
type Stats struct {
	Availability      Availability           `json:"availability"`
	LatencyMs         map[string]Percentiles `json:"latency_ms"` // per f, ok ops only
	Partitions        []Interval             `json:"partitions"`
	Messages          int                    `json:"messages"`           // network messages, from the harness
	ClientInvocations int                    `json:"client_invocations"` // client invoke ops
	MessagesPerOp     float64                `json:"messages_per_op"`    // messages / invocations; 0 without invocations
}

// Availability is the ok fraction of client ops, overall and split by
// whether the op was invoked inside a partition.
type Availability struct {
	Overall          OKFractions `json:"overall"`
	InsidePartition  OKFractions `json:"inside_partition"`
	OutsidePartition OKFractions `json:"outside_partition"`
}

// OKFractions is an ok fraction over all client ops and per f.
type OKFractions struct {
	All OKFraction            `json:"all"`
	ByF map[string]OKFraction `json:"by_f"`
}

// OKFraction is ok completions over invocations. Fraction is 1 when there
// were no invocations, as in Maelstrom's availability checker.
type OKFraction struct {
	Invoked  int     `json:"invoked"`
	OK       int     `json:"ok"`
	Fraction float64 `json:"fraction"`
}

// Percentiles summarises latencies in milliseconds (nearest rank).
type Percentiles struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// ComputeStats derives the generic statistics from a history and the
// network's message count.
func ComputeStats(history []Op, messages int) Stats {
	pairs, _ := PairOps(history)
	parts := Partitions(history)
	s := Stats{Partitions: parts, Messages: messages, ClientInvocations: len(pairs)}
	if s.Partitions == nil {
		s.Partitions = []Interval{}
	}
	if len(pairs) > 0 {
		s.MessagesPerOp = float64(messages) / float64(len(pairs))
	}
	overall, inside, outside := newOKFractions(), newOKFractions(), newOKFractions()
	latencies := map[string][]float64{}
	for _, p := range pairs {
		ok := p.Completion != nil && p.Completion.Type == OK
		overall.add(p.Invoke.F, ok)
		if inPartition(parts, p.Invoke.Time) {
			inside.add(p.Invoke.F, ok)
		} else {
			outside.add(p.Invoke.F, ok)
		}
		if ok {
			latencies[p.Invoke.F] = append(latencies[p.Invoke.F], nsToMs(p.Completion.Time-p.Invoke.Time))
		}
	}
	s.Availability = Availability{overall.done(), inside.done(), outside.done()}
	s.LatencyMs = map[string]Percentiles{}
	for f, l := range latencies {
		s.LatencyMs[f] = percentiles(l)
	}
	return s
}

func inPartition(parts []Interval, t int64) bool {
	for _, iv := range parts {
		if iv.contains(t) {
			return true
		}
	}
	return false
}

func newOKFractions() OKFractions { return OKFractions{ByF: map[string]OKFraction{}} }

func (o *OKFractions) add(f string, ok bool) {
	o.All = o.All.add(ok)
	o.ByF[f] = o.ByF[f].add(ok)
}

func (o OKFraction) add(ok bool) OKFraction {
	o.Invoked++
	if ok {
		o.OK++
	}
	return o
}

// done fills in the fractions.
func (o OKFractions) done() OKFractions {
	o.All = o.All.withFraction()
	for f, v := range o.ByF {
		o.ByF[f] = v.withFraction()
	}
	return o
}

func (o OKFraction) withFraction() OKFraction {
	o.Fraction = 1
	if o.Invoked > 0 {
		o.Fraction = float64(o.OK) / float64(o.Invoked)
	}
	return o
}

// percentiles uses the nearest-rank method: the p-th percentile of n
// sorted samples is sample ceil(p*n) (1-based).
func percentiles(samples []float64) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(samples)
	sort.Float64s(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return Percentiles{Count: len(s), P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Max: s[len(s)-1]}
}

func nsToMs(ns int64) float64 { return float64(ns) / 1e6 }
