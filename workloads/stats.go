package workloads

import (
	"encoding/json"
	"math"
	"slices"
	"sort"

	"chunklease/history"
)

// Nemesis f values (Jepsen's): partitions, and the process faults.
const (
	StartPartition = "start-partition"
	StopPartition  = "stop-partition"
	NemesisKill    = "kill"         // completion value: the nodes killed
	NemesisStart   = "start"        // completion value: the nodes started again
	NemesisPause   = "pause"        // completion value: the nodes paused
	NemesisResume  = "resume"       // completion value: the nodes resumed
	StartPacket    = "start-packet" // completion value: the settings applied, with "nodes"
	StopPacket     = "stop-packet"  // completion value: the nodes whose links were restored
)

// Interval is a time span in nanoseconds since the test started. A
// fault that was never healed in the history has EndNs = math.MaxInt64.
type Interval struct {
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
}

// contains reports whether t is in [StartNs, EndNs).
func (iv Interval) Contains(t int64) bool { return iv.StartNs <= t && t < iv.EndNs }

// Partitions returns the intervals during which the network was
// partitioned: from a start-partition op to the next stop-partition op.
// When the nemesis writes both an invoke and a completion for a step, the
// later one (the completion) counts: the partition is in force from the
// moment the nemesis finished installing it until it finished healing it.
// A partition whose grudge cuts nobody off (a minority-third at 3 nodes)
// is no partition: it has no interval.
func Partitions(ops []history.Op) []Interval {
	var out []Interval
	open, empty := false, false
	for _, op := range ops {
		if !op.Process.Nemesis {
			continue
		}
		switch op.F {
		case StartPartition:
			switch {
			case !open:
				out = append(out, Interval{StartNs: op.Time, EndNs: math.MaxInt64})
				open, empty = true, false
			case CutsNobody(op.Value): // the completion of the same start
				out, empty = out[:len(out)-1], true
			default:
				out[len(out)-1].StartNs = op.Time // the completion of the same start
			}
		case StopPartition:
			switch {
			case empty: // the stop of a partition that cut nobody off, or its completion
				open = false
			case open:
				out[len(out)-1].EndNs = op.Time
				open = false
			case len(out) > 0:
				out[len(out)-1].EndNs = op.Time // the completion of the same stop
			}
		}
	}
	return out
}

// CutsNobody reports whether a start-partition completion's value
// (["isolated", grudge]) is a grudge that cuts no node off.
func CutsNobody(value json.RawMessage) bool {
	var v []json.RawMessage
	var g map[string][]string
	if json.Unmarshal(value, &v) != nil || len(v) != 2 || json.Unmarshal(v[1], &g) != nil {
		return false
	}
	_, cut := DescribeGrudge(g)
	return len(cut) == 0
}

// NemesisStep is one nemesis operation: its invoke and its completion.
// The nemesis performs one op at a time, so its ops pair up in order.
type NemesisStep struct {
	F      string
	DoneNs int64           // the completion's time; MaxInt64 if it never completed
	Nodes  []string        // the nodes the completion names (kill, start, pause, resume: its list; start-packet: its "nodes")
	Value  json.RawMessage // the completion's value
}

// Completed reports whether the step's completion is in the history.
func (st NemesisStep) Completed() bool { return st.DoneNs != math.MaxInt64 }

// NemesisSteps pairs the nemesis ops of a history (its nemesis ops alone
// will do).
func NemesisSteps(ops []history.Op) []NemesisStep {
	var steps []NemesisStep
	pending := false
	for _, op := range ops {
		if !op.Process.Nemesis {
			continue
		}
		if !pending {
			steps = append(steps, NemesisStep{F: op.F, DoneNs: math.MaxInt64})
			pending = true
			continue
		}
		st := &steps[len(steps)-1]
		st.DoneNs, st.Value = op.Time, op.Value
		if json.Unmarshal(op.Value, &st.Nodes) != nil { // partitions and null values are no node lists
			var settings struct{ Nodes []string }
			_ = json.Unmarshal(op.Value, &settings)
			st.Nodes = settings.Nodes
		}
		pending = false
	}
	return steps
}

// processDown returns the intervals during which some node was down by a
// process fault: from a begin step (kill or pause) that hit nodes to the
// end step (start or resume, which act on every node) that follows.
func processDown(steps []NemesisStep, begin, end string) []Interval {
	var out []Interval
	open := false
	for _, st := range steps {
		switch {
		case st.F == begin && len(st.Nodes) > 0 && !open:
			out = append(out, Interval{StartNs: st.DoneNs, EndNs: math.MaxInt64})
			open = true
		case st.F == end && open:
			out[len(out)-1].EndNs = st.DoneNs
			open = false
		}
	}
	return out
}

// FaultIntervals returns the intervals during which some fault was in
// force: a partition, a killed node not yet started again, a paused node
// not yet resumed, or a packet fault on some node's links. Each fault
// counts from the completion of the op that caused it to the completion
// of the op that healed it; overlapping faults merge into one interval.
func FaultIntervals(ops []history.Op) []Interval {
	steps := NemesisSteps(ops)
	all := Partitions(ops)
	all = append(all, processDown(steps, NemesisKill, NemesisStart)...)
	all = append(all, processDown(steps, NemesisPause, NemesisResume)...)
	all = append(all, processDown(steps, StartPacket, StopPacket)...)
	return UniteSpans(all)
}

// Heal is a nemesis op that ended a fault in force: a stop-partition
// that healed a partition, a start that brought killed nodes back (after
// their fresh init), a resume that woke paused nodes, a stop-packet that
// put faulty links back to normal.
type Heal struct {
	F    string `json:"f"`
	AtNs int64  `json:"at_ns"` // the op's completion
}

// Heals lists the heal ops of a history in order.
func Heals(ops []history.Op) []Heal {
	var out []Heal
	partitioned := false
	for _, st := range NemesisSteps(ops) {
		healed := false
		switch st.F {
		case StartPartition:
			partitioned = !CutsNobody(st.Value)
		case StopPartition:
			healed, partitioned = partitioned, false
		case NemesisStart, NemesisResume, StopPacket:
			healed = len(st.Nodes) > 0
		}
		if healed && st.DoneNs != math.MaxInt64 {
			out = append(out, Heal{F: st.F, AtNs: st.DoneNs})
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
	FaultIntervals    []Interval             `json:"fault_intervals"`           // some fault in force (FaultIntervals)
	Messages          *int                   `json:"messages,omitempty"`        // network messages, from the harness; nil when not counted
	ClientInvocations int                    `json:"client_invocations"`        // client invoke ops
	MessagesPerOp     *float64               `json:"messages_per_op,omitempty"` // messages / invocations; 0 without invocations; nil when not counted
}

// Availability is the ok fraction of client ops, overall and split by
// whether the op was invoked inside a partition, and inside any fault
// (a partition, a killed or a paused node, a packet fault:
// FaultIntervals).
type Availability struct {
	Overall          OKFractions `json:"overall"`
	InsidePartition  OKFractions `json:"inside_partition"`
	OutsidePartition OKFractions `json:"outside_partition"`
	InsideFaults     OKFractions `json:"inside_faults"`
	OutsideFaults    OKFractions `json:"outside_faults"`
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

// UnknownMessages stands for the message count of a network that does
// not count messages (statistics then have no messages per op).
const UnknownMessages = -1

// ComputeStats derives the generic statistics from a history and the
// network's message count (UnknownMessages when not counted).
func ComputeStats(ops []history.Op, messages int) Stats {
	b := NewStatsBuilder(ops)
	pairs, _ := history.PairOps(ops)
	for _, p := range pairs {
		b.Add(p)
	}
	return b.Result(messages)
}

// StatsBuilder computes Stats from the pairs of a history, one at a time,
// in memory that does not grow with the history (SampleSet): the
// nemesis ops, which fix the partitions and faults, come first.
type StatsBuilder struct {
	parts, faults                               []Interval
	overall, inPart, outPart, inFault, outFault OKFractions
	latencies                                   map[string]*SampleSet // per f, ok ops, in ms
	invocations                                 int
}

// NewStatsBuilder reads the partitions and faults from the nemesis ops
// of history (other ops are ignored).
func NewStatsBuilder(ops []history.Op) *StatsBuilder {
	return &StatsBuilder{parts: Partitions(ops), faults: FaultIntervals(ops),
		overall: newOKFractions(), inPart: newOKFractions(), outPart: newOKFractions(),
		inFault: newOKFractions(), outFault: newOKFractions(), latencies: map[string]*SampleSet{}}
}

// add counts one client op (an invocation, its completion if any).
func (b *StatsBuilder) Add(p history.Pair) {
	b.invocations++
	ok := p.Completion != nil && p.Completion.Type == history.OK
	f := p.Invoke.F
	b.overall.add(f, ok)
	split(b.parts, p.Invoke.Time, &b.inPart, &b.outPart).add(f, ok)
	split(b.faults, p.Invoke.Time, &b.inFault, &b.outFault).add(f, ok)
	if ok {
		l := b.latencies[f]
		if l == nil {
			l = &SampleSet{}
			b.latencies[f] = l
		}
		l.Add(NsToMs(p.Completion.Time - p.Invoke.Time))
	}
}

// result is the statistics of the pairs added so far.
func (b *StatsBuilder) Result(messages int) Stats {
	s := Stats{Partitions: NonNil(b.parts), FaultIntervals: NonNil(b.faults), ClientInvocations: b.invocations}
	if messages != UnknownMessages {
		perOp := 0.0
		if b.invocations > 0 {
			perOp = float64(messages) / float64(b.invocations)
		}
		s.Messages, s.MessagesPerOp = &messages, &perOp
	}
	s.Availability = Availability{b.overall.done(), b.inPart.done(), b.outPart.done(), b.inFault.done(), b.outFault.done()}
	s.LatencyMs = map[string]Percentiles{}
	for f, l := range b.latencies {
		s.LatencyMs[f] = l.Percentiles()
	}
	return s
}

// inAny reports whether t lies in one of the intervals.
func InAny(ivs []Interval, t int64) bool {
	for _, iv := range ivs {
		if iv.Contains(t) {
			return true
		}
	}
	return false
}

// split returns inside when t lies in one of the intervals, else outside.
func split(ivs []Interval, t int64, inside, outside *OKFractions) *OKFractions {
	if InAny(ivs, t) {
		return inside
	}
	return outside
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

// PercentilesOf uses the nearest-rank method: the p-th percentile of n
// sorted samples is sample ceil(p*n) (1-based).
func PercentilesOf(samples []float64) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(samples)
	sort.Float64s(s)
	return Percentiles{Count: len(s), P50: NearestRank(s, 0.50), P95: NearestRank(s, 0.95), P99: NearestRank(s, 0.99), Max: s[len(s)-1]}
}

// nearestRank is the q-quantile of sorted samples (sample ceil(q*n),
// 1-based); 0 without samples.
func NearestRank(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// NsToMs is a duration in nanoseconds in milliseconds.
func NsToMs(ns int64) float64 { return float64(ns) / 1e6 }

// NonNil is s, or an empty slice for nil, so JSON shows [] not null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
