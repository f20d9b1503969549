package master

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"chunklease/history"
	"chunklease/workloads"
)

// The violations CheckMaster reports.
const (
	// TwoMasters: two different nodes' belief intervals overlap.
	TwoMasters = "two-masters"
	// TokenMissing: an answer said is_master without a token.
	TokenMissing = "token-missing"
	// TokenShared: two different nodes were told the same token.
	TokenShared = "token-shared"
	// TokenBack: a master's token is below a token an earlier master was
	// told (the earlier belief ended before this one began). With
	// TokenShared, a master's token is above every token an earlier
	// master was told.
	TokenBack = "token-back"
)

// MasterResult is the master checker's verdict.
type MasterResult struct {
	Valid  bool                    `json:"valid"`
	Counts map[string]MasterCounts `json:"counts"` // per f
	// IsMasterAnswers counts the ok statuses that answered is_master true.
	IsMasterAnswers int `json:"is_master_answers"`
	// Beliefs counts the non-empty belief intervals; BeliefsEmpty the
	// is_master answers left without an interval (the reply came after
	// invoke + remaining_ms).
	Beliefs      int `json:"beliefs"`
	BeliefsEmpty int `json:"beliefs_empty"`
	// Tenures are each node's merged belief intervals, by start.
	Tenures []MasterTenure `json:"tenures"`
	// ViolationCount is the number of violations and ViolationsByKind
	// counts them by kind. Violations lists them in start order: every
	// one in CheckMaster's result, the first SummaryViolations in the
	// summary results.json holds (SummarizeMaster), whose Details file
	// lists every one.
	ViolationCount   int               `json:"violation_count"`
	ViolationsByKind map[string]int    `json:"violations_by_kind"`
	Violations       []MasterViolation `json:"violations"`
	// Problems are structural defects that make the history unjudgeable
	// (and the result invalid). Anomalies are answers that contradict
	// the contract without endangering safety (is_master true naming
	// another master, remaining_ms > 0 while not master); they are
	// reported for a person to read and do not change the verdict. The
	// summary lists the first SummaryViolations of each; the counts are
	// of all.
	ProblemCount int               `json:"problem_count"`
	Problems     []history.Problem `json:"problems"`
	AnomalyCount int               `json:"anomaly_count"`
	Anomalies    []history.Problem `json:"anomalies"`
	// Details names the file that lists every violation, problem and
	// anomaly (MasterDetailsFile); "" in CheckMaster's result, which
	// holds them all.
	Details string `json:"details"`
}

// MasterCounts counts one f's client ops.
type MasterCounts struct {
	Invoked int `json:"invoked"`
	OK      int `json:"ok"`
	Fail    int `json:"fail"`
	Info    int `json:"info"`
	Open    int `json:"open"` // invoked, never completed
}

// MasterTenure is a node's uninterrupted mastership as clients saw it: the
// union of its belief intervals that overlap or touch, [StartNs, EndNs).
type MasterTenure struct {
	Node    string `json:"node"`
	StartNs int64  `json:"start_ns"`
	EndNs   int64  `json:"end_ns"`
	Beliefs int    `json:"beliefs"`  // belief intervals merged into it
	FirstOp int    `json:"first_op"` // invoke index of the status that began it
	LastOp  int    `json:"last_op"`  // invoke index of the status whose belief ends it
	// StopOp is the invoke index of the first stop sent to the node while
	// the tenure ran (a handover rather than a loss); null when none was.
	StopOp *int `json:"stop_op"`
}

// MasterViolation is two nodes believing they were master at once, or a
// master's token that breaks the order rules (fencing).
type MasterViolation struct {
	Kind  string   `json:"kind"`
	Nodes []string `json:"nodes"`
	Ops   []int    `json:"ops"` // invoke and completion index of each status
	// [StartNs, EndNs) is the overlap of two-masters; for the token kinds,
	// from the start of the first status's belief to the end of the last's.
	StartNs int64  `json:"start_ns"`
	EndNs   int64  `json:"end_ns"`
	Text    string `json:"text"`
}

// masterBelief is one is_master answer: node believed it was master during
// [startNs, endNs), told token (0: none).
type masterBelief struct {
	node           string
	startNs, endNs int64
	invokeNs       int64
	invoke, done   int // op indices of the status
	token          int64
}

// masterStop is a stop sent to a node: its window [invokeNs, doneNs],
// doneNs = MaxInt64 when it never completed.
type masterStop struct {
	invokeNs, doneNs int64
	index            int
}

// masterHistory is what the checker collects from the client ops.
type masterHistory struct {
	beliefs []masterBelief
	stops   map[string][]masterStop // by node
}

// CheckMaster judges a master history: a node that answered status with
// is_master true and remaining_ms r believes it is master during
// [completion, invoke + r) (doc.go, "Master checker"). A stop does not
// shorten that: the answer told a client the node is master for r ms, and
// the client may act on it, so a node must not give its lease back before
// the masterships it announced have run out. The history is invalid when
// two different nodes' intervals overlap, when the masters' tokens break
// the fencing rules (missing, shared by two nodes, or not above a token an
// earlier master was told), or when it has structural problems.
func CheckMaster(ops []history.Op) MasterResult {
	c := newMasterChecker()
	pairs, problems := history.PairOps(ops)
	for _, p := range problems {
		c.Problem(p)
	}
	for _, p := range pairs {
		c.add(p)
	}
	return c.result()
}

// masterChecker is CheckMaster one pair at a time, for histories read
// back from disk: it keeps the beliefs and stops, not the ops.
type masterChecker struct {
	res          MasterResult
	mh           masterHistory
	problems     []history.Problem // PairOps's, then the pairs'
	pairProblems []history.Problem
}

func newMasterChecker() *masterChecker {
	return &masterChecker{
		res: MasterResult{Counts: map[string]MasterCounts{}, Tenures: []MasterTenure{},
			Violations: []MasterViolation{}, Anomalies: []history.Problem{}},
		mh: masterHistory{stops: map[string][]masterStop{}},
	}
}

// Problem takes a problem PairOps found.
func (c *masterChecker) Problem(p history.Problem) { c.problems = append(c.problems, p) }

// add takes the next pair, in invoke order.
func (c *masterChecker) add(p history.Pair) {
	c.pairProblems = append(c.pairProblems, c.mh.collect(p, &c.res)...)
}

// result judges the pairs added.
func (c *masterChecker) result() MasterResult {
	res := c.res
	beliefs := slices.DeleteFunc(slices.Clone(c.mh.beliefs), func(b masterBelief) bool { return b.startNs >= b.endNs })
	res.BeliefsEmpty = len(c.mh.beliefs) - len(beliefs)
	res.Beliefs = len(beliefs)
	res.Violations = append(res.Violations, masterOverlaps(beliefs)...)
	res.Violations = append(res.Violations, tokenViolations(c.mh.beliefs, beliefs)...)
	slices.SortStableFunc(res.Violations, func(a, b MasterViolation) int { return cmp.Compare(a.StartNs, b.StartNs) })
	res.Tenures = mergeTenures(beliefs)
	c.mh.markStops(res.Tenures)
	res.Problems = append(slices.Clone(c.problems), c.pairProblems...)
	if res.Problems == nil {
		res.Problems = []history.Problem{}
	}
	res.ViolationCount, res.ProblemCount, res.AnomalyCount = len(res.Violations), len(res.Problems), len(res.Anomalies)
	res.ViolationsByKind = map[string]int{}
	for _, v := range res.Violations {
		res.ViolationsByKind[v.Kind]++
	}
	res.Valid = len(res.Violations) == 0 && len(res.Problems) == 0
	return res
}

// collect counts one client op and files its stop or belief; it returns
// the op's structural problems.
func (mh *masterHistory) collect(p history.Pair, res *MasterResult) []history.Problem {
	inv := p.Invoke
	switch inv.F {
	case FMasterStart, FMasterStop, FMasterStatus:
	default:
		return []history.Problem{{Index: inv.Index, Text: fmt.Sprintf("master history has an op with f %q", inv.F)}}
	}
	countMasterPair(p, res.Counts)
	node, problem := masterNode(p)
	if problem != "" && (inv.F == FMasterStop || (inv.F == FMasterStatus && masterOK(p))) {
		return []history.Problem{{Index: inv.Index, Text: problem}}
	}
	switch {
	case inv.F == FMasterStop:
		done := int64(math.MaxInt64)
		if p.Completion != nil {
			done = p.Completion.Time
		}
		mh.stops[node] = append(mh.stops[node], masterStop{invokeNs: inv.Time, doneNs: done, index: inv.Index})
	case inv.F == FMasterStatus && masterOK(p):
		return mh.collectStatus(p, node, res)
	}
	return nil
}

// collectStatus turns an ok status into a belief when it says is_master,
// and notes anomalies.
func (mh *masterHistory) collectStatus(p history.Pair, node string, res *MasterResult) []history.Problem {
	done := *p.Completion
	v, problem := decodeMasterValue(done.Value)
	if problem != "" {
		return []history.Problem{{Index: done.Index, Text: fmt.Sprintf("ok status value %s: %s", done.Value, problem)}}
	}
	where := fmt.Sprintf("status (ops %d-%d) on %s", p.Invoke.Index, done.Index, node)
	if !v.IsMaster {
		if v.RemainingMs > 0 {
			res.Anomalies = append(res.Anomalies, history.Problem{Index: done.Index, Text: fmt.Sprintf("%s answered is_master false with remaining_ms %d (the contract says 0)", where, v.RemainingMs)})
		}
		if v.Token != 0 {
			res.Anomalies = append(res.Anomalies, history.Problem{Index: done.Index, Text: fmt.Sprintf("%s answered is_master false with token %d (the contract has a token only while is_master)", where, v.Token)})
		}
		return nil
	}
	res.IsMasterAnswers++
	if v.Master == nil || *v.Master != node {
		res.Anomalies = append(res.Anomalies, history.Problem{Index: done.Index, Text: fmt.Sprintf("%s answered is_master true but names master %s", where, describeMaster(v.Master))})
	}
	mh.beliefs = append(mh.beliefs, masterBelief{node: node, startNs: done.Time,
		endNs: workloads.EndAfterMs(p.Invoke.Time, v.RemainingMs), invokeNs: p.Invoke.Time,
		invoke: p.Invoke.Index, done: done.Index, token: v.Token})
	return nil
}

func describeMaster(m *string) string {
	if m == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *m)
}

func masterOK(p history.Pair) bool { return p.Completion != nil && p.Completion.Type == history.OK }

// pairNode is the node that answered: the completion's node, else the
// invoke's. It is a problem when neither names one or they differ.
func masterNode(p history.Pair) (string, string) {
	node := p.Invoke.Node
	if p.Completion != nil && p.Completion.Node != "" {
		if node != "" && node != p.Completion.Node {
			return "", fmt.Sprintf("%s invoked on node %q completed on node %q", p.Invoke.F, node, p.Completion.Node)
		}
		node = p.Completion.Node
	}
	if node == "" {
		return "", fmt.Sprintf("%s op names no node (the master checker needs the answering node)", p.Invoke.F)
	}
	return node, ""
}

func countMasterPair(p history.Pair, counts map[string]MasterCounts) {
	c := counts[p.Invoke.F]
	c.Invoked++
	switch {
	case p.Completion == nil:
		c.Open++
	case p.Completion.Type == history.OK:
		c.OK++
	case p.Completion.Type == history.Fail:
		c.Fail++
	default:
		c.Info++
	}
	counts[p.Invoke.F] = c
}

// decodeMasterValue reads an ok status value with the reply schema's exact
// types (extra keys are ignored).
func decodeMasterValue(raw json.RawMessage) (MasterValue, string) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		return MasterValue{}, "not a JSON object"
	}
	return masterStatusFields(body)
}

// markStops names, for each tenure, the first stop sent to its node while
// it ran: the tenure ended by a handover rather than a loss.
func (mh *masterHistory) markStops(tenures []MasterTenure) {
	for node, stops := range mh.stops {
		slices.SortFunc(stops, func(a, b masterStop) int { return cmp.Compare(a.invokeNs, b.invokeNs) })
		mh.stops[node] = stops
	}
	for i := range tenures {
		t := &tenures[i]
		stops := mh.stops[t.Node]
		k := sort.Search(len(stops), func(k int) bool { return stops[k].invokeNs >= t.StartNs })
		if k < len(stops) && stops[k].invokeNs < t.EndNs {
			idx := stops[k].index
			t.StopOp = &idx
		}
	}
}

// masterOverlaps reports every pair of beliefs of different nodes that
// overlap: max(starts) < min(ends). A sweep by start keeps the beliefs
// still running; touching intervals (one ends where the other starts) do
// not overlap.
func masterOverlaps(beliefs []masterBelief) []MasterViolation {
	sorted := slices.Clone(beliefs)
	slices.SortStableFunc(sorted, func(a, b masterBelief) int {
		return cmp.Or(cmp.Compare(a.startNs, b.startNs), cmp.Compare(a.invoke, b.invoke))
	})
	var out []MasterViolation
	var running []masterBelief
	for _, b := range sorted {
		running = slices.DeleteFunc(running, func(a masterBelief) bool { return a.endNs <= b.startNs })
		for _, a := range running {
			if a.node != b.node {
				out = append(out, twoMasters(a, b))
			}
		}
		running = append(running, b)
	}
	return out
}

// twoMasters describes the overlap of a and b, where a started first.
func twoMasters(a, b masterBelief) MasterViolation {
	start, end := b.startNs, min(a.endNs, b.endNs)
	return MasterViolation{
		Kind: TwoMasters, Nodes: []string{a.node, b.node},
		Ops: []int{a.invoke, a.done, b.invoke, b.done}, StartNs: start, EndNs: end,
		Text: fmt.Sprintf("%s (status ops %d-%d via %s, master during [%s, %s)) and %s (status ops %d-%d via %s, master during [%s, %s)) "+
			"were both master for %s from %s",
			a.node, a.invoke, a.done, a.node, secondsText(a.startNs), secondsText(a.endNs),
			b.node, b.invoke, b.done, b.node, secondsText(b.startNs), secondsText(b.endNs),
			msText(end-start), secondsText(start)),
	}
}

// secondsText writes a time since the test started in seconds, to the
// millisecond ("1.053s").
func secondsText(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }

// msText writes a span in milliseconds, exact down to the nanosecond, so
// an overlap of 1 ns does not read as 0 ms.
func msText(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', -1, 64) + " ms" }

// mergeTenures unites each node's overlapping or touching beliefs and
// returns the tenures of all nodes by start (then node).
func mergeTenures(beliefs []masterBelief) []MasterTenure {
	byNode := map[string][]masterBelief{}
	for _, b := range beliefs {
		byNode[b.node] = append(byNode[b.node], b)
	}
	out := []MasterTenure{}
	for _, node := range slices.Sorted(maps.Keys(byNode)) {
		bs := byNode[node]
		slices.SortStableFunc(bs, func(a, b masterBelief) int { return cmp.Compare(a.startNs, b.startNs) })
		var cur MasterTenure
		for i, b := range bs {
			if i > 0 && b.startNs <= cur.EndNs {
				cur.Beliefs++
				if b.endNs > cur.EndNs {
					cur.EndNs, cur.LastOp = b.endNs, b.invoke
				}
				continue
			}
			if i > 0 {
				out = append(out, cur)
			}
			cur = MasterTenure{Node: node, StartNs: b.startNs, EndNs: b.endNs, Beliefs: 1,
				FirstOp: b.invoke, LastOp: b.invoke}
		}
		out = append(out, cur)
	}
	slices.SortStableFunc(out, func(a, b MasterTenure) int {
		return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), workloads.CompareNatural(a.Node, b.Node))
	})
	return out
}
