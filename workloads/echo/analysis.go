package echo

import (
	"chunklease/history"
	"chunklease/workloads"
)

// NewAnalysis judges an echo history read back op by op (Analyzer): the
// result is CheckEcho's and ComputeStats's.
func (e *Echo) NewAnalysis(env workloads.AnalysisEnv) (workloads.Analysis, error) {
	return &echoAnalysis{res: EchoResult{Errors: []EchoError{}}, stats: workloads.NewStatsBuilder(env.Nemesis), messages: env.Messages}, nil
}

type echoAnalysis struct {
	res       EchoResult
	pairFails []EchoError // the pairs' errors; CheckEcho lists PairOps's problems first
	stats     *workloads.StatsBuilder
	messages  int
}

func (a *echoAnalysis) Pair(p history.Pair) error {
	a.stats.Add(p)
	a.res.Count++
	if e, bad := echoPairError(p); bad {
		a.pairFails = append(a.pairFails, e)
	} else {
		a.res.OKCount++
	}
	return nil
}

func (a *echoAnalysis) Problem(p history.Problem) {
	a.res.Errors = append(a.res.Errors, EchoError{InvokeIndex: p.Index, Problem: p.Text})
}

func (a *echoAnalysis) Finish(history.Facts) (workloads.Analyzed, error) {
	res := a.res
	res.Errors = append(res.Errors, a.pairFails...)
	res.Valid = len(res.Errors) == 0
	return workloads.Analyzed{Result: workloads.Result{Valid: res.Valid, Details: res}, Stats: a.stats.Result(a.messages)}, nil
}

// Abort gives up; there is nothing to clean.
func (a *echoAnalysis) Abort() {}
