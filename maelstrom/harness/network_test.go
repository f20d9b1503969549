package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/maelstrom/nemesis"
	"chunklease/report"
	"chunklease/workloads/echo"
)

// memNetwork is a second Network, in memory: nodes are a reply function,
// faults are remembered, and it counts no messages and keeps no journal,
// as a real network would not. It shows that the runner, the nemesis,
// the history, the final phase and the analysis need nothing more from a
// network than the seam.
type memNetwork struct {
	supports []nemesis.Fault
	// logLine, when set, is what node id logs at start given its extra
	// environment (Host.NodeEnv's): written to its node log, as a real
	// network's node would.
	logLine func(id string, env []string) string
	mu      sync.Mutex
	host    Host
	applied []Fault
	down    []string
	stopped bool
}

func (m *memNetwork) Name() string                  { return "mem" }
func (m *memNetwork) Supports(f nemesis.Fault) bool { return slices.Contains(m.supports, f) }
func (m *memNetwork) OpenClient() Client            { return memClient{m} }
func (m *memNetwork) Observed() Observed            { return Observed{} }

// Start writes each node's log line, if any.
func (m *memNetwork) Start(_ context.Context, h Host) error {
	m.host = h
	if m.logLine == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(h.Dir, "node-logs"), 0o755); err != nil {
		return err
	}
	for _, id := range h.Nodes {
		var env []string
		if h.NodeEnv != nil {
			env = h.NodeEnv(id)
		}
		if err := os.WriteFile(filepath.Join(h.Dir, "node-logs", id+".log"), []byte(m.logLine(id, env)+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (m *memNetwork) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
}

// Apply acts on every node it is given; a start brings the killed nodes
// back after a second of (virtual) boot time.
func (m *memNetwork) Apply(_ context.Context, f Fault) (Applied, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applied = append(m.applied, f)
	switch f.F {
	case nemesis.KillOp:
		m.down = append(m.down, f.Nodes...)
		return Applied{Nodes: f.Nodes}, nil
	case nemesis.StartOp:
		back := m.down
		m.down = nil
		if len(back) == 0 {
			return Applied{}, nil
		}
		done := make(chan error, 1)
		time.AfterFunc(time.Second, func() { done <- nil })
		return Applied{Nodes: back, Done: done}, nil
	case nemesis.StartPacket:
		return Applied{Value: map[string]any{"applied": f.Settings}}, nil
	}
	return Applied{}, nil
}

type memClient struct{ m *memNetwork }

func (c memClient) Close() {}

// Call echoes, unless the node is down (then the request times out).
func (c memClient) Call(ctx context.Context, node string, req json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	c.m.mu.Lock()
	down := slices.Contains(c.m.down, node)
	c.m.mu.Unlock()
	if down {
		select {
		case <-time.After(timeout):
			return nil, ErrTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var body struct {
		Echo json.RawMessage `json:"echo"`
	}
	_ = json.Unmarshal(req, &body)
	return json.RawMessage(`{"type":"echo_ok","echo":` + string(body.Echo) + `,"in_reply_to":1}`), nil
}

func memOptions(t *testing.T, net Network, faults nemesis.Faults) Options {
	seed := testseed.Get(t)
	var out bytes.Buffer
	return Options{Workload: echo.NewEcho(echo.EchoOptions{Rate: 20}, WorkloadSeed(seed)), Nodes: []string{"n1", "n2", "n3"},
		Network: net, TimeLimit: 10 * time.Second, Concurrency: 3, Faults: faults, NemesisInterval: time.Second,
		Seed: seed, StoreDir: filepath.Join(t.TempDir(), "store"), Stdout: &out, Stderr: &out}
}

// TestAnotherNetworkPlugsIn: the runner drives a network it has never
// seen: partitions and kills go to it as grudges and picked nodes, a
// start completes when the network says so, every action is in the
// history, and results.json and the report do without message counts
// and a message diagram.
func TestAnotherNetworkPlugsIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := &memNetwork{supports: []nemesis.Fault{nemesis.Partition, nemesis.Kill}}
		out := Run(context.Background(), memOptions(t, net, nemesis.Faults{Partition: true, Kill: true}))
		if out.Exit != ExitInvalid { // echoes to killed nodes time out: the echo checker is strict
			t.Fatalf("exit %d (%v), want invalid", out.Exit, out.Err)
		}
		if !net.stopped || len(net.host.Nodes) != 3 || net.host.Fail == nil {
			t.Errorf("stopped %v, host %+v", net.stopped, net.host)
		}
		raw, err := os.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		ops, err := history.ReadHistory(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var nemesisOps []string
		for _, op := range ops {
			if op.Process.Nemesis {
				nemesisOps = append(nemesisOps, op.F)
			}
		}
		var applied []string
		for _, f := range net.applied {
			applied = append(applied, f.F, f.F)                      // each written as an invoke and a completion
			if f.F == nemesis.StartPartition && len(f.Grudge) != 3 { // every node drops some other
				t.Errorf("a partition without its grudge: %+v", f)
			}
		}
		if len(applied) < 6 || !slices.Equal(nemesisOps, applied) {
			t.Errorf("history's nemesis ops %v, network's actions %v", nemesisOps, applied)
		}
		res, err := os.ReadFile(filepath.Join(out.Dir, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Net     map[string]json.RawMessage `json:"net"`
			Stats   map[string]json.RawMessage `json:"workload_stats"`
			Reports []string                   `json:"reports"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.Net["all"]; ok || r.Stats["messages_per_op"] != nil || slices.Contains(r.Reports, report.MessagesFile) {
			t.Errorf("message figures from a network that counts none: net %v, stats %v, reports %v", r.Net, r.Stats, r.Reports)
		}
	})
}

// TestUnsupportedFaultIsABadArgument: a network that cannot apply a
// fault refuses it before anything starts.
func TestUnsupportedFaultIsABadArgument(t *testing.T) {
	net := &memNetwork{supports: []nemesis.Fault{nemesis.Partition}}
	out := Run(context.Background(), memOptions(t, net, nemesis.Faults{Partition: true, Pause: true}))
	if out.Exit != ExitBadArgs || out.Err == nil || !strings.Contains(out.Err.Error(), "the mem network cannot apply pause faults") {
		t.Fatalf("exit %d (%v), want 254 naming the fault", out.Exit, out.Err)
	}
}

// TestFaultSettingsReachTheNetwork: a fault the schedule draws settings
// for (the packet fault) goes to the network with them and the nodes the
// runner picked, and the history records the settings with the node
// specification, then what the network applied.
func TestFaultSettingsReachTheNetwork(t *testing.T) {
	net := &memNetwork{}
	var buf bytes.Buffer
	r := &runner{o: Options{Nodes: []string{"n1"}}, net: net, hist: history.NewWriter(&buf), start: time.Now()}
	r.failure.ch = make(chan struct{})
	r.nemesis.ctx = context.Background()
	drawn := nemesis.PacketSettings{LinkFault: nemesis.LinkFault{DelayMs: 50, LossPct: 10}}
	r.perform(nemesis.Op{F: nemesis.StartPacket, Nodes: nemesis.SpecAll, Settings: drawn})
	if err := r.failure.get(); err != nil {
		t.Fatal(err)
	}
	settings := drawn
	settings.Nodes = []string{"n1"} // the runner picks them with the spec
	if len(net.applied) != 1 || !reflect.DeepEqual(net.applied[0].Settings, settings) || !slices.Equal(net.applied[0].Nodes, settings.Nodes) {
		t.Fatalf("the network got %+v", net.applied)
	}
	ops, err := history.ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"nodes":"all","delay_ms":50,"jitter_ms":0,"loss_pct":10,"duplicate_pct":0,"reorder_pct":0}`,
		`{"applied":{"nodes":["n1"],"delay_ms":50,"jitter_ms":0,"loss_pct":10,"duplicate_pct":0,"reorder_pct":0}}`}
	if len(ops) != 2 || ops[0].F != nemesis.StartPacket || string(ops[0].Value) != want[0] || string(ops[1].Value) != want[1] {
		t.Errorf("history %+v", ops)
	}
}
