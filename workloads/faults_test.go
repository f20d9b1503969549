package workloads

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"chunklease/history"
)

func nemesisOp(ms int64, typ, f, value string) history.Op {
	return history.Op{Time: ms * 1e6, Process: history.NemesisProcess, Type: typ, F: f, Value: json.RawMessage(value)}
}

// TestFaults reads partitions, kills and pauses, each written as an
// invoke and a completion, into periods with the nodes affected.
func TestFaults(t *testing.T) {
	h := []history.Op{
		{Time: 0, Process: history.Process{ID: 0}, Type: history.Invoke, F: "check", Node: "n0", Value: json.RawMessage(`{}`)},
		nemesisOp(100, history.Info, StartPartition, `"majority"`),
		nemesisOp(101, history.Info, StartPartition, `["isolated",{"n0":["n2","n3","n4"],"n1":["n2","n3","n4"],"n2":["n0","n1"],"n3":["n0","n1"],"n4":["n0","n1"]}]`),
		nemesisOp(200, history.Info, "kill", `null`),
		nemesisOp(201, history.Info, "kill", `["n3"]`),
		nemesisOp(300, history.Info, StopPartition, `null`),
		nemesisOp(301, history.Info, StopPartition, `"network-healed"`),
		nemesisOp(400, history.Info, "start", `null`),
		nemesisOp(402, history.Info, "start", `{"n3":"started"}`),
		nemesisOp(500, history.Info, "pause", `{"n1":"paused","n4":"paused"}`),
	}
	got := Faults(h)
	want := []Fault{
		{Kind: FaultPartition, StartNs: 100e6, EndNs: 301e6, Nodes: []string{"n0", "n1"}, Detail: "majority: n0 n1 | n2 n3 n4"},
		{Kind: FaultKill, StartNs: 200e6, EndNs: 402e6, Nodes: []string{"n3"}, Detail: "kill n3"},
		{Kind: FaultPause, StartNs: 500e6, EndNs: math.MaxInt64, Nodes: []string{"n1", "n4"}, Detail: "pause n1 n4"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.StartNs != w.StartNs || g.EndNs != w.EndNs || !slices.Equal(g.Nodes, w.Nodes) || g.Detail != w.Detail {
			t.Errorf("fault %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestDescribeGrudge(t *testing.T) {
	tests := []struct {
		name  string
		g     map[string][]string
		shape string
		cut   []string
	}{
		{"one node alone", map[string][]string{"n1": {"n2", "n3"}, "n2": {"n1"}, "n3": {"n1"}}, "n1 | n2 n3", []string{"n1"}},
		{"even split", map[string][]string{"n1": {"n2"}, "n2": {"n1"}}, "n1 | n2", []string{"n1", "n2"}},
		{"empty", map[string][]string{"n1": {}, "n2": {}}, "nobody cut off (an empty grudge)", nil},
		{"ring of three", map[string][]string{"n1": {"n3"}, "n2": {"n1"}, "n3": {"n2"}},
			"n1 drops n3; n2 drops n1; n3 drops n2", []string{"n1", "n2", "n3"}},
	}
	for _, tt := range tests {
		shape, cut := DescribeGrudge(tt.g)
		if shape != tt.shape || !slices.Equal(cut, tt.cut) {
			t.Errorf("%s: got %q cut %v, want %q cut %v", tt.name, shape, cut, tt.shape, tt.cut)
		}
	}
}
