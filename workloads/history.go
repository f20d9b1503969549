package workloads

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
)

// Op types, as Jepsen names them.
const (
	Invoke = "invoke" // an operation began
	OK     = "ok"     // it happened
	Fail   = "fail"   // it definitely did not happen
	Info   = "info"   // unknown: it may or may not have happened
)

// Op is one line of history.jsonl. Key order on the wire follows the
// contract: index, time, process, type, f, node, value, error.
type Op struct {
	Index   int             `json:"index"`
	Time    int64           `json:"time"` // nanoseconds since the test started
	Process Process         `json:"process"`
	Type    string          `json:"type"`
	F       string          `json:"f"`
	Node    string          `json:"node,omitempty"`
	Value   json.RawMessage `json:"value"`
	Error   string          `json:"error,omitempty"`
}

// Process is a Jepsen logical client identity: a worker number, or the
// nemesis. On the wire it is an integer or the string "nemesis".
type Process struct {
	ID      int
	Nemesis bool
}

// NemesisProcess is the process of every nemesis op.
var NemesisProcess = Process{Nemesis: true}

// MarshalJSON writes an integer, or "nemesis".
func (p Process) MarshalJSON() ([]byte, error) {
	if p.Nemesis {
		return []byte(`"nemesis"`), nil
	}
	return strconv.AppendInt(nil, int64(p.ID), 10), nil
}

// UnmarshalJSON reads an integer, or "nemesis".
func (p *Process) UnmarshalJSON(b []byte) error {
	if string(b) == `"nemesis"` {
		*p = NemesisProcess
		return nil
	}
	id, err := strconv.Atoi(string(b))
	if err != nil {
		return fmt.Errorf("process must be an integer or \"nemesis\", got %s", b)
	}
	*p = Process{ID: id}
	return nil
}

// Writer appends ops to a history.jsonl stream. It assigns dense indices
// (0, 1, 2, ... in the order ops are appended) and writes one op per line
// in the contract's key order. It keeps every op it wrote so the harness
// can hand the same history to the checker. A Writer is safe for concurrent
// use: clients complete on their own goroutines.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	ops []Op
	err error // the first write error; later appends return it
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Append gives op the next index, writes it as one line, and returns the
// indexed op. Time is the caller's: nanoseconds since the test started.
// After a write error every later Append returns that error and the op is
// not recorded, so the file and Ops never disagree.
func (hw *Writer) Append(op Op) (Op, error) {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if hw.err != nil {
		return op, hw.err
	}
	op.Index = len(hw.ops)
	line, err := marshalOp(op)
	if err != nil {
		return op, err // a bad value is the caller's error; the stream stays usable
	}
	if _, err := hw.w.Write(line); err != nil {
		hw.err = fmt.Errorf("history: writing op %d: %w", op.Index, err)
		return op, hw.err
	}
	hw.ops = append(hw.ops, op)
	return op, nil
}

// Ops returns a copy of every op written so far, in index order.
func (hw *Writer) Ops() []Op {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	return slices.Clone(hw.ops)
}

// WriteHistory writes ops as history.jsonl, renumbering their indices
// densely from 0 in slice order.
func WriteHistory(w io.Writer, ops []Op) error {
	hw := NewWriter(w)
	for _, op := range ops {
		if _, err := hw.Append(op); err != nil {
			return err
		}
	}
	return nil
}

// marshalOp renders one op as a compact JSON line ending in '\n', keys in
// the contract's order: index, time, process, type, f, node (when set),
// value (null when nil), error (when set). It appends by hand because the
// harness and the simulations write an op per event; the value is
// validated and compacted, so a line never breaks.
func marshalOp(op Op) ([]byte, error) {
	if op.Type == "" || op.F == "" {
		return nil, fmt.Errorf("history: op %d has an empty type or f", op.Index)
	}
	b := make([]byte, 0, 128+len(op.Value))
	b = strconv.AppendInt(append(b, `{"index":`...), int64(op.Index), 10)
	b = strconv.AppendInt(append(b, `,"time":`...), op.Time, 10)
	b = append(b, `,"process":`...)
	if op.Process.Nemesis {
		b = append(b, `"nemesis"`...)
	} else {
		b = strconv.AppendInt(b, int64(op.Process.ID), 10)
	}
	b = appendJSONString(append(b, `,"type":`...), op.Type)
	b = appendJSONString(append(b, `,"f":`...), op.F)
	if op.Node != "" {
		b = appendJSONString(append(b, `,"node":`...), op.Node)
	}
	b = append(b, `,"value":`...)
	if len(op.Value) == 0 {
		b = append(b, "null"...)
	} else {
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, op.Value); err != nil {
			return nil, fmt.Errorf("history: op %d (%s %s) value %q: %w", op.Index, op.Type, op.F, op.Value, err)
		}
		b = buf.Bytes()
	}
	if op.Error != "" {
		b = appendJSONString(append(b, `,"error":`...), op.Error)
	}
	return append(b, "}\n"...), nil
}

// wireOp is how ReadHistory decodes a line: pointers tell a missing
// field from a zero one.
type wireOp struct {
	Index   *int            `json:"index"`
	Time    *int64          `json:"time"`
	Process *Process        `json:"process"`
	Type    *string         `json:"type"`
	F       *string         `json:"f"`
	Node    string          `json:"node"`
	Value   json.RawMessage `json:"value"`
	Error   string          `json:"error"`
}

// ReadHistory reads history.jsonl. Every line must be one JSON object with
// index (dense from 0, equal to its position), time (>= 0), process, type
// (invoke, ok, fail or info) and f; node, value and error are optional and
// unknown keys are ignored. Blank lines are skipped. An error names the
// 1-based line number and what is wrong with it.
func ReadHistory(r io.Reader) ([]Op, error) {
	br := bufio.NewReader(r)
	var ops []Op
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			op, perr := parseOpLine(line, len(ops))
			if perr != nil {
				return ops, fmt.Errorf("history line %d: %w", lineNo, perr)
			}
			ops = append(ops, op)
		}
		if err == io.EOF {
			return ops, nil
		}
		if err != nil {
			return ops, fmt.Errorf("history line %d: %w", lineNo, err)
		}
	}
}

// parseOpLine decodes and validates one line; want is the index it must carry.
func parseOpLine(line []byte, want int) (Op, error) {
	var w wireOp
	if err := json.Unmarshal(line, &w); err != nil {
		return Op{}, fmt.Errorf("not a JSON op object: %w", err)
	}
	switch {
	case w.Index == nil:
		return Op{}, errors.New(`missing "index"`)
	case *w.Index != want:
		return Op{}, fmt.Errorf(`"index" is %d, want %d (indices are dense from 0, one per line)`, *w.Index, want)
	case w.Time == nil:
		return Op{}, errors.New(`missing "time"`)
	case *w.Time < 0:
		return Op{}, fmt.Errorf(`"time" is %d, want nanoseconds >= 0 since the test started`, *w.Time)
	case w.Process == nil:
		return Op{}, errors.New(`missing "process"`)
	case w.Type == nil:
		return Op{}, errors.New(`missing "type"`)
	case !validType(*w.Type):
		return Op{}, fmt.Errorf(`"type" is %q, want invoke, ok, fail or info`, *w.Type)
	case w.F == nil || *w.F == "":
		return Op{}, errors.New(`missing or empty "f"`)
	}
	return Op{Index: *w.Index, Time: *w.Time, Process: *w.Process, Type: *w.Type,
		F: *w.F, Node: w.Node, Value: w.Value, Error: w.Error}, nil
}

func validType(t string) bool {
	return t == Invoke || t == OK || t == Fail || t == Info
}
