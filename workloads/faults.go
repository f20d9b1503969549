package workloads

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"chunklease/history"
)

// Fault kinds, as the report pictures shade them.
const (
	FaultPartition = "partition"
	FaultKill      = "kill"
	FaultPause     = "pause"
	FaultPacket    = "packet"
)

// FaultKinds lists the kinds in the order pictures show them.
var FaultKinds = []string{FaultPartition, FaultKill, FaultPause, FaultPacket}

// faultOps maps each nemesis f to its kind and whether it begins the
// fault (Jepsen's names: start-partition/stop-partition, kill/start,
// pause/resume, start-packet/stop-packet).
var faultOps = map[string]struct {
	kind  string
	begin bool
}{
	StartPartition: {FaultPartition, true}, StopPartition: {FaultPartition, false},
	"kill": {FaultKill, true}, "start": {FaultKill, false},
	"pause": {FaultPause, true}, "resume": {FaultPause, false},
	StartPacket: {FaultPacket, true}, StopPacket: {FaultPacket, false},
}

// Fault is one period of a nemesis fault, for the report pictures.
type Fault struct {
	Kind    string // FaultPartition, FaultKill, FaultPause or FaultPacket
	StartNs int64  // the first nemesis op of the step
	EndNs   int64  // the last op of the step that ended it; math.MaxInt64 if none did
	// Nodes are the nodes cut off (a partition: the smaller side of a
	// split, every node of a ring), killed, paused, or whose links had a
	// packet fault.
	Nodes  []string
	Detail string // e.g. "majority: n0 n1 | n2 n3 n4", "packet n1 n2: delay 50ms ±10ms, loss 20%"
}

// Faults reads the nemesis ops of a history into fault periods, in order
// of start. As with Partitions, a step written as an invoke and a
// completion counts once: a begin right after a begin of the same kind
// adds to the same fault, and an end right after an end moves its end.
// Nodes are read from any string in the op values that names a node of
// the history (ops' node fields, grudge keys), so the exact value layout
// of kill and pause ops does not matter.
func Faults(ops []history.Op) []Fault {
	return faultsOf(ops, historyNodes(ops))
}

// FaultsOf is Faults for a history read back from disk: its nemesis ops,
// in order, and the node names its client ops carry.
func FaultsOf(nemesis []history.Op, clientNodes []string) []Fault {
	nodes := historyNodes(nemesis)
	for _, n := range clientNodes {
		nodes[n] = true
	}
	return faultsOf(nemesis, nodes)
}

// faultsOf reads the nemesis ops of history (others are skipped) with the
// node names nodes.
func faultsOf(ops []history.Op, nodes map[string]bool) []Fault {
	var out []Fault
	open := map[string][]int{} // kind -> indices in out still in force
	var last struct {
		f     string
		ended []int
	}
	for _, op := range ops {
		spec, ok := faultOps[op.F]
		if !op.Process.Nemesis || !ok {
			continue
		}
		switch {
		case spec.begin && last.f == op.F && len(open[spec.kind]) > 0:
			f := &out[open[spec.kind][len(open[spec.kind])-1]]
			f.addValue(op.Value, nodes)
		case spec.begin:
			f := Fault{Kind: spec.kind, StartNs: op.Time, EndNs: math.MaxInt64}
			f.addValue(op.Value, nodes)
			out = append(out, f)
			open[spec.kind] = append(open[spec.kind], len(out)-1)
		case last.f == op.F:
			for _, i := range last.ended {
				out[i].EndNs = op.Time
			}
			continue
		default:
			last.ended = open[spec.kind]
			for _, i := range open[spec.kind] {
				out[i].EndNs = op.Time
			}
			open[spec.kind] = nil
		}
		last.f = op.F
	}
	return out
}

// historyNodes are the node ids the history names.
func historyNodes(ops []history.Op) map[string]bool {
	nodes := map[string]bool{}
	for _, op := range ops {
		if op.Node != "" {
			nodes[op.Node] = true
		}
		if op.F == StartPartition {
			var v []json.RawMessage
			var g map[string][]string
			if json.Unmarshal(op.Value, &v) == nil && len(v) == 2 && json.Unmarshal(v[1], &g) == nil {
				for k, srcs := range g {
					nodes[k] = true
					for _, s := range srcs {
						nodes[s] = true
					}
				}
			}
		}
	}
	return nodes
}

// addValue folds one op's value into the fault: a partition's target
// name and grudge, or the nodes a kill or pause names.
func (f *Fault) addValue(raw json.RawMessage, nodes map[string]bool) {
	if f.Kind == FaultPartition {
		f.addPartition(raw)
		return
	}
	for _, s := range jsonStrings(raw) {
		if nodes[s] && !slices.Contains(f.Nodes, s) {
			f.Nodes = append(f.Nodes, s)
		}
	}
	slices.SortFunc(f.Nodes, CompareNatural)
	f.Detail = f.Kind + " " + strings.Join(f.Nodes, " ")
	if f.Kind == FaultPacket {
		f.Detail = strings.TrimSpace(f.Detail) + packetDetail(raw)
	}
}

// packetDetail says what a start-packet's settings do, in netem's words:
// ": delay 50ms ±10ms, loss 20%, duplicate 5%, reorder 10%".
func packetDetail(raw json.RawMessage) string {
	var s struct {
		DelayMs      int     `json:"delay_ms"`
		JitterMs     int     `json:"jitter_ms"`
		LossPct      float64 `json:"loss_pct"`
		DuplicatePct float64 `json:"duplicate_pct"`
		ReorderPct   float64 `json:"reorder_pct"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	var parts []string
	if s.DelayMs > 0 || s.JitterMs > 0 {
		parts = append(parts, fmt.Sprintf("delay %dms ±%dms", s.DelayMs, s.JitterMs))
	}
	for _, p := range []struct {
		name string
		pct  float64
	}{{"loss", s.LossPct}, {"duplicate", s.DuplicatePct}, {"reorder", s.ReorderPct}} {
		if p.pct > 0 {
			parts = append(parts, fmt.Sprintf("%s %g%%", p.name, p.pct))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// addPartition reads a start-partition value: the target name (the
// invoke) or ["isolated", grudge] (the completion).
func (f *Fault) addPartition(raw json.RawMessage) {
	var target string
	if json.Unmarshal(raw, &target) == nil {
		f.Detail = target
		return
	}
	var v []json.RawMessage
	var g map[string][]string
	if json.Unmarshal(raw, &v) != nil || len(v) != 2 || json.Unmarshal(v[1], &g) != nil {
		return
	}
	shape, cut := DescribeGrudge(g)
	f.Nodes = cut
	target, _, _ = strings.Cut(f.Detail, ":")
	if target == "" {
		target = "partition"
	}
	f.Detail = target + ": " + shape
}

// jsonStrings collects every string in a JSON value, keys included.
func jsonStrings(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for k, e := range t {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// DescribeGrudge says who is cut off from whom. A clean split (every node
// drops exactly the nodes outside its own group) reads "n0 n1 | n2 n3 n4"
// and cuts off the smaller groups; any other grudge (a majorities ring)
// lists each node's drops, "n0 drops n2 n3; ...", and cuts off every node
// that drops something.
func DescribeGrudge(g map[string][]string) (shape string, cut []string) {
	var all []string
	for dest, srcs := range g {
		all = appendNew(all, dest)
		for _, s := range srcs {
			all = appendNew(all, s)
		}
	}
	slices.SortFunc(all, CompareNatural)
	groups := groupByDrops(all, g)
	if isCleanSplit(groups, g) && len(groups) > 1 {
		parts := make([]string, len(groups))
		largest := 0
		for i, gr := range groups {
			parts[i] = strings.Join(gr, " ")
			largest = max(largest, len(gr))
		}
		for _, gr := range groups {
			if len(gr) < largest || len(groups) > 2 {
				cut = append(cut, gr...)
			}
		}
		if len(cut) == 0 { // an even split: both sides are cut off
			cut = slices.Clone(all)
		}
		slices.SortFunc(cut, CompareNatural)
		return strings.Join(parts, " | "), cut
	}
	if len(groups) == 1 && len(g[all[0]]) == 0 {
		return "nobody cut off (an empty grudge)", nil
	}
	var lines []string
	for _, n := range all {
		if srcs := g[n]; len(srcs) > 0 {
			s := slices.Clone(srcs)
			slices.SortFunc(s, CompareNatural)
			lines = append(lines, fmt.Sprintf("%s drops %s", n, strings.Join(s, " ")))
			cut = append(cut, n)
		}
	}
	return strings.Join(lines, "; "), cut
}

func appendNew(s []string, x string) []string {
	if slices.Contains(s, x) {
		return s
	}
	return append(s, x)
}

// groupByDrops puts nodes with the same drop set together, in order of
// their first member.
func groupByDrops(all []string, g map[string][]string) [][]string {
	var groups [][]string
	keys := map[string]int{}
	for _, n := range all {
		s := slices.Clone(g[n])
		slices.Sort(s)
		k := strings.Join(s, ",")
		i, ok := keys[k]
		if !ok {
			i = len(groups)
			keys[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], n)
	}
	return groups
}

// isCleanSplit: every node drops exactly the nodes outside its group.
func isCleanSplit(groups [][]string, g map[string][]string) bool {
	for i, gr := range groups {
		var outside []string
		for j, o := range groups {
			if j != i {
				outside = append(outside, o...)
			}
		}
		slices.Sort(outside)
		for _, n := range gr {
			s := slices.Clone(g[n])
			slices.Sort(s)
			if !slices.Equal(s, outside) {
				return false
			}
		}
	}
	return true
}
