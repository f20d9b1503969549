package simnet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/netsim"
	"chunklease/workloads/echo"
)

// fakeNodeBin is the scripted node program (testdata/fakenode), built
// once for the whole test binary.
var fakeNodeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "harness-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fakeNodeBin = filepath.Join(dir, "fakenode")
	build := exec.Command("go", "build", "-o", fakeNodeBin, "./testdata/fakenode")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building testdata/fakenode: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// pidRecorder wraps a launcher and remembers the pid of every program it
// started, so tests can check that none is left running.
type pidRecorder struct {
	mu   sync.Mutex
	pids []int
}

func (p *pidRecorder) wrap(l nodeproc.Launcher) nodeproc.Launcher {
	return func(id string, env []string) (nodeproc.Proc, error) {
		proc, err := l(id, env)
		if err == nil {
			p.mu.Lock()
			p.pids = append(p.pids, proc.PID())
			p.mu.Unlock()
		}
		return proc, err
	}
}

func (p *pidRecorder) all() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.pids...)
}

// assertGone fails unless every pid is gone (or a zombie nobody reaped
// yet, which no longer runs).
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	if len(pids) == 0 {
		t.Fatal("no pids recorded")
	}
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone
		}
		// The state is the field after the parenthesised command name.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 0 && fields[0] != "Z" && fields[0] != "X" {
			t.Errorf("process %d is still running (state %s)", pid, fields[0])
		}
	}
}

// execOptions returns options that run the fake node program in mode
// with the echo workload, writing into a fresh store.
func execOptions(t *testing.T, mode string, nodes int) (testRun, *pidRecorder, *bytes.Buffer) {
	t.Helper()
	rec := &pidRecorder{}
	var out bytes.Buffer
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i)
	}
	seed := testSeed(t)
	return testRun{Options: harness.Options{
		Workload:    echo.NewEcho(echo.EchoOptions{Rate: 200}, harness.WorkloadSeed(seed)),
		Nodes:       ids,
		TimeLimit:   300 * time.Millisecond,
		Concurrency: nodes,
		Seed:        seed,
		StoreDir:    filepath.Join(t.TempDir(), "store"),
		Stdout:      &out,
		Stderr:      &out,
	}, Config: Config{
		Launch:  rec.wrap(nodeproc.ExecLauncher(fakeNodeBin, []string{mode})),
		Latency: netsim.Latency{MeanMs: 1, Dist: netsim.Constant},
		Strict:  true,
	}}, rec, &out
}

// runExec runs o and returns the outcome; every program must be gone.
func runExec(t *testing.T, o testRun, rec *pidRecorder) harness.Outcome {
	t.Helper()
	out := runSim(context.Background(), o)
	assertGone(t, rec.all())
	return out
}

// testRun is a run as the tests make it: the runner's options and the
// simulated network's configuration, which runSim puts together.
type testRun struct {
	harness.Options
	Config
}

// runSim runs o on the simulated network its Config describes.
func runSim(ctx context.Context, o testRun) harness.Outcome {
	net, err := New(o.Config)
	if err != nil {
		return harness.Outcome{Exit: harness.ExitBadArgs, Err: err}
	}
	o.Options.Network = net
	return harness.Run(ctx, o.Options)
}
