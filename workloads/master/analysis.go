package master

import (
	"chunklease/history"
	"chunklease/workloads"
)

// NewAnalysis judges a master history read back op by op (Analyzer): the
// checker keeps each node's beliefs and stops, the statistics their sums;
// the result is CheckMaster's and MasterStats's.
func (m *Master) NewAnalysis(env workloads.AnalysisEnv) (workloads.Analysis, error) {
	return &masterAnalysis{check: newMasterChecker(), stats: workloads.NewStatsBuilder(env.Nemesis), messages: env.Messages}, nil
}

type masterAnalysis struct {
	check    *masterChecker
	stats    *workloads.StatsBuilder
	messages int
}

func (a *masterAnalysis) Pair(p history.Pair) error {
	a.check.add(p)
	a.stats.Add(p)
	return nil
}

func (a *masterAnalysis) Problem(p history.Problem) { a.check.Problem(p) }

func (a *masterAnalysis) Finish(facts history.Facts) (workloads.Analyzed, error) {
	res := a.check.result()
	known := map[string]bool{}
	for _, n := range facts.Nodes {
		known[n] = true
	}
	run := workloads.Interval{StartNs: facts.FirstNs, EndNs: facts.LastNs}
	st := masterStats(a.stats.Result(a.messages), masterFaults(facts.Nemesis, known), run, res.Tenures)
	return workloads.Analyzed{Result: workloads.Result{Valid: res.Valid, Details: res}, Stats: st}, nil
}

// Abort gives up; there is nothing to clean.
func (a *masterAnalysis) Abort() {}
