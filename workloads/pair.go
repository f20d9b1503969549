package workloads

import "fmt"

// Pair is a client invocation and its completion, nil when the history
// ends before the op completed.
type Pair struct {
	Invoke     Op
	Completion *Op
}

// HistoryProblem is a structural defect of a history that a checker
// cannot judge around: a completion without an invoke, a second invoke
// by a busy process, a completion with another f.
type HistoryProblem struct {
	Index int    `json:"index"` // the op at fault
	Text  string `json:"text"`
}

// PairOps matches each client invoke with the next completion of the same
// process, as Jepsen does (a process has at most one op in flight).
// Nemesis ops are skipped. Pairs come back in invoke order; problems list
// every op that breaks the process discipline (those ops are not paired).
func PairOps(history []Op) ([]Pair, []HistoryProblem) {
	pending := map[Process]int{} // process -> index into pairs of its open invoke
	var pairs []Pair
	var problems []HistoryProblem
	for i := range history {
		op := history[i]
		if op.Process.Nemesis {
			continue
		}
		open, busy := pending[op.Process]
		if op.Type == Invoke {
			if busy {
				problems = append(problems, HistoryProblem{op.Index, fmt.Sprintf(
					"process %d invoked %s while its op %d is still open", op.Process.ID, op.F, pairs[open].Invoke.Index)})
			}
			pending[op.Process] = len(pairs)
			pairs = append(pairs, Pair{Invoke: op})
			continue
		}
		switch {
		case !busy:
			problems = append(problems, HistoryProblem{op.Index, fmt.Sprintf(
				"%s completion of %s by process %d without an open invoke", op.Type, op.F, op.Process.ID)})
		case pairs[open].Invoke.F != op.F:
			problems = append(problems, HistoryProblem{op.Index, fmt.Sprintf(
				"completion f %q does not match invoke %d f %q", op.F, pairs[open].Invoke.Index, pairs[open].Invoke.F)})
		default:
			pairs[open].Completion = &history[i]
			delete(pending, op.Process)
		}
	}
	return pairs, problems
}
