package histtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"chunklease/history"
	leasewl "chunklease/workloads/lease"
)

// Recorder keeps a test's client ops in history.jsonl (the workloads
// writer, in the test's temporary directory).
type Recorder struct {
	t     testing.TB
	start time.Time
	mu    sync.Mutex
	w     *history.Writer
	file  *os.File
}

// New makes a Recorder whose file lives in t's temporary directory.
func New(t testing.TB) *Recorder {
	f, err := os.Create(filepath.Join(t.TempDir(), "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &Recorder{t: t, start: time.Now(), w: history.NewWriter(f), file: f}
}

func (r *Recorder) record(op history.Op) {
	r.mu.Lock() // one lock for time and index: the history is in real-time order
	defer r.mu.Unlock()
	op.Time = int64(time.Since(r.start))
	if _, err := r.w.Append(op); err != nil {
		r.t.Errorf("history: %v", err)
	}
}

// Invoke records the start of op f through node with the history value.
func (r *Recorder) Invoke(proc int, node, f string, value map[string]any) {
	inv, _ := json.Marshal(value)
	r.record(history.Op{Process: history.Process{ID: proc}, Type: history.Invoke, F: f, Node: node, Value: inv})
}

// Unknown records an op that got no answer: info (it may have happened),
// fail for a check (a read changes nothing).
func (r *Recorder) Unknown(proc int, node, f string, value map[string]any, why string) {
	inv, _ := json.Marshal(value)
	typ := history.Info
	if f == "check" {
		typ = history.Fail
	}
	r.record(history.Op{Process: history.Process{ID: proc}, Type: typ, F: f, Node: node, Value: inv, Error: why})
}

// Complete records the reply: ok with the reply's fields, fail for a
// definite error, info for error 0.
func (r *Recorder) Complete(proc int, node, f string, value, reply map[string]any) {
	out := map[string]any{}
	for k, v := range value {
		out[k] = v
	}
	typ := history.OK
	if reply["type"] == "error" {
		typ = history.Fail
		if reply["code"] == float64(0) {
			typ = history.Info
		}
	} else {
		for _, k := range []string{"primary", "expires_in_ms", "new_expires_in_ms", "remaining_ms", "expired", "token"} {
			if v, ok := reply[k]; ok && !(f == "release" && k == "token") {
				out[k] = v
			}
		}
	}
	v, _ := json.Marshal(out)
	r.record(history.Op{Process: history.Process{ID: proc}, Type: typ, F: f, Node: node, Value: v})
}

// Ops are the ops recorded so far, in order.
func (r *Recorder) Ops() []history.Op { return r.w.Ops() }

// Judge checks the history with the lease checker: valid, and every
// holding with a token of its own among its chunk's.
func (r *Recorder) Judge() leasewl.LeaseResult {
	r.t.Helper()
	ops := r.w.Ops()
	res := leasewl.CheckLease(ops)
	if !res.Valid {
		r.t.Fatalf("the lease checker judged the history (%s) invalid: %+v %+v", r.file.Name(), res.Violations, res.Problems)
	}
	// Tokens are ordered per chunk (lease/doc.go "Cores sharing one
	// member": two cores of a member may give two chunks equal tokens).
	type chunkToken struct {
		chunk string
		token int64
	}
	seen := map[chunkToken]bool{}
	for _, h := range res.Holdings {
		k := chunkToken{h.Chunk, h.Token}
		if h.Token == 0 || seen[k] {
			r.t.Fatalf("holding %+v: a missing token, or one its chunk already had", h)
		}
		seen[k] = true
	}
	return res
}
