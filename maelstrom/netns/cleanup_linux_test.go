package netns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
)

// rootView is what the root namespace shows of the network: namespace
// names, links, nftables tables and qdiscs, through the libraries and,
// where the tools are installed (scripts/setup_netns.sh), through `ip
// netns list`, `ip link`, `nft list ruleset` and `tc qdisc`.
type rootView struct {
	namespaces, links, tables, qdiscs []string
	tools                             map[string]string
}

func viewRoot(t *testing.T) rootView {
	t.Helper()
	var v rootView
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		v.namespaces = append(v.namespaces, e.Name())
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		v.links = append(v.links, l.Attrs().Name)
	}
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tables, err := conn.ListTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		v.tables = append(v.tables, tb.Name)
	}
	qdiscs, err := netlink.QdiscList(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qdiscs {
		v.qdiscs = append(v.qdiscs, fmt.Sprintf("%s@%d", q.Type(), q.Attrs().LinkIndex))
	}
	v.tools = map[string]string{}
	for _, args := range [][]string{{"ip", "netns", "list"}, {"ip", "-o", "link"}, {"nft", "list", "ruleset"}, {"tc", "qdisc"}} {
		if _, err := exec.LookPath(args[0]); err != nil {
			t.Logf("%s is not installed (scripts/setup_netns.sh installs it): checked through the libraries only", args[0])
			continue
		}
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		v.tools[strings.Join(args, " ")] = string(out)
	}
	return v
}

// sameRoot reports what differs between two views. The lab's own
// namespaces are named in /run/netns while it runs (closed: false), and
// not after; other namespaces are not the lab's business (another
// program on the machine may make its own).
func sameRoot(t *testing.T, when string, before, now rootView, lab string, closed bool) {
	t.Helper()
	for _, n := range now.namespaces {
		if closed && strings.HasPrefix(n, lab) {
			t.Errorf("%s: namespace %s of the lab is in /run/netns", when, n)
		}
	}
	for what, pair := range map[string][2][]string{
		"links": {before.links, now.links}, "nftables tables": {before.tables, now.tables}, "qdiscs": {before.qdiscs, now.qdiscs},
	} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Errorf("%s: the root namespace's %s changed: %v -> %v", when, what, pair[0], pair[1])
		}
	}
	for cmd, out := range now.tools {
		if cmd == "ip netns list" && !closed {
			continue
		}
		if strings.Contains(out, lab) {
			t.Errorf("%s: `%s` shows the lab:\n%s", when, cmd, out)
		}
		if cmd != "ip netns list" && out != before.tools[cmd] {
			t.Errorf("%s: `%s` changed:\n%s\n->\n%s", when, cmd, before.tools[cmd], out)
		}
	}
}

// delayGoroutines counts goroutines of the delay paths.
func delayGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "netns.(*delayPath)")
}

// logLines collects a lab's log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestCloseLeavesNothing: a lab with every fault on and a process left
// running never shows in the root namespace, and Close kills the
// process, stops every delay-path goroutine and removes every namespace.
func TestCloseLeavesNothing(t *testing.T) {
	needRoot(t)
	before := viewRoot(t)
	var log logLines
	lab, err := Create(context.Background(), Config{Nodes: []string{"n1", "n2", "n3"}, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	if err := lab.Partition(map[string][]string{"n1": {"n2"}}); err != nil {
		t.Fatal(err)
	}
	if err := lab.SetLatency(5); err != nil {
		t.Fatal(err)
	}
	if err := lab.StartPacket([]string{"n3"}, PacketFault{DelayMs: 20, JitterMs: 5, LossPct: 10, DuplicatePct: 10, ReorderPct: 10}); err != nil {
		t.Fatal(err)
	}
	l := &link{lab: lab, from: udpSocket(t, lab.Node("n1"), 9400), to: udpSocket(t, lab.Node("n2"), 9400)}
	l.collectAll(t, l.burst(t, 20), 20)
	s := startEcho(t, lab.Node("n2"), lab.Node("n2").Addr().String()+":7000")
	if n := delayGoroutines(); n != 6 {
		t.Errorf("%d delay-path goroutines with a delay on every node, want 6 (a reader and a scheduler per node)", n)
	}
	sameRoot(t, "while the lab runs", before, viewRoot(t), lab.Name(), false)

	if err := lab.Close(); err != nil {
		t.Fatal(err)
	}
	sameRoot(t, "after Close", before, viewRoot(t), lab.Name(), true)
	waitFor(t, "no delay-path goroutine left", 5*time.Second, func() bool { return delayGoroutines() == 0 })
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup's kill
	case <-time.After(5 * time.Second):
		t.Fatalf("the process left in n2 (pid %d) still runs after Close", s.cmd.Process.Pid)
	}
	want := fmt.Sprintf("killed 1 process(es) left in its namespaces: %d", s.cmd.Process.Pid)
	if !strings.Contains(log.all(), want) {
		t.Errorf("Close's log does not say %q:\n%s", want, log.all())
	}
	if err := lab.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if err := lab.Partition(nil); err == nil {
		t.Error("Partition after Close succeeded")
	}
}

// TestStaleLabRemoved: a harness killed with SIGKILL leaves its lab and
// its node behind; the next Create removes both and says so, naming the
// lab, the dead owner and the process it killed. A live lab is never
// touched.
func TestStaleLabRemoved(t *testing.T) {
	needRoot(t)
	stale, node := staleLab(t, func(*testing.T) {})
	if got := labNamespaces(t, stale); len(got) != 3 {
		t.Fatalf("the killed owner left %v, want its 3 namespaces", got)
	}
	if st := procState(node); st == 0 || st == 'Z' {
		t.Fatalf("the node process %d did not outlive its owner (state %q)", node, st)
	}

	var log logLines
	lab, err := Create(context.Background(), Config{Nodes: []string{"n1"}, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	for _, want := range []string{
		"removed stale lab " + stale,
		"which is no longer running",
		stale + "-node-n1",
		fmt.Sprintf("killed 1 process(es) left in them: %d", node),
	} {
		if !strings.Contains(log.all(), want) {
			t.Errorf("Create's message does not say %q:\n%s", want, log.all())
		}
	}
	t.Logf("Create said: %s", log.all())
	if got := labNamespaces(t, stale); len(got) != 0 {
		t.Errorf("stale namespaces remain: %v", got)
	}
	waitFor(t, "the stale node process gone", 5*time.Second, func() bool { st := procState(node); return st == 0 || st == 'Z' })

	msgs, err := CleanStale()
	if err != nil || len(msgs) != 0 {
		t.Errorf("a second CleanStale: %v, %v; want nothing to do", msgs, err)
	}
	if got := labNamespaces(t, lab.Name()); len(got) != 3 {
		t.Errorf("CleanStale touched a live lab: %v", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRefusesWithoutRoot: without the privileges, Create fails with an
// error that wraps ErrNeedRoot and says what is missing. Run as root, the
// test checks it in a child process run as the user nobody.
func TestRefusesWithoutRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		_, err := Create(context.Background(), Config{Nodes: []string{"n1"}})
		checkRefusal(t, err, fmt.Sprint(err))
		return
	}
	if err := Check(); err != nil {
		t.Fatalf("Check as root: %v", err)
	}
	bin := copyForNobody(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), roleEnv+"=refuse")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	checkRefusal(t, ErrNeedRoot, string(out))
}

func checkRefusal(t *testing.T, err error, text string) {
	t.Helper()
	t.Logf("refusal: %s", strings.TrimSpace(text))
	if !errors.Is(err, ErrNeedRoot) {
		t.Errorf("the error %v does not wrap ErrNeedRoot", err)
	}
	for _, want := range []string{"needs root", "CAP_SYS_ADMIN", "run the real-network test as root"} {
		if !strings.Contains(text, want) {
			t.Errorf("the refusal does not say %q: %s", want, text)
		}
	}
}

// copyForNobody copies the test binary where the user nobody can run it.
func copyForNobody(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "netns-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "netns.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// ownLabNamespaces lists this process's lab namespaces.
func ownLabNamespaces(t *testing.T) []string {
	return labNamespaces(t, fmt.Sprintf("%s%d", namePrefix, os.Getpid()))
}

// TestCreateFailureLeavesNothing: a Create that fails halfway (its
// context ends while it builds) or at once (a bad configuration) leaves
// no namespace behind.
func TestCreateFailureLeavesNothing(t *testing.T) {
	needRoot(t)
	before := ownLabNamespaces(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Create(ctx, Config{Nodes: []string{"n1", "n2", "n3"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Create with a cancelled context: %v", err)
	}
	if _, err := Create(context.Background(), Config{Nodes: []string{"n1", "n1"}}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("Create with a node listed twice: %v", err)
	}
	if after := ownLabNamespaces(t); !slices.Equal(before, after) {
		t.Errorf("failed Creates left namespaces: %v -> %v", before, after)
	}
}
