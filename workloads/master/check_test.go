package master

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/workloads/workloadtest"
)

// masterHB builds hand-made master histories with times in nanoseconds (so that
// an overlap of 1 ns can be written). Ops are sorted by time, stably, and
// indexed when history() is called.
type masterHB struct {
	ops   []history.Op
	lanes []string // nodes in order of their first status, for tokens
}

const masterMs = int64(time.Millisecond)

// status adds a status on node invoked at inv and answered ok at done;
// master "" is written as null. An is_master answer gets a token that
// keeps the fencing rules: its completion time with the node's lane
// below it, so tokens grow with time and no two nodes share one.
func (b *masterHB) status(proc int, node string, inv, done int64, isMaster bool, master string, remainingMs int64) {
	token := int64(0)
	if isMaster {
		lane := slices.Index(b.lanes, node)
		if lane < 0 {
			lane, b.lanes = len(b.lanes), append(b.lanes, node)
		}
		token = (done+1)<<6 | int64(lane)
	}
	b.statusToken(proc, node, inv, done, isMaster, master, remainingMs, token)
}

// statusToken is status with the token given (0: none).
func (b *masterHB) statusToken(proc int, node string, inv, done int64, isMaster bool, master string, remainingMs, token int64) {
	v := MasterValue{IsMaster: isMaster, RemainingMs: remainingMs, Token: token}
	if master != "" {
		v.Master = &master
	}
	b.raw(proc, node, FMasterStatus, inv, done, history.OK, appendMasterValue(nil, v))
}

// call adds a start or stop (or a status that did not complete ok) with
// completion typ; typ "" leaves it open.
func (b *masterHB) call(proc int, node, f string, inv, done int64, typ string) {
	b.raw(proc, node, f, inv, done, typ, nil)
}

// raw adds an op with any completion value.
func (b *masterHB) raw(proc int, node, f string, inv, done int64, typ string, value json.RawMessage) {
	p := history.Process{ID: proc}
	b.ops = append(b.ops, history.Op{Time: inv, Process: p, Type: history.Invoke, F: f, Node: node})
	if typ == "" {
		return
	}
	op := history.Op{Time: done, Process: p, Type: typ, F: f, Node: node, Value: value}
	if typ != history.OK {
		op.Error = "net-timeout"
	}
	b.ops = append(b.ops, op)
}

// nemesis adds one nemesis op (type info, as the harness writes them).
func (b *masterHB) nemesis(f string, at int64, value string) {
	b.ops = append(b.ops, history.Op{Time: at, Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(value)})
}

func (b *masterHB) history() []history.Op {
	return workloadtest.InTimeOrder(slices.Clone(b.ops))
}

func masterValid(t *testing.T, name string, h []history.Op) MasterResult {
	t.Helper()
	r := CheckMaster(h)
	if !r.Valid || len(r.Violations) > 0 || len(r.Problems) > 0 {
		t.Errorf("%s: judged invalid: violations %+v problems %+v", name, r.Violations, r.Problems)
	}
	return r
}

// masterOverlap checks that h is invalid with exactly one two-masters
// violation of nodes a then b over [startNs, endNs).
func masterOverlap(t *testing.T, name string, h []history.Op, a, b string, startNs, endNs int64) MasterResult {
	t.Helper()
	r := CheckMaster(h)
	if r.Valid || len(r.Violations) != 1 || len(r.Problems) > 0 {
		t.Fatalf("%s: valid=%v violations %+v problems %+v, want one two-masters violation", name, r.Valid, r.Violations, r.Problems)
	}
	v := r.Violations[0]
	if v.Kind != TwoMasters || !slices.Equal(v.Nodes, []string{a, b}) || v.StartNs != startNs || v.EndNs != endNs ||
		len(v.Ops) != 4 || !strings.Contains(v.Text, "were both master for "+msText(endNs-startNs)) ||
		!strings.Contains(v.Text, fmt.Sprintf("%s (status ops %d-%d via %s", a, v.Ops[0], v.Ops[1], a)) ||
		!strings.Contains(v.Text, fmt.Sprintf("%s (status ops %d-%d via %s", b, v.Ops[2], v.Ops[3], b)) {
		t.Errorf("%s: violation %+v, want %s and %s over [%d, %d)", name, v, a, b, startNs, endNs)
	}
	return r
}

// TestCheckMasterValidHandover: a node's own beliefs may overlap; another
// node may begin exactly where the last belief ends; false answers, failed
// and unknown statuses and open ops create no belief.
func TestCheckMasterValidHandover(t *testing.T) {
	var b masterHB
	b.call(0, "n1", FMasterStart, 0, 1*masterMs, history.OK)
	b.status(1, "n1", 5*masterMs, 10*masterMs, true, "n1", 990)    // n1 [10ms, 995ms)
	b.status(1, "n1", 400*masterMs, 402*masterMs, true, "n1", 600) // n1 [402ms, 1000ms)
	b.status(2, "n2", 500*masterMs, 501*masterMs, false, "n1", 0)
	b.call(2, "n2", FMasterStatus, 600*masterMs, 700*masterMs, history.Fail)
	b.call(3, "n3", FMasterStatus, 650*masterMs, 0, "")
	b.status(2, "n2", 990*masterMs, 1000*masterMs, true, "n2", 1000) // n2 [1000ms, 1990ms): touches n1's end
	b.status(4, "n1", 1100*masterMs, 1101*masterMs, false, "n2", 0)
	r := masterValid(t, "touching handover", b.history())
	want := []MasterTenure{
		{Node: "n1", StartNs: 10 * masterMs, EndNs: 1000 * masterMs, Beliefs: 2, FirstOp: 2, LastOp: 4},
		{Node: "n2", StartNs: 1000 * masterMs, EndNs: 1990 * masterMs, Beliefs: 1, FirstOp: 11, LastOp: 11},
	}
	if !slices.EqualFunc(r.Tenures, want, func(a, b MasterTenure) bool { return a.StopOp == nil && a == b }) {
		t.Errorf("tenures %+v, want %+v", r.Tenures, want)
	}
	st := r.Counts[FMasterStatus]
	if st != (MasterCounts{Invoked: 7, OK: 5, Fail: 1, Open: 1}) || r.IsMasterAnswers != 3 || r.Beliefs != 3 || len(r.Anomalies) != 0 {
		t.Errorf("status counts %+v, is_master answers %d, beliefs %d, anomalies %v", st, r.IsMasterAnswers, r.Beliefs, r.Anomalies)
	}
}

// TestCheckMasterNegativeOverlaps: the negative controls. Two nodes whose
// beliefs overlap by 1 ms, or by 1 ns, are caught; every overlapping pair
// is reported.
func TestCheckMasterNegativeOverlaps(t *testing.T) {
	for _, overlap := range []int64{masterMs, 1} {
		var b masterHB
		b.status(0, "n1", 0, 10*masterMs, true, "n1", 1000) // n1 [10ms, 1000ms)
		start := 1000*masterMs - overlap
		b.status(1, "n2", start-5*masterMs, start, true, "n2", 800)
		name := "overlap of " + time.Duration(overlap).String()
		r := masterOverlap(t, name, b.history(), "n1", "n2", start, 1000*masterMs)
		if v := r.Violations[0]; !slices.Equal(v.Ops, []int{0, 1, 2, 3}) {
			t.Errorf("%s: ops %v, want [0 1 2 3]", name, v.Ops)
		}
	}
	var huge masterHB // an absurd remaining_ms saturates instead of wrapping around
	huge.status(0, "n1", 1, 2, true, "n1", 1<<62)
	huge.status(1, "n2", 5*masterMs, 6*masterMs, true, "n2", 10)
	masterOverlap(t, "remaining_ms 2^62", huge.history(), "n1", "n2", 6*masterMs, 15*masterMs)

	var b masterHB // n1 [1, 100) and [51, 150), n2 [2, 10), n3 [5, 101) (ms)
	b.status(0, "n1", 0, 1*masterMs, true, "n1", 100)
	b.status(0, "n1", 50*masterMs, 51*masterMs, true, "n1", 100)
	b.status(1, "n2", 0, 2*masterMs, true, "n2", 10)
	b.status(2, "n3", 1*masterMs, 5*masterMs, true, "n3", 100)
	var pairs []string
	for _, v := range CheckMaster(b.history()).Violations {
		pairs = append(pairs, strings.Join(v.Nodes, "+"))
	}
	if want := []string{"n1+n2", "n1+n3", "n2+n3", "n3+n1"}; !slices.Equal(pairs, want) {
		t.Errorf("overlapping pairs %v, want %v", pairs, want)
	}
}

// TestCheckMasterStopDoesNotCut: a stop does not shorten a belief already
// announced, so a node that gave its lease back at once and let another
// node take over inside an announced mastership is caught (the negative
// control); a tenure during which a stop was sent names that stop.
func TestCheckMasterStopDoesNotCut(t *testing.T) {
	build := func(stop func(b *masterHB)) []history.Op {
		var b masterHB
		b.status(0, "n1", 0, 10*masterMs, true, "n1", 1000) // n1 [10ms, 1000ms)
		stop(&b)
		b.status(2, "n2", 440*masterMs, 450*masterMs, true, "n2", 1000) // n2 from 450ms
		return b.history()
	}
	masterOverlap(t, "stop after the status", build(func(b *masterHB) { b.call(1, "n1", FMasterStop, 400*masterMs, 420*masterMs, history.OK) }),
		"n1", "n2", 450*masterMs, 1000*masterMs)
	var b masterHB // the handover after the announced mastership ran out is valid
	b.status(0, "n1", 0, 10*masterMs, true, "n1", 1000)
	b.call(1, "n1", FMasterStop, 400*masterMs, 420*masterMs, history.OK)
	b.status(2, "n2", 1000*masterMs, 1010*masterMs, true, "n2", 1000)
	r := masterValid(t, "handover after the announced end", b.history())
	if ten := r.Tenures[0]; ten.Node != "n1" || ten.StopOp == nil || *ten.StopOp != 2 {
		t.Errorf("n1's tenure should name the stop (op 2): %+v", r.Tenures)
	}
}

// TestCheckMasterStructuralProblems: defects that leave the history
// unjudgeable make it invalid and name the op at fault.
func TestCheckMasterStructuralProblems(t *testing.T) {
	statusWith := func(value string) func(b *masterHB) {
		return func(b *masterHB) { b.raw(0, "n1", FMasterStatus, 0, 5, history.OK, json.RawMessage(value)) }
	}
	cases := []struct {
		name  string
		build func(b *masterHB)
		want  string
	}{
		{"completion without invoke", func(b *masterHB) {
			b.ops = append(b.ops, history.Op{Time: 1, Process: history.Process{ID: 4}, Type: history.OK, F: FMasterStatus, Node: "n1"})
		}, "without an open invoke"},
		{"unknown f", func(b *masterHB) { b.call(0, "n1", "elect", 0, 1, history.OK) }, `op with f "elect"`},
		{"value not an object", statusWith(`null`), "not a JSON object"},
		{"is_master missing", statusWith(`{"master":"n1","remaining_ms":3}`), "is_master is missing"},
		{"remaining_ms negative", statusWith(`{"is_master":true,"master":"n1","remaining_ms":-3}`), "remaining_ms is -3"},
		{"token zero", statusWith(`{"is_master":true,"master":"n1","remaining_ms":3,"token":0}`), "token is 0, want an integer > 0"},
		{"token a string", statusWith(`{"is_master":true,"master":"n1","remaining_ms":3,"token":"7"}`), `token is "7"`},
		{"status without node", func(b *masterHB) { b.status(0, "", 0, 5, true, "n1", 10) }, "names no node"},
		{"stop without node", func(b *masterHB) { b.call(0, "", FMasterStop, 0, 5, history.Info) }, "names no node"},
		{"node changes", func(b *masterHB) {
			b.status(0, "n1", 0, 5, false, "", 0)
			b.ops[1].Node = "n2"
		}, `invoked on node "n1" completed on node "n2"`},
	}
	for _, c := range cases {
		var b masterHB
		c.build(&b)
		r := CheckMaster(b.history())
		if r.Valid || len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Text, c.want) {
			t.Errorf("%s: valid=%v problems %+v, want one naming %q", c.name, r.Valid, r.Problems, c.want)
		}
	}
	var b masterHB // a start without node needs none
	b.call(0, "", FMasterStart, 0, 5, history.OK)
	masterValid(t, "start without node", b.history())
}

// TestCheckMasterAnomalies: answers that contradict the contract without
// endangering safety are reported and leave the verdict alone.
func TestCheckMasterAnomalies(t *testing.T) {
	var b masterHB
	b.status(0, "n1", 0, 5, true, "n2", 10)
	b.status(1, "n2", 1, 6, false, "n1", 7)
	b.status(0, "n1", 10, 15, true, "", 10)
	b.statusToken(1, "n2", 20, 25, false, "n1", 0, 99)
	r := masterValid(t, "anomalies", b.history())
	if len(r.Anomalies) != 4 || !strings.Contains(r.Anomalies[0].Text, `is_master true but names master "n2"`) ||
		!strings.Contains(r.Anomalies[1].Text, "is_master false with remaining_ms 7") ||
		!strings.Contains(r.Anomalies[2].Text, "names master null") ||
		!strings.Contains(r.Anomalies[3].Text, "is_master false with token 99") {
		t.Errorf("anomalies %+v", r.Anomalies)
	}
}

// TestCheckMasterIgnoresNemesisStart: the kill nemesis's "start" is not a
// client start, and nemesis ops need no node.
func TestCheckMasterIgnoresNemesisStart(t *testing.T) {
	var b masterHB
	b.nemesis("kill", 0, `["n1"]`)
	b.nemesis("start", 5, `["n1"]`)
	b.status(0, "n1", 10, 20, true, "n1", 5)
	r := masterValid(t, "nemesis start", b.history())
	if _, ok := r.Counts[FMasterStart]; ok {
		t.Errorf("the nemesis start was counted as a client op: %+v", r.Counts)
	}
}
