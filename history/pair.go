package history

import "fmt"

// Pair is a client invocation and its completion, nil when the history
// ends before the op completed.
type Pair struct {
	Invoke     Op
	Completion *Op
}

// Problem is a structural defect of a history that a checker
// cannot judge around: a completion without an invoke, a second invoke
// by a busy process, a completion with another f.
type Problem struct {
	Index int    `json:"index"` // the op at fault
	Text  string `json:"text"`
}

// PairOps matches each client invoke with the next completion of the same
// process, as Jepsen does (a process has at most one op in flight).
// Nemesis ops are skipped. Pairs come back in invoke order; problems list
// every op that breaks the process discipline (those ops are not paired).
func PairOps(history []Op) ([]Pair, []Problem) {
	var pairs []Pair
	var problems []Problem
	s := NewPairStream(func(p Pair) error {
		pairs = append(pairs, p)
		return nil
	}, func(p Problem) { problems = append(problems, p) })
	for i := range history {
		_ = s.add(&history[i]) // emit never fails; completions point into history
	}
	_ = s.Close()
	return pairs, problems
}

// PairStream is PairOps for a history read one op at a time: it hands
// out the same pairs, in the same (invoke) order, and the same problems,
// in history order. A completed pair waits only while an earlier invoke is
// still open, so what it holds is bounded by the ops that complete during
// the longest op in flight (the harness times a client op out after 5 s),
// not by the history's length. Ops must come in index order.
type PairStream struct {
	pending map[Process]int // process -> sequence number of its open invoke
	queue   []queuedPair    // pairs by sequence number, from base on
	base    int             // sequence number of queue[0]
	head    int             // queue[:head] were emitted
	emit    func(Pair) error
	problem func(Problem)
}

// queuedPair is a pair and whether it can go: completed, or open for good
// (its process invoked again).
type queuedPair struct {
	pair  Pair
	ready bool
}

// NewPairStream returns a stream that passes each pair to emit and each
// problem to problem.
func NewPairStream(emit func(Pair) error, problem func(Problem)) *PairStream {
	return &PairStream{pending: map[Process]int{}, emit: emit, problem: problem}
}

// Add takes the next op of the history; nemesis ops are skipped. It
// returns emit's first error.
func (s *PairStream) Add(op Op) error {
	if op.Process.Nemesis {
		return nil
	}
	return s.add(&op)
}

// add is Add for an op the stream may point at.
func (s *PairStream) add(ref *Op) error {
	op := *ref
	if op.Process.Nemesis {
		return nil
	}
	open, busy := s.pending[op.Process]
	if op.Type == Invoke {
		if busy {
			q := &s.queue[open-s.base]
			s.problem(Problem{op.Index, fmt.Sprintf(
				"process %d invoked %s while its op %d is still open", op.Process.ID, op.F, q.pair.Invoke.Index)})
			q.ready = true // it will never complete: its process moved on
		}
		s.pending[op.Process] = s.base + len(s.queue)
		s.queue = append(s.queue, queuedPair{pair: Pair{Invoke: op}})
		return s.flush()
	}
	switch q := s.at(open); {
	case !busy:
		s.problem(Problem{op.Index, fmt.Sprintf(
			"%s completion of %s by process %d without an open invoke", op.Type, op.F, op.Process.ID)})
	case q.pair.Invoke.F != op.F:
		s.problem(Problem{op.Index, fmt.Sprintf(
			"completion f %q does not match invoke %d f %q", op.F, q.pair.Invoke.Index, q.pair.Invoke.F)})
	default:
		q.pair.Completion, q.ready = ref, true
		delete(s.pending, op.Process)
	}
	return s.flush()
}

// at is the queued pair with sequence number seq, or nil.
func (s *PairStream) at(seq int) *queuedPair {
	if i := seq - s.base; i >= 0 && i < len(s.queue) {
		return &s.queue[i]
	}
	return nil
}

// Close hands out every pair still held, the open ones without a
// completion, as PairOps leaves them at the end of a history.
func (s *PairStream) Close() error {
	for i := s.head; i < len(s.queue); i++ {
		s.queue[i].ready = true
	}
	return s.flush()
}

// flush emits the ready pairs at the front of the queue, and drops the
// emitted ones once they are half of it (each pair is moved O(1) times).
func (s *PairStream) flush() error {
	for s.head < len(s.queue) && s.queue[s.head].ready {
		if err := s.emit(s.queue[s.head].pair); err != nil {
			return err
		}
		s.queue[s.head] = queuedPair{} // let its ops go
		s.head++
	}
	if s.head > 0 && s.head >= len(s.queue)/2 {
		s.base += s.head
		s.queue = append(s.queue[:0], s.queue[s.head:]...)
		s.head = 0
	}
	return nil
}
