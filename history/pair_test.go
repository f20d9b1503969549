package history

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"chunklease/internal/testseed"
)

// pairOpsOracle is PairOps as a plain loop over a whole history, the
// version before PairStream.
func pairOpsOracle(ops []Op) ([]Pair, []Problem) {
	pending := map[Process]int{}
	var pairs []Pair
	var problems []Problem
	for i := range ops {
		op := ops[i]
		if op.Process.Nemesis {
			continue
		}
		open, busy := pending[op.Process]
		if op.Type == Invoke {
			if busy {
				problems = append(problems, Problem{Index: op.Index, Text: fmt.Sprintf(
					"process %d invoked %s while its op %d is still open", op.Process.ID, op.F, pairs[open].Invoke.Index)})
			}
			pending[op.Process] = len(pairs)
			pairs = append(pairs, Pair{Invoke: op})
			continue
		}
		switch {
		case !busy:
			problems = append(problems, Problem{Index: op.Index, Text: fmt.Sprintf(
				"%s completion of %s by process %d without an open invoke", op.Type, op.F, op.Process.ID)})
		case pairs[open].Invoke.F != op.F:
			problems = append(problems, Problem{Index: op.Index, Text: fmt.Sprintf(
				"completion f %q does not match invoke %d f %q", op.F, pairs[open].Invoke.Index, pairs[open].Invoke.F)})
		default:
			pairs[open].Completion = &ops[i]
			delete(pending, op.Process)
		}
	}
	return pairs, problems
}

// TestPairStreamMatchesPairOps: on random histories that break the
// process discipline in every way, the stream hands out PairOps's pairs
// in PairOps's order, and its problems.
func TestPairStreamMatchesPairOps(t *testing.T) {
	seed := testseed.Get(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	types := []string{Invoke, Invoke, OK, Fail, Info}
	for range 500 {
		var h []Op
		for i := range rng.IntN(60) {
			op := Op{Index: i, Time: int64(i), Process: Process{ID: rng.IntN(4)}, Type: types[rng.IntN(len(types))], F: []string{"a", "b"}[rng.IntN(2)]}
			if rng.IntN(8) == 0 {
				op.Process = NemesisProcess
			}
			h = append(h, op)
		}
		gotPairs, gotProblems := PairOps(h)
		wantPairs, wantProblems := pairOpsOracle(h)
		if !reflect.DeepEqual(gotPairs, wantPairs) || !reflect.DeepEqual(gotProblems, wantProblems) {
			t.Fatalf("history %+v:\npairs %+v\nproblems %+v\nwant %+v\n%+v", h, gotPairs, gotProblems, wantPairs, wantProblems)
		}
	}
}
