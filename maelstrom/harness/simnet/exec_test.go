package simnet

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/nemesis"
	"chunklease/workloads"
	"chunklease/workloads/echo"
	"chunklease/workloads/lease"
)

// TestEchoValidWithRealProcesses runs three fake echo nodes for a short
// time and checks the verdict, the store layout and the cleanup.
func TestEchoValidWithRealProcesses(t *testing.T) {
	o, rec, console := execOptions(t, "echo", 3)
	out := runExec(t, o, rec)
	if out.Exit != harness.ExitValid {
		t.Fatalf("exit %d (%v), want valid\n%s", out.Exit, out.Err, console)
	}
	for _, name := range []string{"history.jsonl", "results.json", "latency-raw.png", "rate.png",
		"node-logs/n0.log", "node-logs/n1.log", "node-logs/n2.log"} {
		if _, err := os.Stat(filepath.Join(out.Dir, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	latest, err := filepath.EvalSymlinks(filepath.Join(o.StoreDir, "latest"))
	if want, _ := filepath.EvalSymlinks(out.Dir); err != nil || latest != want {
		t.Errorf("store/latest -> %s (%v), want %s", latest, err, want)
	}
	if out.Results.Stats.OKCount == 0 || !out.Results.Valid {
		t.Errorf("results %+v", out.Results)
	}
}

// TestLaunchLikeMaelstrom: canonical --bin, positional args, cwd the temp
// dir, the parent's environment, stderr in node-logs/<id>.log.
func TestLaunchLikeMaelstrom(t *testing.T) {
	t.Setenv("FAKE_ENV", "passed-through")
	link := filepath.Join(t.TempDir(), "node-link")
	if err := os.Symlink(fakeNodeBin, link); err != nil {
		t.Fatal(err)
	}
	bin, err := nodeproc.CanonicalBin(link)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(fakeNodeBin); bin != want {
		t.Fatalf("canonical bin %s, want %s", bin, want)
	}
	o, rec, _ := execOptions(t, "echo", 1)
	o.Launch = rec.wrap(nodeproc.ExecLauncher(bin, []string{"echo", "extra-arg"}))
	out := runExec(t, o, rec)
	if out.Exit != harness.ExitValid {
		t.Fatalf("exit %d: %v", out.Exit, out.Err)
	}
	log, err := os.ReadFile(filepath.Join(out.Dir, "node-logs", "n0.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "started echo extra-arg cwd=" + os.TempDir() + " FAKE_ENV=passed-through\n"
	if !strings.HasPrefix(string(log), want) {
		t.Errorf("log starts %q, want %q", firstLine(string(log)), want)
	}
	if !strings.Contains(string(log), "got init from c0\n") || !strings.Contains(string(log), "got echo from c2\n") {
		t.Errorf("log lacks init from c0 or echo from c2 (workers start at c(2n)):\n%s", log)
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] + "\n" }

// TestStrictRejectsEachBadOutput: every kind of line Maelstrom rejects
// fails the run at once, naming the node and quoting the line.
func TestStrictRejectsEachBadOutput(t *testing.T) {
	kinds := map[string]string{
		"nonjson":        "not well-formed JSON",
		"blank":          "blank line",
		"array":          "JSON array, not an object",
		"nonobject-body": `"body" is a JSON string`,
		"missing-src":    `missing "src"`,
		"missing-dest":   `missing "dest"`,
		"missing-body":   `missing "body"`,
		"extra-key":      `extra top-level key "trace"`,
		"float-id":       `"id" must be an integer`,
		"unknown-src":    `src "n99": not a node or open client`,
		"unknown-dest":   `dest "n99": not a node or open client`,
		"closed-client":  `dest "c0": client is closed`,
	}
	for kind, want := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			o, rec, console := execOptions(t, "bad="+kind, 2)
			out := runExec(t, o, rec)
			var bad *OutputError
			if out.Exit != harness.ExitFailed || !errors.As(out.Err, &bad) {
				t.Fatalf("exit %d, err %v; want exit 2 with an OutputError\n%s", out.Exit, out.Err, console)
			}
			if bad.Node != "n0" && bad.Node != "n1" {
				t.Errorf("diagnostic names node %q", bad.Node)
			}
			msg := out.Err.Error()
			if !strings.Contains(msg, want) || !strings.Contains(msg, "node "+bad.Node+" printed") ||
				!strings.Contains(msg, "line: "+strconv.Quote(bad.Line)) {
				t.Errorf("diagnostic %q lacks %q, the node or the quoted line", msg, want)
			}
			if maelstrom := "real Maelstrom logs a warning with this error and then never reads " + bad.Node + "'s stdout again"; !strings.Contains(msg, maelstrom) {
				t.Errorf("diagnostic %q does not say what Maelstrom does (%q)", msg, maelstrom)
			}
			if !strings.Contains(console.String(), msg) {
				t.Errorf("the console does not show the diagnostic:\n%s", console)
			}
			if out.Results == nil || out.Results.Valid || out.Results.Error == "" {
				t.Errorf("results.json must record the failure: %+v", out.Results)
			}
		})
	}
}

// TestEarlyExitIsReported: a node that exits on its own, even with status
// 0, fails the run with its status and its last lines.
func TestEarlyExitIsReported(t *testing.T) {
	for _, status := range []int{0, 3} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			o, rec, _ := execOptions(t, "exit-after-init="+strconv.Itoa(status), 2)
			out := runExec(t, o, rec)
			var exit *nodeproc.ExitError
			if out.Exit != harness.ExitFailed || !errors.As(out.Err, &exit) {
				t.Fatalf("exit %d, err %v; want exit 2 with an ExitError", out.Exit, out.Err)
			}
			if exit.Status != "exit status "+strconv.Itoa(status) {
				t.Errorf("status %q", exit.Status)
			}
			if !strings.Contains(strings.Join(exit.Stdout, "\n"), "last words on stdout") ||
				!strings.Contains(strings.Join(exit.Stderr, "\n"), "last words on stderr") {
				t.Errorf("last lines missing: stdout %q stderr %q", exit.Stdout, exit.Stderr)
			}
			if !strings.Contains(out.Err.Error(), "node "+exit.Node+" exited early") {
				t.Errorf("diagnostic %q", out.Err)
			}
		})
	}
}

func TestInitErrors(t *testing.T) {
	cases := map[string]string{
		"init-error":      "answered init with an error (code 13",
		"init-wrong-type": `answered init with a "echo_ok" message`,
	}
	for mode, want := range cases {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o, rec, _ := execOptions(t, mode, 2)
			out := runExec(t, o, rec)
			if out.Exit != harness.ExitFailed || out.Err == nil || !strings.Contains(out.Err.Error(), want) {
				t.Fatalf("exit %d, err %v; want exit 2 with %q", out.Exit, out.Err, want)
			}
		})
	}
}

// TestChildProcessesAreStopped: a node's own children die with it (the
// harness kills the node's process group).
func TestChildProcessesAreStopped(t *testing.T) {
	o, rec, _ := execOptions(t, "spawn-child", 1)
	out := runExec(t, o, rec)
	if out.Exit != harness.ExitValid {
		t.Fatalf("exit %d: %v", out.Exit, out.Err)
	}
	log, _ := os.ReadFile(filepath.Join(out.Dir, "node-logs", "n0.log"))
	_, after, ok := strings.Cut(string(log), "child-pid ")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	if !ok || err != nil {
		t.Fatalf("no child pid in the log:\n%s", log)
	}
	assertGone(t, []int{pid})
}

// cancelOnFirstOp is an echo workload that cancels the run's context when
// asked for its first op: Ctrl-C in the middle of a run.
type cancelOnFirstOp struct {
	workloads.Workload
	cancel context.CancelFunc
}

func (c cancelOnFirstOp) Next(now time.Duration, worker int) (workloads.Invocation, bool) {
	c.cancel()
	return c.Workload.Next(now, worker)
}

func TestInterruptStopsEverything(t *testing.T) {
	o, rec, _ := execOptions(t, "echo", 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Workload = cancelOnFirstOp{o.Workload, cancel}
	o.TimeLimit = time.Hour
	out := runSim(ctx, o)
	assertGone(t, rec.all())
	if out.Exit != harness.ExitFailed || !errors.Is(out.Err, harness.ErrInterrupted) {
		t.Fatalf("exit %d, err %v; want exit 2, interrupted", out.Exit, out.Err)
	}
}

// TestKillAndPauseRealProcesses: the kill and pause nemeses on real
// processes. A single-authority lease node is killed, paused and
// restarted (with its boot wait in its environment), the history stays
// valid, and every program the run started, restarted ones included, is
// gone afterwards.
func TestKillAndPauseRealProcesses(t *testing.T) {
	t.Parallel()
	o, rec, console := execOptions(t, "lease", 1)
	o.Workload = lease.NewLease(lease.LeaseOptions{LeaseMs: 300, Rate: 50, Workers: 10}, harness.WorkloadSeed(o.Seed))
	o.Concurrency, o.TimeLimit = 10, 2*time.Second
	o.Faults, o.NemesisInterval = nemesis.Faults{Kill: true, Pause: true}, 200*time.Millisecond
	// A seed whose first process fault pauses the node, while it is up:
	// a pause that finds the node killed hits nothing.
	o.Seed = firstSeedPausingWith(t, o.Nodes, o.Faults, o.NemesisInterval)
	out := runExec(t, o, rec)
	if out.Exit == harness.ExitFailed || out.Results.Checks.Workload == nil || !*out.Results.Checks.Workload {
		t.Fatalf("exit %d (%v)\n%s", out.Exit, out.Err, console)
	}
	n := out.Results.Nemesis
	if n.NodesKilled == 0 || n.NodesRestarted != n.NodesKilled || n.NodesPaused == 0 || len(rec.all()) != 1+n.NodesRestarted {
		t.Fatalf("nemesis %+v, %d programs started", n, len(rec.all()))
	}
	log, _ := os.ReadFile(filepath.Join(out.Dir, "node-logs", "n0.log"))
	starts := strings.Count(string(log), "started lease ")
	booted := strings.Count(string(log), "LEASE_MAX_MS=300 LEASE_BOOT_WAIT_MS=300\n")
	if starts != 1+n.NodesRestarted || booted != n.NodesRestarted {
		t.Errorf("log shows %d starts, %d with the boot wait; want %d and %d:\n%s", starts, booted, 1+n.NodesRestarted, n.NodesRestarted, log)
	}
}

// TestPausedAtTheEndIsStopped: a node still paused when the test ends
// (echo has no final phase to resume it) is continued and killed. No
// client op is sent, so none waits for the paused node.
func TestPausedAtTheEndIsStopped(t *testing.T) {
	t.Parallel()
	o, rec, console := execOptions(t, "echo", 3)
	o.Workload = echo.NewEcho(echo.EchoOptions{Rate: 0}, 1)
	o.Seed = firstSeedPausing(t, o.Nodes)
	t.Logf("running with seed %d, whose first op pauses a node", o.Seed)
	o.Faults, o.NemesisInterval = nemesis.Faults{Pause: true}, time.Hour // one pause at t=0, no resume
	out := runExec(t, o, rec)
	if out.Exit == harness.ExitFailed || out.Results.Nemesis.NodesPaused == 0 || out.Results.Nemesis.NodesResumed != 0 {
		t.Fatalf("exit %d (%v), nemesis %+v\n%s", out.Exit, out.Err, out.Results.Nemesis, console)
	}
}

// firstSeedPausing returns the first seed whose first process op pauses
// some node (a minority-third of 3 nodes is nobody).
func firstSeedPausing(t *testing.T, nodes []string) uint64 {
	return firstSeedPausingWith(t, nodes, nemesis.Faults{Pause: true}, time.Hour)
}

// firstSeedPausingWith finds a seed whose first process fault, under
// faults and interval, is a pause that hits a node.
func firstSeedPausingWith(t *testing.T, nodes []string, faults nemesis.Faults, interval time.Duration) uint64 {
	return firstSeedHitting(t, 1, nodes, faults, interval, nemesis.PauseOp)
}

// firstSeedHitting finds, from seed from on, a seed whose first process
// fault under faults and interval is op and hits a node: a kill or pause
// that picks none of a small cluster's nodes would test nothing.
func firstSeedHitting(t *testing.T, from uint64, nodes []string, faults nemesis.Faults, interval time.Duration, op string) uint64 {
	for seed := from; seed < from+1000; seed++ {
		s, _ := nemesis.NewSchedule(faults, interval, nemesis.Streams{Process: rand.New(rand.NewPCG(harness.StreamSeed(seed, 5), 0))})
		if s.Peek().F != op {
			continue
		}
		hit, _ := nemesis.PickNodes(s.Peek().Nodes, nodes, rand.New(rand.NewPCG(harness.StreamSeed(seed, 6), 0)))
		if len(hit) > 0 {
			return seed
		}
	}
	t.Fatalf("no seed from %d starts with a %s that hits a node", from, op)
	return 0
}
