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

// TestPacketFaults: a packet fault is a fault period on the nodes its
// completion names, with its settings in the detail; it counts in the
// fault intervals, and a stop-packet that restored links is a heal.
func TestPacketFaults(t *testing.T) {
	h := []history.Op{
		{Time: 0, Process: history.Process{ID: 0}, Type: history.Invoke, F: "check", Node: "n1", Value: json.RawMessage(`{}`)},
		{Time: 0, Process: history.Process{ID: 1}, Type: history.Invoke, F: "check", Node: "n2", Value: json.RawMessage(`{}`)},
		nemesisOp(100, history.Info, StartPacket, `{"nodes":"minority","delay_ms":50,"jitter_ms":10,"loss_pct":20,"duplicate_pct":0,"reorder_pct":0}`),
		nemesisOp(101, history.Info, StartPacket, `{"nodes":["n1","n2"],"delay_ms":50,"jitter_ms":10,"loss_pct":20,"duplicate_pct":0,"reorder_pct":0}`),
		nemesisOp(300, history.Info, StopPacket, `"all"`),
		nemesisOp(301, history.Info, StopPacket, `["n1","n2"]`),
		nemesisOp(400, history.Info, StartPacket, `{"nodes":null,"delay_ms":0,"jitter_ms":0,"loss_pct":0,"duplicate_pct":5,"reorder_pct":0}`),
		nemesisOp(401, history.Info, StartPacket, `{"nodes":[],"delay_ms":0,"jitter_ms":0,"loss_pct":0,"duplicate_pct":5,"reorder_pct":0}`),
		nemesisOp(500, history.Info, StopPacket, `"all"`),
		nemesisOp(501, history.Info, StopPacket, `[]`),
	}
	got := Faults(h)
	if len(got) != 2 || got[1].Detail != "packet: duplicate 5%" || got[0].Kind != FaultPacket || got[0].StartNs != 100e6 || got[0].EndNs != 301e6 ||
		!slices.Equal(got[0].Nodes, []string{"n1", "n2"}) || got[0].Detail != "packet n1 n2: delay 50ms ±10ms, loss 20%" {
		t.Errorf("faults %+v", got)
	}
	if iv := FaultIntervals(h); len(iv) != 1 || iv[0] != (Interval{101e6, 301e6}) {
		t.Errorf("fault intervals %+v, want the first packet fault only (the second hit no node)", iv)
	}
	if heals := Heals(h); len(heals) != 1 || heals[0] != (Heal{StopPacket, 301e6}) {
		t.Errorf("heals %+v, want the first stop-packet", heals)
	}
}
