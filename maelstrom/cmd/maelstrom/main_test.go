package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"chunklease/internal/proctest"
	"chunklease/internal/testseed"
)

// testSeed returns this test's seed as a --seed argument (-seed to replay;
// see testseed).
func testSeed(t *testing.T) string {
	t.Helper()
	return strconv.FormatUint(testseed.Get(t), 10)
}

// fakeNode is the harness's scripted node program, fakeClockNode the
// same built with -tags clockfault (it follows its clock file), and cli
// this command, all built once.
var fakeNode, fakeClockNode, cli string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "maelstrom-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fakeNode, fakeClockNode, cli = filepath.Join(dir, "fakenode"), filepath.Join(dir, "fakenode-clockfault"), filepath.Join(dir, "maelstrom")
	const fake = "../../harness/simnet/testdata/fakenode"
	for _, b := range [][]string{{"-o", fakeNode, fake}, {"-tags", "clockfault", "-o", fakeClockNode, fake}, {"-o", cli, "."}} {
		if out, err := exec.Command("go", append([]string{"build"}, b...)...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %v: %v\n%s", b, err, out)
			os.Exit(2)
		}
	}
	code := m.Run()
	if left := append(proctest.Running(fakeNode), proctest.Running(fakeClockNode)...); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "fake nodes still running after the tests: pids %v\n", left)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCLI runs the command line and returns its status and output.
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(context.Background(), args, &out, &out)
	return code, out.String()
}

// results reads store/latest/results.json.
func results(t *testing.T, store string) map[string]json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(store, "latest", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEndToEnd(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		exit     int
		valid    string
		reportOf string // a file the run must have written
	}{
		{"echo valid", []string{"-w", "echo", "--node-count", "2", "--", "echo"}, 0, "true", "latency-raw.png"},
		{"echo wrong", []string{"-w", "echo", "--node-count", "2", "--", "wrong-echo"}, 1, "false", "rate.png"},
		{"lease single node valid", []string{"-w", "lease", "--nodes", "n1", "--lease-ms", "300", "--recovery-time", "0.2", "--", "lease"}, 0, "true", "lease-timeline.html"},
		{"lease split brain invalid", []string{"-w", "lease", "--node-count", "3", "--concurrency", "2n", "--recovery-time", "0.2", "--", "lease"}, 1, "false", "lease-timeline.html"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := filepath.Join(t.TempDir(), "store")
			seed := testSeed(t)
			args := append([]string{"test", "--bin", fakeNode, "--time-limit", "2", "--rate", "100",
				"--latency", "2", "--store", store, "--seed", seed}, c.args...)
			code, out := runCLI(t, args...)
			if code != c.exit {
				t.Fatalf("exit %d, want %d\n%s", code, c.exit, out)
			}
			if !strings.Contains(out, "seed "+seed) || !strings.Contains(out, store+"/latest/") {
				t.Errorf("output lacks the seed or the report path:\n%s", out)
			}
			r := results(t, store)
			if string(r["valid"]) != c.valid || string(r["seed"]) != seed {
				t.Errorf("results.json valid %s seed %s", r["valid"], r["seed"])
			}
			var command []string
			json.Unmarshal(r["command"], &command)
			if len(command) != len(args)+1 || command[0] != "maelstrom" {
				t.Errorf("command %v", command)
			}
			if _, err := os.Stat(filepath.Join(store, "latest", c.reportOf)); err != nil {
				t.Errorf("missing %s: %v", c.reportOf, err)
			}
		})
	}
}

// TestNemesisEndToEnd: partitions on the lease workload with a correct
// single-authority node still validate, and show up in the history.
func TestNemesisEndToEnd(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	code, out := runCLI(t, "test", "-w", "lease", "--bin", fakeNode, "--nodes", "n1", "--time-limit", "2",
		"--rate", "100", "--nemesis", "partition", "--nemesis-interval", "0.3", "--store", store,
		"--recovery-time", "0.2", "--seed", testSeed(t), "--", "lease")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	hist, _ := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
	if !strings.Contains(string(hist), `"process":"nemesis","type":"info","f":"start-partition"`) {
		t.Error("no nemesis op in the history")
	}
	// With real time, the first partition (due at 0) and the first client
	// ops come in the same instant of the loop: each op is stamped as it
	// is written, so the history stays in time order.
	var last int64
	for i, line := range strings.Split(strings.TrimSpace(string(hist)), "\n") {
		var op struct{ Time int64 }
		if err := json.Unmarshal([]byte(line), &op); err != nil || op.Time < last {
			t.Fatalf("history line %d at %d after %d: not in time order (%v)", i, op.Time, last, err)
		}
		last = op.Time
	}
}

// TestClockNemesisEndToEnd: with a node built with -tags clockfault, the
// clock nemesis runs (its ops in the history, its bounds in results.json,
// the nodes' clock files in the run directory); with a normal build, the
// run fails (255) and says how to build the right one.
func TestClockNemesisEndToEnd(t *testing.T) {
	args := func(bin, store string) []string {
		return []string{"test", "-w", "lease", "--bin", bin, "--nodes", "n1", "--time-limit", "3", "--rate", "50",
			"--nemesis", "clock", "--nemesis-interval", "0.2", "--lease-ms", "300", "--recovery-time", "0.6",
			"--store", store, "--seed", testSeed(t), "--", "lease"}
	}
	store := filepath.Join(t.TempDir(), "store")
	code, out := runCLI(t, args(fakeClockNode, store)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	hist, _ := os.ReadFile(filepath.Join(store, "latest", "history.jsonl"))
	for _, f := range []string{"clock-skew", "clock-reset"} {
		if !strings.Contains(string(hist), `"process":"nemesis","type":"info","f":"`+f+`","value":{"n1":{"offset_ms":`) {
			t.Errorf("no %s with n1's offset and rate in the history", f)
		}
	}
	var nem struct {
		Clock map[string]any `json:"clock"`
	}
	_ = json.Unmarshal(results(t, store)["nemesis"], &nem)
	if nem.Clock["within_bound"] != true || nem.Clock["max_offset_ms"] != 75.0 || nem.Clock["drift_ppm"] != 1000.0 || nem.Clock["node_drift_ppm"] != 1000.0 {
		t.Errorf("results.json nemesis.clock %v, want 1000 ppm and 75 ms (300 ms leases), within the bound", nem.Clock)
	}
	if _, err := os.Stat(filepath.Join(store, "latest", "clock", "n1.json")); err != nil {
		t.Error(err)
	}
	code, out = runCLI(t, args(fakeNode, filepath.Join(t.TempDir(), "store"))...)
	if code != 255 || !strings.Contains(out, "go build -tags clockfault -o bin/lease-node-clockfault .") {
		t.Errorf("a normal build under the clock nemesis: exit %d, want 255 saying how to build a clockfault node\n%s", code, out)
	}
}

// TestBadArguments: every bad argument exits 254 before anything runs,
// with Maelstrom's words where Maelstrom has them.
func TestBadArguments(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, `unknown command "serve"`},
		{[]string{"test"}, "Expected a --bin PATH_TO_BINARY to test"},
		{[]string{"test", "--bin", fakeNode, "--bogus"}, `Unknown option: "--bogus"`},
		{[]string{"test", "--bin", fakeNode, "-x"}, `Unknown option: "-x"`},
		{[]string{"test", "--bin", "/nonexistent/node"}, "--bin /nonexistent/node: no such file"},
		{[]string{"test", "--bin", fakeNode, "-w", "lin-kv"}, `Failed to validate "--workload lin-kv": Must be one of echo, lease`},
		{[]string{"test", "--bin", fakeNode, "--nodes", "n1,c2"}, `node id "c2" starts with 'c'`},
		{[]string{"test", "--bin", fakeNode, "--nodes", "n1, n1"}, `node id "n1" given twice`},
		{[]string{"test", "--bin", fakeNode, "--node-count", "0"}, `Failed to validate "--node-count 0": Must be positive`},
		{[]string{"test", "--bin", fakeNode, "--node-count", "-2"}, `Failed to validate "--node-count -2": Must be positive`},
		{[]string{"test", "--bin", fakeNode, "--time-limit", "2.5"}, `Error while parsing option "--time-limit 2.5"`},
		{[]string{"test", "--bin", fakeNode, "--time-limit", "0"}, `Failed to validate "--time-limit 0": Must be positive`},
		{[]string{"test", "--bin", fakeNode, "--latency", "1.5"}, `Error while parsing option "--latency 1.5"`},
		{[]string{"test", "--bin", fakeNode, "--latency-dist", "exponential"}, "needs --latency > 0"},
		{[]string{"test", "--bin", fakeNode, "--latency-dist", "normal", "--latency", "5"}, "unknown latency distribution"},
		{[]string{"test", "--bin", fakeNode, "--nemesis", "clock,netem"}, `Failed to validate "--nemesis clock,netem": unknown fault "netem": must be a comma-separated list of partition, kill, pause, clock, packet`},
		{[]string{"test", "--bin", fakeNode, "--clock-drift-ppm", "5000"}, "--clock-drift-ppm bounds the clock nemesis: it needs clock in --nemesis"},
		{[]string{"test", "--bin", fakeNode, "--nemesis", "clock", "--clock-max-offset-ms", "-5"}, "--clock-max-offset-ms must be in 0.."},
		{[]string{"test", "--bin", fakeNode, "--nemesis", "clock", "--clock-drift-ppm", "1e6"}, `Error while parsing option "--clock-drift-ppm 1e6": not a whole number`},
		{[]string{"test", "--bin", fakeNode, "--nemesis-interval", "0"}, `Failed to validate "--nemesis-interval 0"`},
		{[]string{"test", "--bin", fakeNode, "--recovery-time", "-1"}, `Failed to validate "--recovery-time -1"`},
		{[]string{"test", "--bin", fakeNode, "--init-timeout", "0"}, `Failed to validate "--init-timeout 0": Must be a number of seconds above 0`},
		{[]string{"test", "--bin", fakeNode, "--init-timeout", "1e9"}, `Failed to validate "--init-timeout 1e+09"`},
		{[]string{"test", "--bin", fakeNode, "--concurrency", "0"}, `Failed to validate "--concurrency 0"`},
		{[]string{"test", "--bin", fakeNode, "--availability", "2"}, `Failed to validate "--availability 2"`},
		{[]string{"test", "--bin", fakeNode, "--rate", "-1"}, `Failed to validate "--rate -1"`},
		{[]string{"test", "--bin", fakeNode, "--test-count", "0"}, `Failed to validate "--test-count 0"`},
		{[]string{"test", "--bin", fakeNode, "--servers", "0"}, "--servers, --chunks and --lease-ms must be >= 1"},
		{[]string{"test", "--bin", fakeNode, "-w", "master", "--lease-ms", "0"}, "--lease-ms must be >= 1 (got 0)"},
		{[]string{"test", "--bin", fakeNode, "--nodes-file", "/nonexistent/nodes"}, "--nodes-file: open /nonexistent/nodes"},
		{[]string{"test", "--bin", fakeNode, "--network", "docker"}, `Failed to validate "--network docker": Must be sim or netns`},
		{[]string{"test", "--bin", fakeNode, "--network", "netns", "-w", "echo"}, "whose HTTP API has no echo"},
		{[]string{"test", "--bin", fakeNode, "--network", "netns", "--latency", "5", "--latency-dist", "uniform"}, "latency is a constant delay"},
		{[]string{"test", "--bin", fakeNode, "--network", "netns", "--log-net-recv"}, "--log-net-send and --log-net-recv need --network sim"},
	}
	for _, c := range cases {
		code, out := runCLI(t, append(c.args, "--store", store)...)
		if code != 254 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want exit 254 and %q", c.args, code, out, c.want)
		}
	}
	if _, err := os.Stat(store); err == nil {
		t.Error("a run with bad arguments created the store")
	}
}

func TestNodeIDsAndConcurrency(t *testing.T) {
	cases := []struct {
		args        []string
		nodes       string
		concurrency int
	}{
		{nil, "n1,n2,n3,n4,n5", 5},
		{[]string{"--node-count", "3"}, "n0,n1,n2", 3},
		{[]string{"--node-count", "3", "--nodes", "a,b"}, "n0,n1,n2", 3},
		{[]string{"--nodes", "a,b", "--concurrency", "3n"}, "a,b", 6},
		{[]string{"-n", "x", "--node", "y", "--concurrency", "7"}, "x,y", 7},
		{[]string{"--nodes", "n1, n2 ,n3"}, "n1,n2,n3", 3},
	}
	for _, c := range cases {
		f, err := parseTest(append([]string{"--bin", fakeNode}, c.args...))
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		o, _ := f.options()
		if got := strings.Join(o.Nodes, ","); got != c.nodes || o.Concurrency != c.concurrency {
			t.Errorf("%v: nodes %s concurrency %d, want %s %d", c.args, got, o.Concurrency, c.nodes, c.concurrency)
		}
	}
}

func TestDefaultsAreMaelstroms(t *testing.T) {
	f, err := parseTest([]string{"--bin", fakeNode, "--seed", "9", "--", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	o, _ := f.options()
	c := f.simConfig()
	if o.TimeLimit != 60*time.Second || c.Latency.MeanMs != 0 || c.Latency.Dist != "constant" || o.Faults.Any() ||
		o.NemesisInterval != 10*time.Second || !c.Strict || c.LogStderr || o.Seed != 9 || o.StoreDir != "store" ||
		o.Workload.Name() != "lease" || o.AvailabilityMin != nil || c.InitTimeout != 10*time.Second {
		t.Errorf("defaults %+v", o)
	}
	if f.Rate != 5 || f.LeaseMs != 1000 || strings.Join(f.Args, " ") != "a b" || f.TestCount != 1 ||
		o.RecoveryTime != 0 || o.KillWithoutBootWait || c.LogNetSend || c.LogNetRecv || o.Network.Name() != "sim" {
		t.Errorf("rate %v lease-ms %d args %v test-count %d, options %+v", f.Rate, f.LeaseMs, f.Args, f.TestCount, o)
	}
}

// TestInitTimeoutReachesBothNetworks: --init-timeout (seconds, a
// fraction allowed) is how long a node has to answer init on the
// simulated network and to become ready on the real one.
func TestInitTimeoutReachesBothNetworks(t *testing.T) {
	f, err := parseTest([]string{"--bin", fakeNode, "--init-timeout", "2.5"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.simConfig().InitTimeout; got != 2500*time.Millisecond {
		t.Errorf("sim init timeout %v, want 2.5s", got)
	}
	if got, _ := f.initTimeout(); got != 2500*time.Millisecond {
		t.Errorf("init timeout %v, want 2.5s (the real network's ReadyTimeout)", got)
	}
}

// TestFlagsAnywhere: as with Maelstrom's parser, options may follow
// positional words, which go to the node program; after --, everything
// is positional.
func TestFlagsAnywhere(t *testing.T) {
	f, err := parseTest([]string{"--bin", fakeNode, "extra", "-w", "echo", "--time-limit", "3", "more", "--", "--rate", "7"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Workload != "echo" || f.TimeLimitS != 3 || f.Rate != 5 || strings.Join(f.Args, " ") != "extra more --rate 7" {
		t.Errorf("workload %q time-limit %d rate %v args %q", f.Workload, f.TimeLimitS, f.Rate, f.Args)
	}
}

// TestAnalyzeAgain: analyze judges a stored run again and reaches the run's
// own verdict, checker details and figures; what it cannot find is a bad
// argument.
func TestAnalyzeAgain(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		exit int
	}{
		{"valid", []string{"-w", "lease", "--nodes", "n1", "--lease-ms", "300", "--recovery-time", "0.2", "--", "lease"}, 0},
		{"invalid", []string{"-w", "lease", "--node-count", "3", "--concurrency", "2n", "--recovery-time", "0.2", "--", "lease"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "store")
			args := append([]string{"test", "--bin", fakeNode, "--time-limit", "2", "--rate", "100",
				"--latency", "2", "--store", store, "--seed", testSeed(t)}, c.args...)
			if code, out := runCLI(t, args...); code != c.exit {
				t.Fatalf("test exit %d, want %d\n%s", code, c.exit, out)
			}
			before := results(t, store)
			code, out := runCLI(t, "analyze", "--store", store)
			if code != c.exit {
				t.Fatalf("analyze exit %d, want %d\n%s", code, c.exit, out)
			}
			after := results(t, store)
			for _, k := range []string{"valid", "exit_code", "lease", "checks", "stats", "availability", "workload_stats", "nemesis", "final", "net", "seed", "command", "config", "started"} {
				if string(before[k]) != string(after[k]) {
					t.Errorf("results.json %q changed:\n  run:     %s\n  analyze: %s", k, before[k], after[k])
				}
			}
		})
	}
	for _, bad := range [][]string{{"analyze", "--store", t.TempDir()}, {"analyze", "a", "b"}, {"analyze", "--bogus"}} {
		if code, out := runCLI(t, bad...); code != 254 {
			t.Errorf("%v: exit %d, want 254\n%s", bad, code, out)
		}
	}
	if code, out := runCLI(t, "analyze", "--help"); code != 0 || !strings.Contains(out, "Usage: maelstrom analyze") {
		t.Errorf("analyze --help: exit %d\n%s", code, out)
	}
}
