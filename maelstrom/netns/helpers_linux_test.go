package netns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"chunklease/internal/testseed"
)

// The test binary doubles as the small programs the tests start inside
// namespaces: run with roleEnv set, TestMain runs that role instead of
// the tests.
const (
	roleEnv = "CHUNKLEASE_NETNS_TEST_ROLE"
	addrEnv = "CHUNKLEASE_NETNS_TEST_ADDR"
	// roleLifetime bounds every role process: it exits by itself even if
	// the test that started it is gone.
	roleLifetime = 60 * time.Second
)

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		time.AfterFunc(roleLifetime, func() { os.Exit(3) })
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}

func runRole(role string) int {
	switch role {
	case "echo":
		return roleEcho(os.Getenv(addrEnv))
	case "stale-lab":
		return roleStaleLab()
	case "refuse":
		return roleRefuse()
	}
	fmt.Fprintf(os.Stderr, "unknown role %q\n", role)
	return 2
}

// roleEcho serves TCP on addr: each line in gets "pid=<pid> <line>" back.
// It prints "ready pid=<pid> netns=<inode>" once it listens.
func roleEcho(addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	link, _ := os.Readlink("/proc/self/ns/net")
	inode, _ := parseNetLink(link)
	fmt.Printf("ready pid=%d netns=%d\n", os.Getpid(), inode)
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintf(c, "pid=%d %s\n", os.Getpid(), sc.Text())
			}
		}()
	}
}

// roleStaleLab makes a lab, starts an echo server in its node without a
// parent-death signal (so it outlives this process, as a node does when
// a harness is SIGKILLed), says "ready lab=<name> child=<pid>" and waits
// to be killed.
func roleStaleLab() int {
	lab, err := Create(context.Background(), Config{Nodes: []string{"n1"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := roleCommand("echo", lab.Node("n1").Addr().String()+":7000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := lab.Node("n1").Start(cmd); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := readReady(out, 10*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("ready lab=%s child=%d\n", lab.Name(), cmd.Process.Pid)
	select {} // until killed, or roleLifetime
}

// roleRefuse tries to build a lab and prints the error it gets.
func roleRefuse() int {
	_, err := Create(context.Background(), Config{Nodes: []string{"n1"}})
	fmt.Println(err)
	if errors.Is(err, ErrNeedRoot) {
		return 0
	}
	return 1
}

func roleCommand(role, addr string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role, addrEnv+"="+addr)
	cmd.Stderr = os.Stderr
	return cmd
}

// readReady reads the first line of r, which must start with "ready",
// within timeout, and returns its key=value fields.
func readReady(r io.Reader, timeout time.Duration) (map[string]string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		if !strings.HasPrefix(res.line, "ready") {
			return nil, fmt.Errorf("expected a ready line, got %q (%v)", res.line, res.err)
		}
		fields := map[string]string{}
		for _, f := range strings.Fields(res.line)[1:] {
			k, v, _ := strings.Cut(f, "=")
			fields[k] = v
		}
		return fields, nil
	case <-time.After(timeout):
		return nil, fmt.Errorf("no ready line within %v", timeout)
	}
}

// needRoot skips a test that builds a lab when this process is not root,
// naming root and what Check says; as root it never skips.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to build network namespaces (%v)", Check())
	}
}

// newLab builds a lab with nodes n1..nN for one test and closes it at the
// end, checking that Close removed every namespace.
func newLab(t *testing.T, n int) *Lab {
	t.Helper()
	needRoot(t)
	var nodes []string
	for i := 1; i <= n; i++ {
		nodes = append(nodes, fmt.Sprintf("n%d", i))
	}
	seed := testseed.Get(t) // the delay path's draws; the kernel's are its own
	lab, err := Create(context.Background(), Config{Nodes: nodes, Seed: seed, Logf: t.Logf})
	if err != nil {
		t.Fatalf("create lab: %v", err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if left := labNamespaces(t, lab.Name()); len(left) > 0 {
			t.Errorf("after Close, namespaces left: %v", left)
		}
	})
	return lab
}

// labNamespaces lists the names under /run/netns that belong to lab.
func labNamespaces(t *testing.T, lab string) []string {
	t.Helper()
	entries, err := os.ReadDir(netnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), lab+"-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// server is a role process started in a namespace.
type server struct {
	cmd   *exec.Cmd
	ready map[string]string
	done  chan error // Wait's result
}

// startEcho starts the echo role in ns on addr and waits for it to listen.
// The test's cleanup kills its process group.
func startEcho(t *testing.T, ns *Namespace, addr string) *server {
	t.Helper()
	cmd := roleCommand("echo", addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(cmd); err != nil {
		t.Fatalf("start echo in %s: %v", ns.Name(), err)
	}
	s := &server{cmd: cmd, done: make(chan error, 1)}
	ready, err := readReady(out, 10*time.Second)
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() { s.kill(t) })
	if err != nil {
		t.Fatalf("echo in %s: %v", ns.Name(), err)
	}
	s.ready = ready
	return s
}

// kill SIGKILLs the server's group and waits for it (bounded).
func (s *server) kill(t *testing.T) error {
	t.Helper()
	if err := KillGroup(s.cmd.Process.Pid); err != nil {
		t.Error(err)
	}
	select {
	case err := <-s.done:
		s.done <- err // later callers see it too
		return err
	case <-time.After(10 * time.Second):
		t.Errorf("pid %d did not die within 10 s of SIGKILL", s.cmd.Process.Pid)
		return nil
	}
}

// echo sends line from ns to addr over TCP and returns the reply line.
func echo(ns *Namespace, addr, line string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := ns.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := fmt.Fprintln(c, line); err != nil {
		return "", err
	}
	reply, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(reply), err
}

// waitFor polls cond (a kernel or process state) until it holds or the
// deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
