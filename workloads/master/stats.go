package master

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"sort"

	"chunklease/history"
	"chunklease/workloads"
)

// MasterStatsResult is the master workload's statistics for results.json
// (workload_stats): the generic Stats plus how much of the run had a
// master, how often mastership moved, and failover times, each split by
// whether a fault was in force.
type MasterStatsResult struct {
	workloads.Stats
	Mastership MasterFigures  `json:"mastership"`
	Failover   MasterFailover `json:"failover"`
	// Faults are the nemesis faults of the run, by start.
	Faults []MasterFault `json:"faults"`
}

// MasterFigures describes mastership over the run: from the first op of
// the history to the last one.
type MasterFigures struct {
	// Overall is the time some node believed it was master (the union of
	// all tenures) over the run's duration; OutsideFaults and InsideFaults
	// split the run by whether a fault was in force.
	Overall       MasteredTime `json:"overall"`
	OutsideFaults MasteredTime `json:"outside_faults"`
	InsideFaults  MasteredTime `json:"inside_faults"`
	// FirstMasterMs is how long after the run's start the first tenure
	// began; null when no node was ever master.
	FirstMasterMs *float64 `json:"first_master_ms"`
	// MasterChanges counts consecutive tenures (by start) of different
	// nodes: how often mastership moved.
	MasterChanges int                `json:"master_changes"`
	Tenures       int                `json:"tenures"`
	ByNodeMs      map[string]float64 `json:"by_node_ms"` // mastered time per node
}

// MasteredTime is the time with a master over a stretch of the run.
// Fraction is MasteredMs / RunMs, null when the stretch is empty (no
// fault ever in force, for instance).
type MasteredTime struct {
	RunMs      float64  `json:"run_ms"`
	MasteredMs float64  `json:"mastered_ms"`
	Fraction   *float64 `json:"fraction"`
}

// MasterFailover measures how long the cluster went without a master
// after a master was lost. A tenure end is the end of a node's last belief
// interval before a gap in its mastership; the failover time runs from
// there to the start of the next tenure, when that tenure is another
// node's. A failover is inside faults when a fault was in force at some
// point of [end, next start].
type MasterFailover struct {
	OutsideFaultsMs workloads.Percentiles `json:"outside_faults_ms"`
	InsideFaultsMs  workloads.Percentiles `json:"inside_faults_ms"`
	// AfterStop counts the failovers whose tenure ended at a stop sent to
	// the master (a handover rather than a loss).
	AfterStop int `json:"after_stop"`
	// TenureEnds counts tenure ends before the run's end; each is followed
	// by another node's tenure (a failover), by the same node's
	// (RetakenBySame: the node lost and regained it, or clients did not
	// ask it in time), or by none (NeverRetaken).
	TenureEnds    int `json:"tenure_ends"`
	RetakenBySame int `json:"retaken_by_same"`
	NeverRetaken  int `json:"never_retaken"`
}

// MasterFault is one stretch of time during which a nemesis fault of one
// kind (partition, kill or pause) was in force. EndNs is math.MaxInt64
// when the history never ends it.
type MasterFault struct {
	Kind    string `json:"kind"`
	StartNs int64  `json:"start_ns"`
	EndNs   int64  `json:"end_ns"`
}

// MasterStats computes the generic statistics, mastership, failover and
// faults from a master history, the tenures CheckMaster found in it and
// the network's message count.
func MasterStats(ops []history.Op, tenures []MasterTenure, messages int) MasterStatsResult {
	return masterStats(workloads.ComputeStats(ops, messages), MasterFaults(ops), runWindow(ops), tenures)
}

// masterStats completes the generic statistics st with the master figures.
func masterStats(st workloads.Stats, faults []MasterFault, run workloads.Interval, tenures []MasterTenure) MasterStatsResult {
	var faultIvs []workloads.Interval
	for _, f := range faults {
		faultIvs = append(faultIvs, workloads.Interval{StartNs: f.StartNs, EndNs: f.EndNs})
	}
	faultSpans := workloads.UniteSpans(faultIvs)
	return MasterStatsResult{
		Stats:      st,
		Mastership: mastership(tenures, faultSpans, run),
		Failover:   masterFailover(tenures, faultSpans, run.EndNs),
		Faults:     faults,
	}
}

// runWindow is [time of the first op, time of the last op].
func runWindow(ops []history.Op) workloads.Interval {
	if len(ops) == 0 {
		return workloads.Interval{}
	}
	w := workloads.Interval{StartNs: math.MaxInt64, EndNs: math.MinInt64}
	for _, op := range ops {
		w.StartNs, w.EndNs = min(w.StartNs, op.Time), max(w.EndNs, op.Time)
	}
	return w
}

// mastership computes MasterFigures over the run window.
func mastership(tenures []MasterTenure, faults workloads.Spans, run workloads.Interval) MasterFigures {
	var ivs []workloads.Interval
	fig := MasterFigures{Tenures: len(tenures), ByNodeMs: map[string]float64{}}
	for i, t := range tenures {
		iv := workloads.Interval{StartNs: t.StartNs, EndNs: t.EndNs}
		ivs = append(ivs, iv)
		fig.ByNodeMs[t.Node] += workloads.NsToMs(workloads.Spans{iv}.Clip(run).Total())
		if i > 0 && t.Node != tenures[i-1].Node {
			fig.MasterChanges++
		}
	}
	mastered := workloads.UniteSpans(ivs).Clip(run)
	inFaults := faults.Clip(run)
	runNs, faultNs := run.EndNs-run.StartNs, inFaults.Total()
	masteredInFaults := mastered.Intersect(inFaults).Total()
	fig.Overall = masteredTime(runNs, mastered.Total())
	fig.InsideFaults = masteredTime(faultNs, masteredInFaults)
	fig.OutsideFaults = masteredTime(runNs-faultNs, mastered.Total()-masteredInFaults)
	if len(mastered) > 0 {
		first := workloads.NsToMs(mastered[0].StartNs - run.StartNs)
		fig.FirstMasterMs = &first
	}
	return fig
}

func masteredTime(runNs, masteredNs int64) MasteredTime {
	m := MasteredTime{RunMs: workloads.NsToMs(runNs), MasteredMs: workloads.NsToMs(masteredNs)}
	if runNs > 0 {
		f := float64(masteredNs) / float64(runNs)
		m.Fraction = &f
	}
	return m
}

// masterFailover measures failovers; tenures are sorted by start. Tenure
// ends at or after the run's end are not losses the run saw.
func masterFailover(tenures []MasterTenure, faults workloads.Spans, runEndNs int64) MasterFailover {
	var st MasterFailover
	var inside, outside []float64
	for i, t := range tenures {
		if t.EndNs >= runEndNs {
			continue
		}
		st.TenureEnds++
		next, ok := nextTenure(tenures, i)
		switch {
		case !ok:
			st.NeverRetaken++
			continue
		case next.Node == t.Node:
			st.RetakenBySame++
			continue
		}
		if t.StopOp != nil {
			st.AfterStop++
		}
		gapMs := workloads.NsToMs(next.StartNs - t.EndNs)
		if faults.Touches(t.EndNs, next.StartNs) {
			inside = append(inside, gapMs)
		} else {
			outside = append(outside, gapMs)
		}
	}
	st.InsideFaultsMs, st.OutsideFaultsMs = workloads.PercentilesOf(inside), workloads.PercentilesOf(outside)
	return st
}

// nextTenure is the first tenure other than tenures[i] that starts at or
// after tenures[i] ends; tenures are sorted by start.
func nextTenure(tenures []MasterTenure, i int) (MasterTenure, bool) {
	end := tenures[i].EndNs
	j := sort.Search(len(tenures), func(j int) bool { return tenures[j].StartNs >= end })
	for ; j < len(tenures); j++ {
		if j != i {
			return tenures[j], true
		}
	}
	return MasterTenure{}, false
}

// masterFaultOps maps each nemesis f to its fault kind and whether it
// begins the fault (contract section 2).
var masterFaultOps = map[string]struct {
	kind   string
	begins bool
}{
	workloads.StartPartition: {"partition", true}, workloads.StopPartition: {"partition", false},
	workloads.NemesisKill: {workloads.NemesisKill, true}, workloads.NemesisStart: {workloads.NemesisKill, false},
	workloads.NemesisPause: {workloads.NemesisPause, true}, workloads.NemesisResume: {workloads.NemesisPause, false},
}

// faultState tracks one fault kind while reading the history.
type faultState struct {
	nodes map[string]bool // affected nodes in force; "*" for a begin that named none
	open  int             // index into the result of the kind's open fault; -1 when none
	last  int             // index of the kind's last closed fault; -1 when none
}

// MasterFaults returns when each kind of fault was in force. A fault
// begins at a start-partition, kill or pause op and ends at the
// stop-partition, start or resume op that leaves no node of that kind
// affected. The nodes an op affects are the node ids its value names (a
// string, or the strings of a list) among the nodes the history's client
// ops name; a target such as "majority", "one" or "all" names none. A
// begin adds its nodes ("*" when it names none); an end removes its
// nodes and "*", or every node when it names none. As the nemesis is one
// process, a nemesis op that directly follows another with the same f is
// taken as that op's completion: it adds or removes the nodes it names,
// and an end's completion that finds the fault closed moves the fault's
// end to its own time. So a fault runs from the invoke that starts it to
// the completion that ends it, the widest reading.
func MasterFaults(ops []history.Op) []MasterFault {
	known := map[string]bool{}
	for _, op := range ops {
		if !op.Process.Nemesis && op.Node != "" {
			known[op.Node] = true
		}
	}
	return masterFaults(ops, known)
}

// masterFaults is MasterFaults over the nemesis ops of history (other ops
// are skipped) with the node ids known from the client ops.
func masterFaults(ops []history.Op, known map[string]bool) []MasterFault {
	out := []MasterFault{}
	states := map[string]*faultState{}
	prevF := ""
	for _, op := range ops {
		if !op.Process.Nemesis {
			continue
		}
		kind, isFault := masterFaultOps[op.F]
		completion := op.F == prevF
		prevF = op.F
		if !isFault {
			continue
		}
		st := states[kind.kind]
		if st == nil {
			st = &faultState{nodes: map[string]bool{}, open: -1, last: -1}
			states[kind.kind] = st
		}
		names := faultNodes(op.Value, known)
		if kind.begins {
			st.begin(&out, kind.kind, op.Time, names, completion)
		} else {
			st.end(out, op.Time, names, completion)
		}
	}
	slices.SortStableFunc(out, func(a, b MasterFault) int { return cmp.Compare(a.StartNs, b.StartNs) })
	return out
}

// begin applies a start-partition, kill or pause op.
func (st *faultState) begin(out *[]MasterFault, kind string, t int64, names []string, completion bool) {
	switch {
	case completion && len(names) > 0:
		delete(st.nodes, "*") // the completion names the nodes the invoke's target chose
	case !completion && len(names) == 0:
		names = []string{"*"}
	}
	for _, n := range names {
		st.nodes[n] = true
	}
	if st.open < 0 && len(st.nodes) > 0 {
		st.open = len(*out)
		*out = append(*out, MasterFault{Kind: kind, StartNs: t, EndNs: math.MaxInt64})
	}
}

// end applies a stop-partition, start or resume op.
func (st *faultState) end(out []MasterFault, t int64, names []string, completion bool) {
	if st.open < 0 {
		if completion && st.last >= 0 {
			out[st.last].EndNs = t
		}
		return
	}
	if len(names) == 0 && !completion {
		clear(st.nodes)
	}
	for _, n := range names {
		delete(st.nodes, n)
	}
	if !completion {
		delete(st.nodes, "*")
	}
	if len(st.nodes) == 0 {
		out[st.open].EndNs = t
		st.last, st.open = st.open, -1
	}
}

// faultNodes reads the node ids a nemesis value names: a string, or the
// strings of a list, that are among the known node ids.
func faultNodes(raw json.RawMessage, known map[string]bool) []string {
	var names []string
	if one, ok := workloads.RawString(raw); ok {
		names = []string{one}
	} else {
		var list []json.RawMessage
		_ = json.Unmarshal(raw, &list) // not a list: names nothing
		for _, item := range list {
			if one, ok := workloads.RawString(item); ok {
				names = append(names, one)
			}
		}
	}
	return slices.DeleteFunc(names, func(n string) bool { return !known[n] })
}
