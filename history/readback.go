package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Reading a history back from disk in memory that does not grow with it:
// the harness's analysis of a run of any length (ReadBack).

// PairSink receives a history's client ops as PairOps pairs them, in
// invoke order, and its structural problems, in history order.
type PairSink interface {
	Pair(p Pair) error
	Problem(p Problem)
}

// Facts is what reading a whole history taught besides its pairs.
type Facts struct {
	Ops             int      // lines, nemesis ops included
	FirstNs, LastNs int64    // the smallest and largest op time; 0 without ops
	Nodes           []string // the node names client ops carry, sorted
	Nemesis         []Op     // every nemesis op, in order
}

// ReadBack reads history.jsonl at path twice, in memory that does not
// grow with it. The first pass decodes only the nemesis ops (the lines
// that mention "nemesis"), so that every sink knows the faults before the
// first client op, as each key's sub-history does in Jepsen's independent
// checker; open then makes the sinks. The second pass decodes every line
// as ReadHistory does (same rules, same errors), pairs client ops as
// PairOps does (PairStream) and hands each pair and problem to every
// sink, in order; a sink that also implements OpObserver sees every op.
// It returns what the history showed besides its pairs.
func ReadBack(path string, open func(nemesis []Op) ([]PairSink, error)) (Facts, error) {
	nemesis, err := readNemesis(path)
	if err != nil {
		return Facts{}, err
	}
	sinks, err := open(nemesis)
	if err != nil {
		return Facts{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Facts{}, err
	}
	defer f.Close()
	return readPairs(f, nemesis, sinks)
}

// OpObserver is a PairSink that also wants every op, before it is paired
// (counts of completions, including ones that pair with nothing).
type OpObserver interface {
	Op(op Op)
}

// readNemesis is ReadBack's first pass.
func readNemesis(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Op
	n := 0
	strings := &interner{}
	err = scanLines(f, func(lineNo int, line []byte) error {
		if isBlank(line) {
			return nil
		}
		n++
		if !bytes.Contains(line, []byte(`"nemesis"`)) {
			return nil
		}
		fields, err := decodeOpLine(line, strings)
		var op Op
		if err == nil {
			op, err = fields.validate(n - 1)
		}
		if err != nil {
			return &lineError{fmt.Errorf("history line %d: %w", lineNo, err)}
		}
		if op.Process.Nemesis {
			out = append(out, op)
		}
		return nil
	})
	return out, err
}

// errNemesisMismatch is a second pass that met a nemesis op the first
// pass did not see (a line that names the nemesis in an unusual way).
var errNemesisMismatch = errors.New("history: the nemesis ops changed between the two passes over the history")

// readPairs is ReadBack's second pass.
func readPairs(r io.Reader, nemesis []Op, sinks []PairSink) (Facts, error) {
	facts := Facts{Nemesis: nemesis}
	nodes := map[string]bool{}
	var observers []OpObserver
	for _, s := range sinks {
		if o, ok := s.(OpObserver); ok {
			observers = append(observers, o)
		}
	}
	stream := NewPairStream(func(p Pair) error {
		for _, s := range sinks {
			if err := s.Pair(p); err != nil {
				return err
			}
		}
		return nil
	}, func(p Problem) {
		for _, s := range sinks {
			s.Problem(p)
		}
	})
	seen := 0 // nemesis ops met
	err := ScanHistory(r, func(op Op) error {
		facts.note(op, nodes)
		for _, o := range observers {
			o.Op(op)
		}
		if op.Process.Nemesis {
			if seen >= len(nemesis) || nemesis[seen].Index != op.Index {
				return errNemesisMismatch
			}
			seen++
		}
		return stream.Add(op)
	})
	if err == nil && seen != len(nemesis) {
		err = errNemesisMismatch
	}
	if err == nil {
		err = stream.Close()
	}
	for n := range nodes {
		facts.Nodes = append(facts.Nodes, n)
	}
	slices.Sort(facts.Nodes)
	return facts, err
}

// note counts op and widens the time span.
func (f *Facts) note(op Op, nodes map[string]bool) {
	if f.Ops == 0 {
		f.FirstNs, f.LastNs = op.Time, op.Time
	}
	f.Ops++
	f.FirstNs, f.LastNs = min(f.FirstNs, op.Time), max(f.LastNs, op.Time)
	if !op.Process.Nemesis && op.Node != "" {
		nodes[op.Node] = true
	}
}
