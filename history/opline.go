package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"chunklease/internal/flatjson"
)

// Reading history.jsonl back is the first thing the harness's analysis
// does, once per op, and encoding/json's reflection made it the largest
// cost of a long run's analysis. scanOpLine reads the lines the Writer
// itself writes (keys in any order, string values printable ASCII without
// escapes, integers, and a value that is a scalar or a flat object of
// scalars, as every client op's is); any other line falls back to
// encoding/json, so what a line means, and every error, is encoding/json's.
// FuzzOpLine holds the two to equality.

// opFields is one decoded line before validation: has* tell a missing
// field from a zero one, as wireOp's pointers do.
type opFields struct {
	op                                           Op
	hasIndex, hasTime, hasProcess, hasType, hasF bool
	strings                                      *interner // nil: every string allocated
}

// opLineKeys are the keys encoding/json would match to an op field (it
// matches case-insensitively); a key equal to one only up to case falls
// back.
var opLineKeys = []string{"index", "time", "process", "type", "f", "node", "value", "error"}

// decodeOpLine decodes one line as encoding/json would decode it into
// wireOp.
func decodeOpLine(line []byte, strings *interner) (opFields, error) {
	f := opFields{strings: strings}
	if scanOpLine(line, &f) {
		return f, nil
	}
	var w wireOp
	if err := json.Unmarshal(line, &w); err != nil {
		return opFields{}, fmt.Errorf("not a JSON op object: %w", err)
	}
	f = opFields{op: Op{Node: w.Node, Value: w.Value, Error: w.Error}}
	if f.hasIndex = w.Index != nil; f.hasIndex {
		f.op.Index = *w.Index
	}
	if f.hasTime = w.Time != nil; f.hasTime {
		f.op.Time = *w.Time
	}
	if f.hasProcess = w.Process != nil; f.hasProcess {
		f.op.Process = *w.Process
	}
	if f.hasType = w.Type != nil; f.hasType {
		f.op.Type = *w.Type
	}
	if f.hasF = w.F != nil; f.hasF {
		f.op.F = *w.F
	}
	return f, nil
}

// validate applies ReadHistory's rules; want is the index the line must
// carry.
func (f opFields) validate(want int) (Op, error) {
	switch {
	case !f.hasIndex:
		return Op{}, errors.New(`missing "index"`)
	case f.op.Index != want:
		return Op{}, fmt.Errorf(`"index" is %d, want %d (indices are dense from 0, one per line)`, f.op.Index, want)
	case !f.hasTime:
		return Op{}, errors.New(`missing "time"`)
	case f.op.Time < 0:
		return Op{}, fmt.Errorf(`"time" is %d, want nanoseconds >= 0 since the test started`, f.op.Time)
	case !f.hasProcess:
		return Op{}, errors.New(`missing "process"`)
	case !f.hasType:
		return Op{}, errors.New(`missing "type"`)
	case !validType(f.op.Type):
		return Op{}, fmt.Errorf(`"type" is %q, want invoke, ok, fail or info`, f.op.Type)
	case !f.hasF || f.op.F == "":
		return Op{}, errors.New(`missing or empty "f"`)
	}
	return f.op, nil
}

// scanOpLine decodes a line inside the fast subset into f; false means
// the caller must fall back (f may then hold part of the line).
func scanOpLine(b []byte, f *opFields) bool {
	return flatjson.Whole(b, flatjson.Value, f.set)
}

// set stores one field the way encoding/json would, or reports that it
// cannot (null where a pointer field would become nil, a number that does
// not fit, a key that matches a field only up to case).
func (f *opFields) set(key, val []byte) bool {
	switch string(key) {
	case "index":
		n, ok := flatjson.Int(val)
		f.op.Index, f.hasIndex = int(n), true
		return ok && int64(int(n)) == n
	case "time":
		n, ok := flatjson.Int(val)
		f.op.Time, f.hasTime = n, true
		return ok
	case "process":
		if string(val) == `"nemesis"` {
			f.op.Process, f.hasProcess = NemesisProcess, true
			return true
		}
		n, ok := flatjson.Int(val)
		f.op.Process, f.hasProcess = Process{ID: int(n)}, true
		return ok && int64(int(n)) == n
	case "type":
		f.hasType = true
		return f.strings.str(val, &f.op.Type)
	case "f":
		f.hasF = true
		return f.strings.str(val, &f.op.F)
	case "node":
		return f.strings.str(val, &f.op.Node)
	case "error":
		return f.strings.str(val, &f.op.Error)
	case "value":
		f.op.Value = append(json.RawMessage(nil), val...)
		return true
	}
	return !flatjson.FoldsToOneOf(key, opLineKeys)
}

// interner shares the strings a history repeats (types, fs, node names,
// keys) instead of allocating each: the first internLimit distinct
// strings are kept, the rest allocated as they come, so a history of
// many distinct values costs no more memory than before. One interner
// serves one reader (it is not safe for concurrent use).
type interner struct{ m map[string]string }

const internLimit = 4096

func (in *interner) intern(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in.m[string(b)]; ok { // no allocation: the compiler looks up without converting
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < internLimit {
		in.m[s] = s
	}
	return s
}

// str reads a string token (flatjson.Whole vouched for its syntax) into dst.
func (in *interner) str(val []byte, dst *string) bool {
	if len(val) < 2 || val[0] != '"' {
		return false
	}
	*dst = in.intern(val[1 : len(val)-1])
	return true
}

// isBlank reports whether a line holds only JSON whitespace.
func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }
