package netns

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPacketFaultValidate(t *testing.T) {
	for _, c := range []struct {
		f         PacketFault
		latencyMs int
		wantErr   string // "" for valid
	}{
		{PacketFault{}, 0, ""},
		{PacketFault{DelayMs: 50, JitterMs: 10, LossPct: 20, DuplicatePct: 5, ReorderPct: 10}, 0, ""},
		{PacketFault{JitterMs: 10}, 0, ""},
		{PacketFault{LossPct: 0.01}, 0, ""},
		{PacketFault{LossPct: 100}, 0, ""},
		{PacketFault{ReorderPct: 10}, 5, ""}, // the latency gives it a delay
		{PacketFault{DelayMs: -1}, 0, "delay_ms -1"},
		{PacketFault{DelayMs: 60_001}, 0, "delay_ms 60001"},
		{PacketFault{JitterMs: -5}, 0, "jitter_ms -5"},
		{PacketFault{LossPct: 101}, 0, "loss_pct 101"},
		{PacketFault{DuplicatePct: -1}, 0, "duplicate_pct -1"},
		{PacketFault{LossPct: 0.005}, 0, "finer than the kernel's step"},
		{PacketFault{ReorderPct: 10}, 0, "reorder_pct 10 needs a delay"},
		{PacketFault{DelayMs: 60_000}, 1, "plus latency"},
	} {
		err := c.f.validate(c.latencyMs)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%+v latency %d: %v", c.f, c.latencyMs, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%+v latency %d: error %v, want one saying %q", c.f, c.latencyMs, err, c.wantErr)
		}
	}
	if err := (PacketFault{ReorderPct: 10}).Validate(); err == nil {
		t.Error("Validate took a reorder with nothing to overtake")
	}
}

func TestPacketFaultString(t *testing.T) {
	for _, c := range []struct {
		f    PacketFault
		want string
	}{
		{PacketFault{}, "none"},
		{PacketFault{DelayMs: 50}, "delay 50ms"},
		{PacketFault{DelayMs: 50, JitterMs: 10, LossPct: 20, DuplicatePct: 5, ReorderPct: 12.5}, "delay 50ms ±10ms, loss 20%, duplicate 5%, reorder 12.5%"},
		{PacketFault{LossPct: 0.01}, "loss 0.01%"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}

// TestPacketFaultJSON: the history's form, every field present (a 0 is a
// setting, not an absence), and back.
func TestPacketFaultJSON(t *testing.T) {
	f := PacketFault{DelayMs: 50, JitterMs: 10, LossPct: 20, DuplicatePct: 5, ReorderPct: 10}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"delay_ms":50,"jitter_ms":10,"loss_pct":20,"duplicate_pct":5,"reorder_pct":10}`; string(b) != want {
		t.Errorf("%s, want %s", b, want)
	}
	var back PacketFault
	if err := json.Unmarshal(b, &back); err != nil || back != f {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	if b, _ := json.Marshal(PacketFault{}); string(b) != `{"delay_ms":0,"jitter_ms":0,"loss_pct":0,"duplicate_pct":0,"reorder_pct":0}` {
		t.Errorf("zero value: %s", b)
	}
}

func TestPermyriad(t *testing.T) {
	for pct, want := range map[float64]uint32{0: 0, 0.01: 1, 0.29: 29, 12.34: 1234, 30: 3000, 100: 10000} {
		if got := permyriad(pct); got != want {
			t.Errorf("permyriad(%g) = %d, want %d", pct, got, want)
		}
	}
}

func TestNamespaceNames(t *testing.T) {
	n := labName{pid: 4242, startTicks: 123456, seq: 7}
	for _, member := range []string{memberSwitch, memberClient, memberNode + "n1", memberNode + "node_2.a-b"} {
		name := n.namespace(member)
		back, m, ok := parseNamespace(name)
		if !ok || back != n || m != member {
			t.Errorf("parse %q: %+v %q %v", name, back, m, ok)
		}
	}
	if got := n.namespace(memberNode + "n1"); got != "chunklease-4242-123456-7-node-n1" {
		t.Errorf("name %q", got)
	}
	for _, other := range []string{"p1", "chunklease", "chunklease-1-2-3", "chunklease-1-2-3-router", "chunklease-x-2-3-switch",
		"chunklease-0-2-3-switch", "chunklease-1-2-3-node-", "xchunklease-1-2-3-switch", "chunklease-1-2-3-node-a/b"} {
		if _, _, ok := parseNamespace(other); ok {
			t.Errorf("parseNamespace(%q) took a name that is not a lab's", other)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	var many []string
	for i := range maxNodes + 1 {
		many = append(many, "n"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	for _, c := range []struct {
		nodes   []string
		wantErr string
	}{
		{[]string{"n1", "n2", "n3"}, ""},
		{many[:maxNodes], ""},
		{nil, "1 to 126 nodes"},
		{many, "1 to 126 nodes"},
		{[]string{"n1", "n1"}, "listed twice"},
		{[]string{"n 1"}, `node id "n 1"`},
		{[]string{""}, `node id ""`},
		{[]string{"../x"}, `node id "../x"`},
	} {
		err := Config{Nodes: c.nodes}.validate()
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%d nodes: %v", len(c.nodes), err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%v: error %v, want one saying %q", c.nodes, err, c.wantErr)
		}
	}
}
