package echo

import (
	"encoding/json"
	"testing"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

// TestEchoAnalysisMatchesCheckEcho: the same for echo, with broken echoes
// and a completion without an invoke.
func TestEchoAnalysisMatchesCheckEcho(t *testing.T) {
	ok := `{"type":"echo_ok","echo":$,"msg_id":1,"in_reply_to":1}`
	ops := echoHistory(ok, `{"type":"echo_ok","echo":"Please echo 99","in_reply_to":1}`, ok, history.Info, ok, "")
	ops = append(ops, history.Op{Index: len(ops), Time: ops[len(ops)-1].Time + 1, Process: history.Process{ID: 77}, Type: history.OK, F: "echo", Value: json.RawMessage(`{"echo":"x"}`)})
	got := workloadtest.Analyze(t, NewEcho(EchoOptions{}, 1), ops, t.TempDir(), 5)
	if g, w := workloadtest.JSONOf(t, got.Result.Details), workloadtest.JSONOf(t, CheckEcho(ops)); g != w {
		t.Errorf("result:\n%s\nwant:\n%s", g, w)
	}
	if g, w := workloadtest.JSONOf(t, got.Stats), workloadtest.JSONOf(t, workloads.ComputeStats(ops, 5)); g != w {
		t.Errorf("statistics:\n%s\nwant:\n%s", g, w)
	}
}
