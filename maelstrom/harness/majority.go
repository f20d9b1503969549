package harness

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"chunklease/maelstrom/nemesis"
	"chunklease/report"
	"chunklease/workloads"
)

// How much of a run a majority was live, and which requested faults
// never happened: a run whose nodes were mostly all down, or whose
// requested fault never hit a node, says little, and the verdict says so.

// nodeState is what the nemesis has done to the nodes at one instant, as
// the history's completions say.
type nodeState struct {
	nodes  []string
	killed map[string]bool
	paused map[string]bool
	grudge map[string][]string // receiver -> the senders whose messages it drops; nil when healed
}

// apply folds one completed nemesis step into the state. A fault kind
// that does not change who is up or who hears whom (clock, packet) is
// ignored.
func (s *nodeState) apply(st workloads.NemesisStep) {
	switch st.F {
	case nemesis.KillOp:
		for _, n := range st.Nodes {
			s.killed[n] = true
			delete(s.paused, n) // a killed process is no longer stopped
		}
	case nemesis.StartOp:
		for _, n := range st.Nodes {
			delete(s.killed, n)
		}
	case nemesis.PauseOp:
		for _, n := range st.Nodes {
			s.paused[n] = true
		}
	case nemesis.ResumeOp:
		for _, n := range st.Nodes {
			delete(s.paused, n)
		}
	case nemesis.StartPartition:
		s.grudge = grudgeOf(st.Value)
	case nemesis.StopPartition:
		s.grudge = nil
	}
}

// grudgeOf reads a start-partition's completion, ["isolated", grudge].
func grudgeOf(raw json.RawMessage) map[string][]string {
	var v []json.RawMessage
	var g map[string][]string
	if json.Unmarshal(raw, &v) != nil || len(v) != 2 || json.Unmarshal(v[1], &g) != nil {
		return nil
	}
	return g
}

// up reports whether node n runs and is not stopped.
func (s *nodeState) up(n string) bool { return !s.killed[n] && !s.paused[n] }

// hears reports whether messages from src reach dst.
func (s *nodeState) hears(dst, src string) bool { return !slices.Contains(s.grudge[dst], src) }

// liveMajority reports whether some node that is up can exchange
// messages both ways, directly, with enough other nodes that are up to
// make a majority with itself: what a proposer needs to gather a quorum
// (messages are not relayed, so a chain of links does not count).
func (s *nodeState) liveMajority() bool {
	need := len(s.nodes)/2 + 1
	for _, a := range s.nodes {
		if !s.up(a) {
			continue
		}
		reach := 1
		for _, b := range s.nodes {
			if b != a && s.up(b) && s.hears(a, b) && s.hears(b, a) {
				reach++
			}
		}
		if reach >= need {
			return true
		}
	}
	return false
}

// allDown reports whether every node is killed or paused.
func (s *nodeState) allDown() bool {
	return !slices.ContainsFunc(s.nodes, s.up)
}

// computeLiveMajority measures, over the main phase [0, end), how long a
// live majority existed (liveMajority), the longest stretch without one,
// and how long every node was down. Each fault counts from the
// completion of the op that caused it to the completion of the op that
// ended it (a start ends when the restarted nodes answered init).
func computeLiveMajority(steps []workloads.NemesisStep, nodes []string, end time.Duration) *report.LiveMajority {
	if end <= 0 || len(nodes) == 0 {
		return nil
	}
	s := &nodeState{nodes: nodes, killed: map[string]bool{}, paused: map[string]bool{}}
	var live, allDown, gap, longestGap time.Duration
	at := time.Duration(0)
	advance := func(to time.Duration) {
		to = min(to, end)
		if to <= at {
			return
		}
		d := to - at
		if s.liveMajority() {
			live += d
			gap = 0
		} else {
			gap += d
			longestGap = max(longestGap, gap)
		}
		if s.allDown() {
			allDown += d
		}
		at = to
	}
	for _, st := range steps {
		if !st.Completed() {
			continue
		}
		advance(time.Duration(st.DoneNs))
		if time.Duration(st.DoneNs) >= end {
			break // the final phase heals; it is not part of the run's faults
		}
		s.apply(st)
	}
	advance(end)
	return &report.LiveMajority{
		Fraction:    live.Seconds() / end.Seconds(),
		LongestGapS: longestGap.Seconds(),
		AllDownS:    allDown.Seconds(),
		MainPhaseS:  end.Seconds(),
		Nodes:       len(nodes),
		Majority:    len(nodes)/2 + 1,
	}
}

// neverApplied lists the requested faults that never took effect in the
// main phase: no partition that cut a node off, no kill or pause that
// hit a node, no packet fault on some node's links, no clock change, no
// membership change a node answered with a configuration.
// Such a run did not test that fault, whatever its verdict.
func neverApplied(faults nemesis.Faults, steps []workloads.NemesisStep, end time.Duration) []string {
	hit := map[nemesis.Fault]bool{}
	for _, st := range steps {
		if !st.Completed() || time.Duration(st.DoneNs) >= end || stepHitNobody(st) {
			continue
		}
		switch st.F {
		case nemesis.StartPartition:
			hit[nemesis.Partition] = true
		case nemesis.KillOp:
			hit[nemesis.Kill] = true
		case nemesis.PauseOp:
			hit[nemesis.Pause] = true
		case nemesis.StartPacket:
			hit[nemesis.Packet] = len(st.Nodes) > 0 || hit[nemesis.Packet]
		case nemesis.ClockSkew:
			var clocks map[string]json.RawMessage
			hit[nemesis.Clock] = hit[nemesis.Clock] || json.Unmarshal(st.Value, &clocks) == nil && len(clocks) > 0
		case nemesis.MemberOp:
			var answer struct{ Epoch *uint64 }
			hit[nemesis.Member] = hit[nemesis.Member] || json.Unmarshal(st.Value, &answer) == nil && answer.Epoch != nil
		}
	}
	var missing []string
	for _, f := range nemesis.KnownFaults {
		if faults.Has(f) && !hit[f] {
			missing = append(missing, string(f))
		}
	}
	return missing
}

// liveMajorityWarnBelow: a run with a live majority for less of its
// time than this gets a warning.
const liveMajorityWarnBelow = 0.5

// beginOp is the op that starts each fault.
var beginOp = map[string]string{
	string(nemesis.Partition): nemesis.StartPartition, string(nemesis.Kill): nemesis.KillOp,
	string(nemesis.Pause): nemesis.PauseOp, string(nemesis.Packet): nemesis.StartPacket, string(nemesis.Clock): nemesis.ClockSkew,
	string(nemesis.Member): nemesis.MemberOp,
}

// faultWarnings are the loud lines of the summary: a requested fault
// that never took effect, and a run that had no live majority most of
// the time.
func faultWarnings(n report.NemesisResult) []string {
	var out []string
	for _, f := range n.NeverApplied {
		op := beginOp[f]
		why := fmt.Sprintf("the schedule reached no %s op before the time limit", op)
		switch k := n.Ops[op]; {
		case k == 1:
			why = fmt.Sprintf("1 %s op, which hit no node", op)
		case k > 1:
			why = fmt.Sprintf("%d %s ops, none of which hit a node", k, op)
		}
		out = append(out, fmt.Sprintf("WARNING: --nemesis %s was requested, but no %s fault took effect during the run (%s): the run did not test it. "+
			"A longer --time-limit or a shorter --nemesis-interval gives it more chances.", f, f, why))
	}
	if m := n.LiveMajority; m != nil && m.Fraction < liveMajorityWarnBelow {
		out = append(out, fmt.Sprintf("WARNING: a majority of the nodes (%d of %d) was up and connected for only %.0f%% of the run "+
			"(the longest stretch without one %.1f s; every node down for %.1f s): its availability and failover figures say little about a working cluster. "+
			"A longer --nemesis-interval, or fewer process faults, leaves a majority up longer.",
			m.Majority, m.Nodes, 100*m.Fraction, m.LongestGapS, m.AllDownS))
	}
	return out
}

// liveMajorityText is the nemesis line's account of the live majority.
func liveMajorityText(m *report.LiveMajority) string {
	if m.LongestGapS == 0 {
		return "a live majority all the run"
	}
	return fmt.Sprintf("a live majority %.0f%% of the run (longest stretch without %.1f s, every node down %.1f s)",
		100*m.Fraction, m.LongestGapS, m.AllDownS)
}
