package lease

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"slices"

	"chunklease/history"
	"chunklease/workloads"
)

// TimelineInput is everything the lease timeline shows. It is gathered
// chunk by chunk (lanePicker, earliestViolations), so the page can be
// drawn from a history read back from disk without holding it: only the
// chunks that get a lane keep their holdings.
type TimelineInput struct {
	Valid bool
	// The totals over every chunk.
	ChunkCount, HoldingCount int
	ViolationCount           int
	ProblemCount             int
	// Servers are every server that held a chunk, in natural order.
	Servers []string
	// Earliest are the earliest violations, earliest first, and Problems
	// the first history problems (ListedFindings of each at most).
	Earliest []Violation
	Problems []history.Problem
	// Lanes are the chunks drawn, in drawing order: those with
	// violations, then the busiest others; Rest sums up the others.
	Lanes  []TimelineLane
	Rest   RestCounts
	Faults []workloads.Fault
	// EndNs is the right edge: the last op or holding end.
	EndNs int64
	// DetailsFile is the file that lists every violation.
	DetailsFile string
}

// TimelineLane is one chunk drawn on the timeline.
type TimelineLane struct {
	Chunk      string
	Counts     ChunkCounts
	Holdings   []Holding   // by start
	Tokens     []string    // each holding's token as its reply wrote it; "?" when it had none
	Violations []Violation // the chunk's, in the checker's order
}

// RestCounts sums the chunks that get no lane.
type RestCounts struct{ Chunks, Holdings, Invoked int }

// TimelineInputOf gathers the timeline of a history held in memory and
// CheckLease's result on it.
func TimelineInputOf(ops []history.Op, res LeaseResult, lim TimelineLimits) TimelineInput {
	completions := map[int]json.RawMessage{}
	endNs := int64(1)
	for _, op := range ops {
		endNs = max(endNs, op.Time)
		if op.Type == history.OK {
			completions[op.Index] = op.Value
		}
	}
	holdings, broken := map[string][]Holding{}, map[string][]Violation{}
	var servers []string
	for _, h := range res.Holdings {
		holdings[h.Chunk] = append(holdings[h.Chunk], h)
		if !slices.Contains(servers, h.Server) {
			servers = append(servers, h.Server)
		}
		if h.EndNs != math.MaxInt64 {
			endNs = max(endNs, h.EndNs)
		}
	}
	for _, v := range res.Violations {
		broken[v.Chunk] = append(broken[v.Chunk], v)
	}
	picker := newLanePicker(lim)
	early := earliestViolations{limit: lim.ListedFindings}
	for _, c := range slices.SortedFunc(maps.Keys(res.Chunks), workloads.CompareNatural) {
		r := ChunkResult{Chunk: c, Counts: res.Chunks[c], Holdings: holdings[c], Violations: broken[c]}
		picker.offer(r, func() []string { return tokensOf(r.Holdings, completions) })
		early.offer(r, nil)
	}
	slices.SortFunc(servers, workloads.CompareNatural)
	in := TimelineInput{Valid: res.Valid, ChunkCount: len(res.Chunks), HoldingCount: len(res.Holdings),
		ViolationCount: len(res.Violations), ProblemCount: len(res.Problems), Servers: servers,
		Earliest: early.violations(), Faults: workloads.Faults(ops), EndNs: endNs, DetailsFile: "results.json"}
	in.Problems = res.Problems[:min(len(res.Problems), lim.ListedFindings)]
	in.Lanes, in.Rest = picker.lanes()
	return in
}

// tokensOf reads each holding's token from its ok completion's value.
func tokensOf(hs []Holding, completions map[int]json.RawMessage) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = tokenText(completions[h.CompletionIndex])
	}
	return out
}

// tokenText is the token of a reply value as written, "?" when it has
// none.
func tokenText(value json.RawMessage) string {
	var v struct {
		Token json.Number `json:"token"`
	}
	if json.Unmarshal(value, &v) != nil || v.Token == "" {
		return "?"
	}
	return v.Token.String()
}

// lanePicker chooses the timeline's lanes from chunks offered one at a
// time, in any order: the chunks with violations first in natural order
// (ViolationLanes at most), then the BusiestLanes busiest others (most
// ops invoked, natural order between equals). It keeps only the chunks
// that can still get a lane: the first ViolationLanes violating ones, and
// the ViolationLanes + BusiestLanes busiest of all, which include the
// BusiestLanes busiest of those not drawn for their violations.
type lanePicker struct {
	lim       TimelineLimits
	violating []TimelineLane // natural order
	busiest   []TimelineLane // busiest first
	total     RestCounts     // every chunk offered
}

func newLanePicker(lim TimelineLimits) *lanePicker { return &lanePicker{lim: lim} }

// offer considers one chunk; tokens reads its holdings' tokens, called
// only when the chunk is kept.
func (p *lanePicker) offer(r ChunkResult, tokens func() []string) {
	p.total.Chunks++
	p.total.Holdings += r.Counts.Holdings
	p.total.Invoked += r.Counts.Invoked
	var lane *TimelineLane
	keep := func() TimelineLane {
		if lane == nil {
			lane = &TimelineLane{Chunk: r.Chunk, Counts: r.Counts, Holdings: r.Holdings, Tokens: tokens(), Violations: r.Violations}
		}
		return *lane
	}
	if len(r.Violations) > 0 {
		p.violating = insertBounded(p.violating, p.lim.ViolationLanes, r.Chunk, r.Counts, byNatural, keep)
	}
	p.busiest = insertBounded(p.busiest, p.lim.ViolationLanes+p.lim.BusiestLanes, r.Chunk, r.Counts, byBusy, keep)
}

// laneOrder orders lanes by chunk and counts.
type laneOrder func(chunkA string, a ChunkCounts, chunkB string, b ChunkCounts) int

func byNatural(a string, _ ChunkCounts, b string, _ ChunkCounts) int {
	return workloads.CompareNatural(a, b)
}

func byBusy(a string, ca ChunkCounts, b string, cb ChunkCounts) int {
	return cmp.Or(cmp.Compare(cb.Invoked, ca.Invoked), workloads.CompareNatural(a, b))
}

// insertBounded inserts the lane keep makes into the sorted list when it
// ranks among the first limit.
func insertBounded(list []TimelineLane, limit int, chunk string, counts ChunkCounts, order laneOrder, keep func() TimelineLane) []TimelineLane {
	i, _ := slices.BinarySearchFunc(list, chunk, func(l TimelineLane, _ string) int {
		return order(l.Chunk, l.Counts, chunk, counts)
	})
	if i >= limit {
		return list
	}
	list = slices.Insert(list, i, keep())
	if len(list) > limit {
		list[limit] = TimelineLane{} // let the lane pushed out go
		list = list[:limit]
	}
	return list
}

// merge adds the chunks o was offered (a disjoint set).
func (p *lanePicker) merge(o *lanePicker) {
	for _, l := range o.violating {
		p.violating = insertBounded(p.violating, p.lim.ViolationLanes, l.Chunk, l.Counts, byNatural, func() TimelineLane { return l })
	}
	for _, l := range o.busiest {
		p.busiest = insertBounded(p.busiest, p.lim.ViolationLanes+p.lim.BusiestLanes, l.Chunk, l.Counts, byBusy, func() TimelineLane { return l })
	}
	p.total.Chunks += o.total.Chunks
	p.total.Holdings += o.total.Holdings
	p.total.Invoked += o.total.Invoked
}

// lanes are the chosen lanes in drawing order and the sums of the rest.
func (p *lanePicker) lanes() ([]TimelineLane, RestCounts) {
	lanes := slices.Clone(p.violating)
	var busy []TimelineLane
	for _, l := range p.busiest {
		drawn := slices.ContainsFunc(p.violating, func(v TimelineLane) bool { return v.Chunk == l.Chunk })
		if !drawn && len(busy) < p.lim.BusiestLanes {
			busy = append(busy, l)
		}
	}
	slices.SortFunc(busy, func(a, b TimelineLane) int { return workloads.CompareNatural(a.Chunk, b.Chunk) })
	lanes = append(lanes, busy...)
	rest := p.total
	for _, l := range lanes {
		rest.Chunks--
		rest.Holdings -= l.Counts.Holdings
		rest.Invoked -= l.Counts.Invoked
	}
	return lanes, rest
}

// earliestViolations keeps the limit earliest violations of the chunks
// offered, in the order the timeline lists them: by start, then as
// CheckLease lists them (chunks in natural order, each chunk's in order).
type earliestViolations struct {
	limit int
	list  []rankedViolation
}

// rankedViolation is a violation with what ranks it and, when the
// chunk's ops were at hand, the time span of the ops it names and those
// ops (for the message diagram's focus).
type rankedViolation struct {
	v            Violation
	pos          int // its place among its chunk's violations
	fromNs, toNs int64
	ops          []workloads.FocusOp
}

func (r rankedViolation) compare(o rankedViolation) int {
	return cmp.Or(cmp.Compare(r.v.StartNs, o.v.StartNs), workloads.CompareNatural(r.v.Chunk, o.v.Chunk), cmp.Compare(r.pos, o.pos))
}

// offer considers the violations of one chunk; byInvoke, when not nil,
// gives the chunk's ops by invoke index.
func (e *earliestViolations) offer(r ChunkResult, byInvoke map[int]history.Pair) {
	for pos, v := range r.Violations {
		rv := rankedViolation{v: v, pos: pos, fromNs: v.StartNs, toNs: v.EndNs}
		for i := 0; i+1 < len(v.Ops); i += 2 {
			if p, ok := byInvoke[v.Ops[i]]; ok {
				op := focusOp(p)
				rv.fromNs, rv.toNs = min(rv.fromNs, op.InvokeNs), max(rv.toNs, op.DoneNs)
				rv.ops = append(rv.ops, op)
			}
		}
		e.insert(rv)
	}
}

// focusOp describes a violation's op for the message diagram; an op
// never completed is done when invoked.
func focusOp(p history.Pair) workloads.FocusOp {
	op := workloads.FocusOp{Index: p.Invoke.Index, DoneIndex: -1, F: p.Invoke.F, Node: answeringNode(p),
		InvokeNs: p.Invoke.Time, DoneNs: p.Invoke.Time}
	if p.Completion != nil {
		op.DoneIndex, op.DoneNs = p.Completion.Index, p.Completion.Time
	}
	return op
}

func (e *earliestViolations) insert(rv rankedViolation) {
	i, _ := slices.BinarySearchFunc(e.list, rv, rankedViolation.compare)
	if i >= e.limit {
		return
	}
	e.list = slices.Insert(e.list, i, rv)
	if len(e.list) > e.limit {
		e.list[e.limit] = rankedViolation{}
		e.list = e.list[:e.limit]
	}
}

func (e *earliestViolations) merge(o *earliestViolations) {
	for _, rv := range o.list {
		e.insert(rv)
	}
}

// violations are the kept violations, earliest first.
func (e *earliestViolations) violations() []Violation {
	out := make([]Violation, len(e.list))
	for i, rv := range e.list {
		out[i] = rv.v
	}
	return out
}

// TimelineLimits keep the page small for any run: a lane for every chunk
// with a violation (up to ViolationLanes), the BusiestLanes busiest other
// chunks, and one summary line for the rest. A lane with more than
// MarksPerLane holdings draws back-to-back holdings of one server as one
// bar (its tooltip says how many), which a screen could not tell apart
// anyway.
type TimelineLimits struct {
	ViolationLanes int
	BusiestLanes   int
	MarksPerLane   int
	ListedFindings int // violations listed in the summary
}

// DefaultTimelineLimits bound a timeline to a few megabytes at most.
var DefaultTimelineLimits = TimelineLimits{ViolationLanes: 200, BusiestLanes: 40, MarksPerLane: 400, ListedFindings: 50}
