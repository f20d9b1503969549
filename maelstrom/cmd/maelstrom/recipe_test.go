package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/workloads"
)

// The recipe of docs/adding-a-workload.md, followed: a toy workload that
// lives entirely in this file (its "own folder") and one registration
// line, then run through the harness like any other.

// toy numbers its echo requests ("toy 1", "toy 2", ...) and is valid when
// every one came back ok with its own text.
type toy struct {
	stagger workloads.Stagger
	rng     *rand.Rand
	sent    int
}

// newToy is the toy's FromParams: it reads --rate and the seed.
func newToy(p workloads.Params) (workloads.Workload, error) {
	if p.Rate <= 0 {
		return nil, fmt.Errorf("toy workload: --rate must be > 0, got %v", p.Rate)
	}
	return &toy{stagger: workloads.NewStagger(p.Rate), rng: workloads.NewRand(p.Seed)}, nil
}

func (t *toy) Name() string        { return "toy" }
func (t *toy) Wake() time.Duration { return t.stagger.NextAt() }

func (t *toy) Next(now time.Duration, _ int) (workloads.Invocation, bool) {
	if !t.stagger.Due(now) {
		return workloads.Invocation{}, false
	}
	t.stagger.Fire(now, t.rng)
	t.sent++
	value, _ := json.Marshal(fmt.Sprintf("toy %d", t.sent))
	return workloads.Invocation{F: "echo", Value: value}, true
}

func (t *toy) Request(inv workloads.Invocation) json.RawMessage {
	return fmt.Appendf(nil, `{"type":"echo","echo":%s}`, inv.Value)
}

func (t *toy) Complete(_ time.Duration, _ int, inv workloads.Invocation, reply json.RawMessage) workloads.Completion {
	if c, done := workloads.ErrorCompletion(inv, reply, false); done {
		return c
	}
	var body struct {
		Echo json.RawMessage `json:"echo"`
	}
	if json.Unmarshal(reply, &body) != nil || body.Echo == nil {
		return workloads.MalformedReply(inv, "want {\"type\":\"echo_ok\",\"echo\":...}")
	}
	return workloads.Completion{Type: history.OK, Value: body.Echo}
}

// toyResult is the toy checker's verdict.
type toyResult struct {
	Ops  int   `json:"ops"`
	Lost []int `json:"lost"` // invoke indices of echoes that did not come back intact
}

func (t *toy) Check(ops []history.Op) workloads.Result {
	pairs, problems := history.PairOps(ops)
	res := toyResult{Ops: len(pairs), Lost: []int{}}
	for _, p := range problems {
		res.Lost = append(res.Lost, p.Index)
	}
	for _, p := range pairs {
		if p.Completion == nil || p.Completion.Type != history.OK || !bytes.Equal(p.Completion.Value, p.Invoke.Value) {
			res.Lost = append(res.Lost, p.Invoke.Index)
		}
	}
	return workloads.Result{Valid: len(res.Lost) == 0, Details: res}
}

// The one registration line, as it would stand in workloads.go.
func init() { workloadTable = append(workloadTable, workloadEntry{"toy", newToy}) }

// TestAddingAWorkload: the toy runs through the harness against the fake
// node's echo (valid) and against a node that echoes something else (the
// toy's checker finds it invalid), its stored run is judged again by
// analyze, and its own settings check is a bad argument.
func TestAddingAWorkload(t *testing.T) {
	for _, c := range []struct {
		mode string
		exit int
	}{{"echo", 0}, {"wrong-echo", 1}} {
		store := filepath.Join(t.TempDir(), "store")
		code, out := runCLI(t, "test", "-w", "toy", "--bin", fakeNode, "--node-count", "2", "--time-limit", "2",
			"--rate", "50", "--store", store, "--seed", testSeed(t), "--", c.mode)
		if code != c.exit {
			t.Fatalf("%s: exit %d, want %d\n%s", c.mode, code, c.exit, out)
		}
		var res toyResult
		if err := json.Unmarshal(results(t, store)["toy"], &res); err != nil || res.Ops < 20 {
			t.Errorf("%s: results.json toy %+v (%v), want the toy checker's details over its ops", c.mode, res, err)
		}
		if c.exit == 1 && len(res.Lost) != res.Ops {
			t.Errorf("wrong echoes: %d of %d lost, want all", len(res.Lost), res.Ops)
		}
		if code, out := runCLI(t, "analyze", "--store", store); code != c.exit {
			t.Errorf("%s: analyze exit %d, want %d\n%s", c.mode, code, c.exit, out)
		}
	}
	if code, out := runCLI(t, "test", "-w", "toy", "--bin", fakeNode, "--rate", "0"); code != 254 || !strings.Contains(out, "toy workload: --rate must be > 0") {
		t.Errorf("a bad toy setting: exit %d\n%s", code, out)
	}
}
