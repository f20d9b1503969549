package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"chunklease/history"
	"chunklease/workloads/lease"
)

// histBuilder builds a history of sequential ops on process 0, each
// invoked 1 ms after the previous one completed.
type histBuilder struct {
	ops  []history.Op
	now  int64 // ns
	next int64 // token
}

// op adds f on chunk ch by server taking latencyMs; ok=false completes it
// fail. A grant names primary.
func (h *histBuilder) op(f, ch, server, primary string, latencyMs float64, ok bool) {
	inv := fmt.Sprintf(`{"chunk":%q,"server":%q,"lease_ms":60000}`, ch, server)
	if f == lease.FCheck {
		inv = fmt.Sprintf(`{"chunk":%q}`, ch)
	}
	h.next++
	done := map[string]string{
		lease.FGrant: fmt.Sprintf(`{"chunk":%q,"server":%q,"lease_ms":60000,"primary":%q,"expires_in_ms":59000,"token":%d}`, ch, server, primary, h.next),
		lease.FRenew: fmt.Sprintf(`{"chunk":%q,"server":%q,"lease_ms":60000,"new_expires_in_ms":59000,"token":%d}`, ch, server, h.next),
		lease.FCheck: fmt.Sprintf(`{"chunk":%q,"primary":%q,"remaining_ms":100,"expired":false}`, ch, primary),
	}[f]
	typ := history.OK
	if !ok {
		typ, done = history.Fail, inv
	}
	h.now += 1e6
	h.ops = append(h.ops, history.Op{Time: h.now, Type: history.Invoke, F: f, Value: []byte(inv)})
	h.now += int64(latencyMs * 1e6)
	h.ops = append(h.ops, history.Op{Time: h.now, Type: typ, F: f, Value: []byte(done)})
}

// writeRun writes a run directory with the history and a results.json.
func writeRun(t *testing.T, h *histBuilder, results string) string {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	w := history.NewWriter(&b)
	for _, op := range h.ops {
		if _, err := w.Append(op); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string][]byte{"history.jsonl": b.Bytes(), "results.json": []byte(results)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const leaseResults = `{"valid":true,"workload":"lease","config":{"latency_ms":10,"node_count":3}}`

// lightRun: each chunk is granted once (40+extra ms), then renewed and
// checked (20+extra ms each), 25 times.
func lightRun(t *testing.T, extraMs float64) string {
	h := &histBuilder{}
	for i := range 25 {
		ch := fmt.Sprintf("ch_%d", i)
		h.op(lease.FGrant, ch, "cs1", "cs1", 40+extraMs, true)
		h.op(lease.FRenew, ch, "cs1", "", 20+extraMs, true)
		h.op(lease.FCheck, ch, "", "cs1", 20+extraMs, true)
	}
	return writeRun(t, h, leaseResults)
}

// contentionRun: 25 grants, the last one slow, and 40 renews of which
// failures fail.
func contentionRun(t *testing.T, failures int, slowGrantMs float64) string {
	h := &histBuilder{}
	for i := range 25 {
		ch := fmt.Sprintf("ch_%d", i)
		h.op(lease.FGrant, ch, "cs1", "cs1", map[bool]float64{true: slowGrantMs, false: 40}[i == 24], true)
	}
	for i := range 40 {
		h.op(lease.FRenew, fmt.Sprintf("ch_%d", i%25), "cs1", "", 20, i >= failures)
	}
	return writeRun(t, h, leaseResults)
}

func TestFloorVerdicts(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"floor", lightRun(t, 1), contentionRun(t, 1, 100)}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| won grant p50, 3 nodes, 10 ms latency, light load | 41.0 ms | 40 ms | 1.025 | <= 1.10 | PASS |",
		"| renew p50, 3 nodes, 10 ms latency, light load | 21.0 ms | 20 ms | 1.050 | <= 1.10 | PASS |",
		"| renew success, 3 nodes, contention | 97.5 % (39/40) | - | - | >= 95 % | PASS |",
		"| won grant p99 in that run | 100.0 ms (p50 40.0 ms) | - | 2.50 x p50 | <= 4 x p50 | PASS |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A missed goal is a FAIL row, not an error: the script exits 0.
func TestFloorMissedGoalsAreRowsNotErrors(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"floor", lightRun(t, 5), contentionRun(t, 4, 400)}, &out); err != nil {
		t.Fatalf("missed goals made an error: %v", err)
	}
	if got := strings.Count(out.String(), "| FAIL |"); got != 5 {
		t.Errorf("%d FAIL rows, want 5:\n%s", got, out.String())
	}
}

func TestInvalidRunIsAnError(t *testing.T) {
	dir := writeRun(t, &histBuilder{}, `{"valid":false,"workload":"lease"}`)
	if err := run([]string{"floor", dir, dir}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "not valid") {
		t.Fatalf("an invalid run gave %v, want an error saying so", err)
	}
}

func TestTableNeedsEveryMeasuredOp(t *testing.T) {
	h := &histBuilder{}
	for i := range 3 {
		h.op(lease.FGrant, fmt.Sprintf("ch_%d", i), "cs1", "cs1", 1, true)
	}
	results := `{"valid":true,"workload":"lease-bench","workload_stats":{"op":"grant","ops":%d,"workers":1}}`
	var out bytes.Buffer
	if err := run([]string{"table", writeRun(t, h, fmt.Sprintf(results, 3))}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| grant | 1 | grant | 3 / 3 |") {
		t.Errorf("table:\n%s", out.String())
	}
	if err := run([]string{"table", writeRun(t, h, fmt.Sprintf(results, 4))}, &bytes.Buffer{}); err == nil {
		t.Error("a run that measured 3 of 4 ops was accepted")
	}
}
