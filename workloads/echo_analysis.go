package workloads

import (
	"chunklease/history"
)

// NewAnalysis judges an echo history read back op by op (Analyzer): the
// result is CheckEcho's and ComputeStats's.
func (e *Echo) NewAnalysis(env AnalysisEnv) (Analysis, error) {
	return &echoAnalysis{res: EchoResult{Errors: []EchoError{}}, stats: newStatsBuilder(env.Nemesis), messages: env.Messages}, nil
}

type echoAnalysis struct {
	res       EchoResult
	pairFails []EchoError // the pairs' errors; CheckEcho lists PairOps's problems first
	stats     *statsBuilder
	messages  int
}

func (a *echoAnalysis) Pair(p history.Pair) error {
	a.stats.add(p)
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

func (a *echoAnalysis) Finish(history.Facts) (Analyzed, error) {
	res := a.res
	res.Errors = append(res.Errors, a.pairFails...)
	res.Valid = len(res.Errors) == 0
	return Analyzed{Result: Result{Valid: res.Valid, Details: res}, Stats: a.stats.result(a.messages)}, nil
}

// Abort gives up; there is nothing to clean.
func (a *echoAnalysis) Abort() {}
