package harness

import (
	"chunklease/history"
	"chunklease/maelstrom/netsim"
	"chunklease/report"
	"chunklease/workloads"
)

// computeNemesis counts the nemesis ops of a history (its nemesis ops
// alone will do): each completed step by f, and the nodes the completion
// of a kill, start, pause or resume lists.
func computeNemesis(ops []history.Op) report.NemesisResult {
	res := report.NemesisResult{Ops: map[string]int{}}
	hits := map[string]*int{workloads.NemesisKill: &res.NodesKilled, workloads.NemesisStart: &res.NodesRestarted,
		workloads.NemesisPause: &res.NodesPaused, workloads.NemesisResume: &res.NodesResumed}
	for _, st := range workloads.NemesisSteps(ops) {
		if !st.Completed() {
			continue
		}
		res.Ops[st.F]++
		if n, ok := hits[st.F]; ok {
			*n += len(st.Nodes)
		}
	}
	return res
}

// computeNet is the net checker's result for invoked client
// invocations; without message counts (a network that does not count
// them) it holds none.
func computeNet(s *netsim.Stats, invoked int) report.NetResult {
	if s == nil {
		return report.NetResult{Valid: true}
	}
	perOp := func(c netsim.Counts) *float64 {
		if invoked == 0 {
			return nil
		}
		v := float64(c.MsgCount) / float64(invoked)
		return &v
	}
	return report.NetResult{
		All:     &report.NetGroup{Counts: s.All, MsgsPerOp: perOp(s.All)},
		Clients: &report.NetGroup{Counts: s.Clients},
		Servers: &report.NetGroup{Counts: s.Servers, MsgsPerOp: perOp(s.Servers)},
		Valid:   true,
	}
}
