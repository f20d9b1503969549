package realnet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"chunklease/internal/proctest"
	"chunklease/internal/testseed"
	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netns"
	"chunklease/workloads"
	"chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// The tests below build a real lab: they need root, and skip naming it
// otherwise (scripts/run_tests.sh has a step that fails without root).
// Each builds the node (and, for the signal tests, the CLI) once.

var builds struct {
	once      sync.Once
	dir       string
	node, cli string
	err       error
}

// binaries builds lease-node and maelstrom into a temporary directory,
// once per test binary.
func binaries(t *testing.T) (node, cli string) {
	t.Helper()
	if err := netns.Check(); err != nil {
		t.Skipf("needs root to build network namespaces (%v)", err)
	}
	builds.once.Do(func() {
		if builds.dir, builds.err = os.MkdirTemp("", "realnet-test-"); builds.err != nil {
			return
		}
		builds.node, builds.cli = filepath.Join(builds.dir, "lease-node"), filepath.Join(builds.dir, "maelstrom")
		for _, b := range [][2]string{{builds.node, "chunklease"}, {builds.cli, "chunklease/maelstrom/cmd/maelstrom"}} {
			if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
				builds.err = fmt.Errorf("building %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if builds.err != nil {
		t.Fatal(builds.err)
	}
	return builds.node, builds.cli
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// rootState is what the root namespace shows: nftables rules and qdiscs
// (a lab never touches them), and the namespaces of a lab prefix.
type rootState struct{ nft, tc string }

func viewRoot(t *testing.T) rootState {
	t.Helper()
	var s rootState
	for _, c := range []struct {
		out  *string
		args []string
	}{{&s.nft, []string{"nft", "list", "ruleset"}}, {&s.tc, []string{"tc", "qdisc"}}} {
		out, err := exec.Command(c.args[0], c.args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s (scripts/setup_netns.sh installs nft and tc)", c.args, err, out)
		}
		*c.out = string(out)
	}
	return s
}

// assertNothingLeft fails if a namespace named with prefix exists, a
// process runs bin, or the root namespace's rules or qdiscs changed.
func assertNothingLeft(t *testing.T, before rootState, prefix, bin string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), prefix) {
		t.Errorf("namespaces of the run are left (%s):\n%s", prefix, out)
	}
	if left := proctest.Running(bin); len(left) > 0 {
		t.Errorf("node programs still running: pids %v", left)
	}
	if now := viewRoot(t); now != before {
		t.Errorf("the root namespace changed:\nnft before:\n%s\nnft now:\n%s\ntc before:\n%s\ntc now:\n%s", before.nft, now.nft, before.tc, now.tc)
	}
}

// leaseRun is a lease run of seconds on nodes with faults, on the real
// network running bin. Five workers a node: a request to a killed or
// paused node holds its worker up to the 5 s client timeout, and every
// f must complete ok some time (the stats checker). Its seed is 3 unless
// -seed says otherwise: the tests assert that every fault they ask for
// was applied, and in a run of a few seconds a random schedule may draw
// none of one kind (a seed drew no completed kill in 8 s); seed 3 applies
// every kind in each of them.
func leaseRun(t *testing.T, bin string, nodes int, seconds int, faults nemesis.Faults) (harness.Options, *bytes.Buffer) {
	t.Helper()
	seed := testseed.GetOr(t, 3)
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i)
	}
	wl, err := lease.FromParams(workloads.Params{Rate: 40, Workers: 5 * nodes, Seed: harness.WorkloadSeed(seed), LeaseMs: 1000, Servers: 3, Chunks: 3})
	if err != nil {
		t.Fatal(err)
	}
	network, err := New(Config{Bin: bin, ReadyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	return harness.Options{Workload: wl, Nodes: ids, Network: network, TimeLimit: time.Duration(seconds) * time.Second,
		Concurrency: 5 * nodes, Faults: faults, NemesisInterval: time.Second, Seed: seed,
		StoreDir: filepath.Join(t.TempDir(), "store"), Stdout: &out, Stderr: &out}, &out
}

// observedLab is the lab name a run's results.json records.
func observedLab(t *testing.T, res any) string {
	t.Helper()
	raw, _ := json.Marshal(res)
	var r struct {
		Network  string `json:"network"`
		Observed struct {
			Lab   string                     `json:"lab"`
			Nodes map[string]json.RawMessage `json:"nodes"`
		} `json:"network_observed"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Network != "netns" || r.Observed.Lab == "" {
		t.Fatalf("results.json names network %q, lab %q (%v): want netns and the lab", r.Network, r.Observed.Lab, err)
	}
	return r.Observed.Lab
}

// TestShortRunUnderEveryFault: 3 nodes, 8 s, partitions, kills, pauses
// and packet faults by the kernel, a fault a second: the lease checker
// finds the history valid, every fault was applied, the final reads
// succeed, results.json names the network and what it observed, and
// nothing of the run is left. So many faults in 8 s may leave no time in
// which some f could complete ok (about 1 seed in 5, on the simulated
// network too): then only Jepsen's stats checker objects, which is
// logged, not failed (scripts/netns_checks.sh requires exit 0 of a 20 s
// run).
func TestShortRunUnderEveryFault(t *testing.T) {
	node, _ := binaries(t)
	before := viewRoot(t)
	o, console := leaseRun(t, node, 3, 8, nemesis.Faults{Partition: true, Kill: true, Pause: true, Packet: true})
	out := harness.Run(context.Background(), o)
	res := out.Results
	switch {
	case out.Exit == harness.ExitInvalid && res != nil && res.Checks.Workload != nil && *res.Checks.Workload && !res.Checks.Stats:
		t.Logf("valid for the lease checker; the stats checker found %s", res.FailedChecks())
	case out.Exit != harness.ExitValid:
		t.Fatalf("exit %d (%v), want valid\n%s", out.Exit, out.Err, console)
	}
	n := out.Results.Nemesis
	for _, f := range []string{nemesis.StartPartition, nemesis.KillOp, nemesis.StartOp, nemesis.PauseOp, nemesis.StartPacket, nemesis.StopPacket} {
		if n.Ops[f] == 0 {
			t.Errorf("no completed %s in the history: %v", f, n.Ops)
		}
	}
	if out.Results.Stats.OKCount == 0 || out.Results.Final.OK == 0 {
		t.Errorf("%d ok ops, %d ok final reads", out.Results.Stats.OKCount, out.Results.Final.OK)
	}
	for _, name := range []string{"node-logs/n0.log", "certs/ca.crt", "index.html", "lease-timeline.html"} {
		if _, err := os.Stat(filepath.Join(out.Dir, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	assertNothingLeft(t, before, observedLab(t, out.Results), node)
}

// TestMasterRunUnderFaults: the master workload through the same HTTP
// clients (master_start, master_stop, master_status are endpoints too),
// under partitions and packet faults (kills are the lease run's: a kill
// each second leaves no majority long enough to elect): valid, with a
// master some of the time, and nothing left.
func TestMasterRunUnderFaults(t *testing.T) {
	node, _ := binaries(t)
	before := viewRoot(t)
	o, console := leaseRun(t, node, 3, 8, nemesis.Faults{Partition: true, Packet: true})
	wl, err := master.FromParams(workloads.Params{Rate: 40, Workers: o.Concurrency, Seed: harness.WorkloadSeed(o.Seed), LeaseMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	o.Workload = wl
	out := harness.Run(context.Background(), o)
	if out.Exit != harness.ExitValid {
		t.Fatalf("exit %d (%v), want valid\n%s", out.Exit, out.Err, console)
	}
	raw, _ := json.Marshal(out.Results.WorkloadStats)
	var st struct {
		Mastership struct {
			Overall struct{ Fraction float64 } `json:"overall"`
		} `json:"mastership"`
	}
	if err := json.Unmarshal(raw, &st); err != nil || st.Mastership.Overall.Fraction == 0 {
		t.Errorf("no master at any time (%v): %s", err, raw)
	}
	assertNothingLeft(t, before, observedLab(t, out.Results), node)
}

// TestNodeNeverReady: a program that runs but never serves fails the run
// at the start (255), naming the node and quoting its log, and leaves
// nothing behind.
func TestNodeNeverReady(t *testing.T) {
	node, _ := binaries(t)
	script := filepath.Join(t.TempDir(), "silent-node")
	body := "#!/bin/sh\necho \"silent node pid $$, args: $*\" >&2\nexec sleep 60\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	before := viewRoot(t)
	o, console := leaseRun(t, node, 3, 5, nemesis.Faults{})
	o.Network, _ = New(Config{Bin: script, ReadyTimeout: 2 * time.Second})
	out := harness.Run(context.Background(), o)
	if out.Exit != harness.ExitFailed || out.Err == nil {
		t.Fatalf("exit %d (%v), want 255\n%s", out.Exit, out.Err, console)
	}
	for _, want := range []string{"did not become ready", "/readyz", "args: serve -id n"} {
		if !strings.Contains(out.Err.Error(), want) {
			t.Errorf("the failure lacks %q:\n%v", want, out.Err)
		}
	}
	assertNothingLeft(t, before, observedLab(t, out.Results), script)
	for _, id := range o.Nodes {
		log, _ := os.ReadFile(filepath.Join(out.Dir, "node-logs", id+".log"))
		var pid int
		if _, err := fmt.Sscanf(string(log), "silent node pid %d", &pid); err != nil {
			t.Fatalf("node-logs/%s.log: %q (%v)", id, log, err)
		}
		if proctest.Alive(pid) {
			t.Errorf("node %s's program %d is still running", id, pid)
		}
	}
}

// cliRun starts the built CLI on the real network with args, in its own
// directory; lines receives its stdout line by line.
func cliRun(t *testing.T, cli, node string, args ...string) (*exec.Cmd, <-chan string, *bytes.Buffer) {
	t.Helper()
	all := append([]string{"test", "-w", "lease", "--bin", node, "--network", "netns", "--node-count", "3",
		"--rate", "40", "--lease-ms", "1000", "--seed", fmt.Sprint(testseed.Get(t))}, args...)
	cmd := exec.Command(cli, all...)
	cmd.Dir = t.TempDir()
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	return cmd, lines, &errOut
}

// waitLine waits (bounded) for a stdout line containing want.
func waitLine(t *testing.T, lines <-chan string, want string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the run ended before printing %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q within %v", want, within)
		}
	}
}

// exitCode waits for the CLI (bounded) and drains its output.
func exitCode(t *testing.T, cmd *exec.Cmd, lines <-chan string) (int, string) {
	t.Helper()
	var rest strings.Builder
	done := make(chan struct{})
	go func() {
		for l := range lines {
			rest.WriteString(l + "\n")
		}
		close(done)
	}()
	timer := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	<-done
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), rest.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, rest.String()
}

// TestSIGINTHalfwayLeavesNothing: Ctrl-C (SIGINT to the harness) in the
// middle of a run under every fault ends it (255, interrupted) and
// leaves no namespace, rule, qdisc or node process.
func TestSIGINTHalfwayLeavesNothing(t *testing.T) {
	node, cli := binaries(t)
	before := viewRoot(t)
	cmd, lines, stderr := cliRun(t, cli, node, "--time-limit", "20", "--nemesis", "partition,kill,pause,packet", "--nemesis-interval", "1")
	dir := filepath.Join(cmd.Dir, runDir(t, lines))
	waitHistory(t, dir, 8*time.Second, []string{`"f":"kill"`, `"f":"start"`, `"f":"start-packet"`, `"f":"start-partition"`, `"type":"ok"`}, 40*time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, rest := exitCode(t, cmd, lines)
	if code != harness.ExitFailed || !strings.Contains(rest, "interrupted") {
		t.Errorf("exit %d, want 255 and the interruption named\n%s\n%s", code, rest, stderr)
	}
	assertNothingLeft(t, before, fmt.Sprintf("chunklease-%d-", cmd.Process.Pid), node)
}

// TestNodeKilledInTheFinalPhase: a node killed from outside while the
// final phase waits for recovery fails the run (255, naming the node),
// and nothing is left.
func TestNodeKilledInTheFinalPhase(t *testing.T) {
	node, cli := binaries(t)
	before := viewRoot(t)
	cmd, lines, stderr := cliRun(t, cli, node, "--time-limit", "3", "--recovery-time", "5")
	waitLine(t, lines, "final ops", 30*time.Second) // the final phase began
	victim := nodePID(t, node, "n1")
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code, rest := exitCode(t, cmd, lines)
	if code != harness.ExitFailed || !strings.Contains(rest, "node n1 exited early") {
		t.Errorf("exit %d, want 255 naming n1\n%s\n%s", code, rest, stderr)
	}
	assertNothingLeft(t, before, fmt.Sprintf("chunklease-%d-", cmd.Process.Pid), node)
}

// nodePID finds the running program of node id (bin serve -id id ...).
func nodePID(t *testing.T, bin, id string) int {
	t.Helper()
	for _, pid := range proctest.Running(bin) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), "\x00-id\x00"+id+"\x00") {
			return pid
		}
	}
	t.Fatalf("no running %s serve -id %s", bin, id)
	return 0
}

// runDir reads the run directory from the CLI's "writing" line.
func runDir(t *testing.T, lines <-chan string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the run ended before naming its directory")
			}
			if dir, found := strings.CutPrefix(l, "maelstrom: writing "); found {
				return dir
			}
		case <-timeout:
			t.Fatal("the run named no directory within 30 s")
		}
	}
}

// waitHistory polls the running CLI's history.jsonl (flushed every 250
// ms), with a deadline, until it holds every one of wants and its last op
// is at least at: the external process is then in the middle of its
// faults.
func waitHistory(t *testing.T, dir string, at time.Duration, wants []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		h, _ := os.ReadFile(filepath.Join(dir, "history.jsonl"))
		missing := fmt.Sprintf("op at %v", at)
		if lines := bytes.Split(bytes.TrimSpace(h), []byte("\n")); len(lines) > 0 {
			var last struct{ Time int64 }
			if json.Unmarshal(lines[len(lines)-1], &last) == nil && time.Duration(last.Time) >= at {
				missing = ""
			}
		}
		for _, w := range wants {
			if !bytes.Contains(h, []byte(w)) {
				missing = w
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("history.jsonl has no %s after %v", missing, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStaleLabOfAKilledHarness: a harness killed with SIGKILL cannot
// clean up: its namespaces stay (its nodes die with it, Pdeathsig); the
// next run removes them and says so, and leaves nothing itself.
func TestStaleLabOfAKilledHarness(t *testing.T) {
	node, cli := binaries(t)
	before := viewRoot(t)
	cmd, lines, _ := cliRun(t, cli, node, "--time-limit", "20", "--nemesis", "partition,packet", "--nemesis-interval", "1")
	dir := filepath.Join(cmd.Dir, runDir(t, lines))
	waitHistory(t, dir, 2*time.Second, []string{`"f":"start-packet"`, `"type":"ok"`}, 40*time.Second)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = exitCode(t, cmd, lines)
	prefix := fmt.Sprintf("chunklease-%d-", cmd.Process.Pid)
	if out, _ := exec.Command("ip", "netns", "list").CombinedOutput(); !strings.Contains(string(out), prefix) {
		t.Fatalf("no namespace %s* after the harness was killed:\n%s", prefix, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(proctest.Running(node)) > 0 { // the kernel kills them (Pdeathsig): poll, bounded
		if time.Now().After(deadline) {
			t.Fatalf("node programs %v survived their harness", proctest.Running(node))
		}
		time.Sleep(20 * time.Millisecond)
	}
	next, nextLines, nextErr := cliRun(t, cli, node, "--time-limit", "1")
	if code, out := exitCode(t, next, nextLines); code != harness.ExitValid {
		t.Fatalf("the next run: exit %d\n%s\n%s", code, out, nextErr)
	}
	if !strings.Contains(nextErr.String(), "removed stale lab "+prefix) {
		// Another test binary's lab, made at the same moment, may have
		// removed it first: then it must at least be gone.
		t.Logf("the next run did not name the stale lab %s* (removed by a concurrent test?):\n%s", prefix, nextErr)
	}
	assertNothingLeft(t, before, prefix, node)
}
