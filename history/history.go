package history

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

	"chunklease/internal/jsonstr"
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
// in the contract's key order. A Writer made by NewWriter also keeps every
// op it wrote, so that a simulation can hand the same history to a
// checker; one made by NewStreamWriter keeps none, so that a long run's
// memory does not grow with its history (the harness reads the file back).
// A Writer is safe for concurrent use: clients complete on their own
// goroutines.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	keep bool
	n    int // ops written
	ops  []Op
	err  error // the first write error; later appends return it
}

// NewWriter returns a Writer that writes to w and keeps what it wrote.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, keep: true}
}

// NewStreamWriter returns a Writer that writes to w and keeps nothing:
// Ops returns nil.
func NewStreamWriter(w io.Writer) *Writer {
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
	op.Index = hw.n
	line, err := marshalOp(op)
	if err != nil {
		return op, err // a bad value is the caller's error; the stream stays usable
	}
	if _, err := hw.w.Write(line); err != nil {
		hw.err = fmt.Errorf("history: writing op %d: %w", op.Index, err)
		return op, hw.err
	}
	hw.n++
	if hw.keep {
		hw.ops = append(hw.ops, op)
	}
	return op, nil
}

// Len is the number of ops written so far.
func (hw *Writer) Len() int {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	return hw.n
}

// Ops returns a copy of every op written so far, in index order; nil for
// a stream writer.
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
	b = jsonstr.Append(append(b, `,"type":`...), op.Type)
	b = jsonstr.Append(append(b, `,"f":`...), op.F)
	if op.Node != "" {
		b = jsonstr.Append(append(b, `,"node":`...), op.Node)
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
		b = jsonstr.Append(append(b, `,"error":`...), op.Error)
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
	var ops []Op
	err := ScanHistory(r, func(op Op) error {
		ops = append(ops, op)
		return nil
	})
	return ops, err
}

// ScanHistory reads history.jsonl as ReadHistory does, but hands each op
// to fn in order instead of keeping it: memory stays flat however long the
// history. An error from fn stops the scan and is returned as it is.
func ScanHistory(r io.Reader, fn func(Op) error) error {
	n := 0
	strings := &interner{}
	return scanLines(r, func(lineNo int, line []byte) error {
		if isBlank(line) {
			return nil
		}
		f, err := decodeOpLine(line, strings)
		var op Op
		if err == nil {
			op, err = f.validate(n)
		}
		if err != nil {
			return &lineError{fmt.Errorf("history line %d: %w", lineNo, err)}
		}
		n++
		return fn(op)
	})
}

// lineError is a defect of the history itself, as opposed to an error of
// ScanHistory's caller, which passes through unwrapped.
type lineError struct{ error }

func (e *lineError) Unwrap() error { return e.error }

// scanLines calls fn with each line of r (its '\n' included, the slice
// valid only during the call) and its 1-based number. A read error is
// reported with the number of the line it interrupted.
func scanLines(r io.Reader, fn func(lineNo int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte // a line longer than the buffer, gathered piecewise
	for lineNo := 1; ; {
		part, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, part...)
			continue
		}
		line := part
		if long != nil {
			line = append(long, part...)
		}
		if len(line) > 0 {
			if ferr := fn(lineNo, line); ferr != nil {
				var le *lineError
				if errors.As(ferr, &le) {
					return le.error
				}
				return ferr
			}
		}
		long = nil
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("history line %d: %w", lineNo, err)
		}
		lineNo++
	}
}

func validType(t string) bool {
	return t == Invoke || t == OK || t == Fail || t == Info
}
