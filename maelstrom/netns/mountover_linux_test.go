package netns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// privateMountsEnv marks the test binary re-run inside a private mount
// namespace (inPrivateMounts).
const privateMountsEnv = "CHUNKLEASE_NETNS_TEST_PRIVATE_MOUNTS"

// inPrivateMounts runs the calling test again in a child process with a
// private copy of the mount table, and reports whether this process is
// that child (then the test goes on) or the parent (then the child's
// result is the test's, and the caller returns). What the test mounts
// over /run/netns stays in the child's copy and goes with it; the files
// it creates and removes are the machine's, so the parent checks that
// none of the names the child used is left.
func inPrivateMounts(t *testing.T) bool {
	t.Helper()
	needRoot(t)
	if os.Getenv(privateMountsEnv) != "" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), privateMountsEnv+"=1")
	// Go's exec makes every mount of the copy private (MS_REC|MS_PRIVATE
	// on /), so nothing propagates back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	t.Logf("in a private mount namespace:\n%s", out)
	if err != nil {
		t.Errorf("the test in a private mount namespace failed: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if lab, ok := strings.CutPrefix(strings.TrimSpace(line), "lab used: "); ok {
			for _, name := range labNamespaces(t, lab) {
				t.Errorf("name %s of lab %s left in the machine's %s", name, lab, netnsDir)
				if _, err := deleteName(name); err != nil { // the child's mounts went with it: a plain file
					t.Error(err)
				}
			}
		}
	}
	return false
}

// plainRunNetns makes /run/netns a plain directory in this (private)
// mount namespace, as on a machine where no `ip netns add` ran yet:
// every mount on it is taken off here, and only here.
func plainRunNetns(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; isMountPoint(t, netnsDir); i++ {
		if i == maxMountLayers {
			t.Fatalf("%s is still a mount point", netnsDir)
		}
		if err := unix.Unmount(netnsDir, unix.MNT_DETACH); err != nil {
			t.Fatalf("unmount %s in the private copy: %v", netnsDir, err)
		}
	}
}

// mountOverAsIPNetnsAdd does to /run/netns what `ip netns add` (iproute2,
// netns_add) does when it is not yet a mount point: making it shared
// fails, so it bind-mounts the directory onto itself, recursively, and
// makes that shared.
func mountOverAsIPNetnsAdd(t *testing.T) {
	t.Helper()
	err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if !errors.Is(err, unix.EINVAL) {
		t.Fatalf("making a plain %s shared: %v, want EINVAL (not a mount point), as iproute2 finds it", netnsDir, err)
	}
	if err := unix.Mount(netnsDir, netnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		t.Fatalf("bind-mount %s onto itself: %v", netnsDir, err)
	}
	if err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		t.Fatalf("make %s shared: %v", netnsDir, err)
	}
}

// isMountPoint reports whether path is the mount point of a mount in
// this mount namespace.
func isMountPoint(t *testing.T, path string) bool {
	t.Helper()
	return mountsAt(t, path) > 0
}

// mountsAt counts the mounts at path in this mount namespace, hidden
// ones included (/proc/self/mountinfo lists them all).
func mountsAt(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && fields[4] == path {
			n++
		}
	}
	return n
}

// labMounts counts the mounts of lab's names, at any layer.
func labMounts(t *testing.T, lab string, names []string) int {
	t.Helper()
	n := 0
	for _, name := range names {
		n += mountsAt(t, filepath.Join(netnsDir, name))
	}
	return n
}

// TestRunNetnsMountedOverMidRun: someone runs `ip netns add` while a lab
// runs, on a machine where /run/netns was a plain directory, so it
// becomes a bind mount of itself and every name of the lab two mounts,
// one hidden. The plain deletion (the negative control) then fails, first
// busy, then with "invalid argument", as runs did before; Close must
// still remove every name and every mount of the lab, and leave the other
// tool's namespace alone.
func TestRunNetnsMountedOverMidRun(t *testing.T) {
	if !inPrivateMounts(t) {
		return
	}
	plainRunNetns(t)
	lab := newLab(t, 1)
	fmt.Printf("lab used: %s\n", lab.Name())
	s := startEcho(t, lab.Node("n1"), lab.Node("n1").Addr().String()+":7000")
	names := labNamespaces(t, lab.Name())
	other := fmt.Sprintf("othertool-%d", os.Getpid())
	mountOverAsIPNetnsAdd(t)
	otherNS := make(chan error, 1)
	go offMainThread(func() { // as `ip netns add other` goes on to do; the thread, in the new namespace, ends with f
		h, err := vnetns.NewNamed(other)
		if err == nil {
			h.Close()
		}
		otherNS <- err
	})
	if err := <-otherNS; err != nil {
		t.Fatalf("the other tool's namespace: %v", err)
	}
	t.Cleanup(func() { _ = vnetns.DeleteNamed(other) })
	if got, want := labMounts(t, lab.Name(), names), 2*len(names); got != want {
		t.Fatalf("the lab's %d names have %d mounts after the bind mount, want %d (one visible, one hidden each)", len(names), got, want)
	}

	control := names[0]
	err1 := vnetns.DeleteNamed(control)
	err2 := vnetns.DeleteNamed(control)
	t.Logf("negative control, the plain deletion of %s: %v, then %v", control, err1, err2)
	if !errors.Is(err1, unix.EBUSY) || !errors.Is(err2, unix.EINVAL) {
		t.Fatalf("the plain deletion of %s gave %v, then %v; want busy, then invalid argument: the scenario no longer shows the fault", control, err1, err2)
	}

	if err := lab.Close(); err != nil {
		t.Fatalf("Close with /run/netns mounted over: %v", err)
	}
	if left := labNamespaces(t, lab.Name()); len(left) > 0 {
		t.Errorf("names left: %v", left)
	}
	if n := labMounts(t, lab.Name(), names); n != 0 {
		t.Errorf("%d mounts of the lab's names left (hidden ones included)", n)
	}
	waitExited(t, s)
	if !isMountPoint(t, netnsDir) || mountsAt(t, filepath.Join(netnsDir, other)) != 1 {
		t.Errorf("Close changed what is not the lab's: %s a mount point %v, %s mounted %d times",
			netnsDir, isMountPoint(t, netnsDir), other, mountsAt(t, filepath.Join(netnsDir, other)))
	}
}

// TestStaleLabUnderRunNetnsMountedOver: the same `ip netns add` while a
// harness runs, and then the harness is killed, so its lab is left with
// its names hidden under the bind mount and a node still running in one.
// Before, every later run failed to delete the stale names ("invalid
// argument", the negative control below); now the next Create removes
// them, with their mounts and the process in the hidden namespace.
func TestStaleLabUnderRunNetnsMountedOver(t *testing.T) {
	if !inPrivateMounts(t) {
		return
	}
	plainRunNetns(t)
	stale, node := staleLab(t, mountOverAsIPNetnsAdd)
	fmt.Printf("lab used: %s\n", stale)
	names := labNamespaces(t, stale)
	if len(names) != 3 || labMounts(t, stale, names) != 6 {
		t.Fatalf("the stale lab has names %v with %d mounts, want 3 names and 6 mounts", names, labMounts(t, stale, names))
	}
	// What the next run did before: the visible mount goes, the name
	// stays, and from then on every attempt fails with "invalid argument".
	// The node's namespace: its process is now in a namespace no path
	// reaches.
	control := stale + "-node-n1"
	_ = vnetns.DeleteNamed(control)
	if err := vnetns.DeleteNamed(control); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("negative control: the plain deletion of the stale %s gave %v, want invalid argument", control, err)
	}

	msgs, err := CleanStale()
	t.Logf("CleanStale: %v", msgs)
	if err != nil {
		t.Fatalf("CleanStale with the stale lab hidden under a mount on %s: %v", netnsDir, err)
	}
	if left := labNamespaces(t, stale); len(left) > 0 {
		t.Errorf("stale names left: %v", left)
	}
	if n := labMounts(t, stale, names); n != 0 {
		t.Errorf("%d mounts of the stale names left", n)
	}
	want := fmt.Sprintf("killed 1 process(es) left in namespaces hidden under a mount on %s: %d", netnsDir, node)
	if !strings.Contains(strings.Join(msgs, "\n"), want) {
		t.Errorf("CleanStale does not say %q", want)
	}
	waitFor(t, "the stale node process gone", 5*time.Second, func() bool { st := procState(node); return st == 0 || st == 'Z' })
	lab, err := Create(context.Background(), Config{Nodes: []string{"n1"}})
	if err != nil {
		t.Fatalf("the next run's Create: %v", err)
	}
	if err := lab.Close(); err != nil {
		t.Errorf("the next run's Close: %v", err)
	}
}

// staleLab starts the stale-lab role (a lab with a node process that
// outlives it), calls between, and kills the role with SIGKILL. It
// returns the lab's name and the node process's pid.
func staleLab(t *testing.T, between func(*testing.T)) (string, int) {
	t.Helper()
	owner := roleCommand("stale-lab", "")
	owner.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	ready, err := readReady(out, 20*time.Second)
	if err != nil {
		owner.Process.Kill()
		owner.Wait()
		t.Fatal(err)
	}
	node := mustAtoi(t, ready["child"])
	t.Cleanup(func() { syscall.Kill(node, syscall.SIGKILL) })
	between(t)
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	owner.Wait()
	return ready["lab"], node
}

// waitExited waits for an echo server whose namespace went with its lab.
func waitExited(t *testing.T, s *server) {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup's kill
	case <-time.After(5 * time.Second):
		t.Errorf("the process left in the lab (pid %d) still runs after Close", s.cmd.Process.Pid)
	}
}
