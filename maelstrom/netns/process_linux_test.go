package netns

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procState is the state letter of pid in /proc ('T' stopped, 'S'
// sleeping, ...), or 0 when it is gone.
func procState(pid int) byte {
	st, err := readProcStat(pid)
	if err != nil {
		return 0
	}
	return st.state
}

// TestProcessStopContKillRestart: a program started in a node's
// namespace is signalled by the pid Start gave: SIGSTOP stops it (a
// request sent meanwhile is answered only after SIGCONT), SIGKILL ends
// it, and a program started again in the same namespace takes over the
// same address.
func TestProcessStopContKillRestart(t *testing.T) {
	lab := newLab(t, 1)
	n1 := lab.Node("n1")
	addr := n1.Addr().String() + ":7000"
	s := startEcho(t, n1, addr)
	pid := s.cmd.Process.Pid
	if reply, err := echo(lab.Client(), addr, "up", 5*time.Second); err != nil || reply != "pid="+strconv.Itoa(pid)+" up" {
		t.Fatalf("before: %q, %v", reply, err)
	}

	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server stopped", 5*time.Second, func() bool { return procState(pid) == 'T' })
	c, err := lab.Client().DialContext(t.Context(), "tcp", addr) // the kernel still accepts
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("while stopped\n")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := c.Read(make([]byte, 64)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a stopped server answered: %d bytes, %v", n, err)
	}
	if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "while stopped") {
		t.Fatalf("after SIGCONT: %q, %v", buf[:n], err)
	}

	err = s.kill(t)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("after SIGKILL, Wait says %v", err)
	}
	if _, err := echo(lab.Client(), addr, "gone", time.Second); err == nil {
		t.Fatal("a killed server answered")
	}

	again := startEcho(t, n1, addr)
	if again.ready["netns"] != s.ready["netns"] {
		t.Errorf("restarted in namespace %s, first ran in %s", again.ready["netns"], s.ready["netns"])
	}
	want := "pid=" + strconv.Itoa(again.cmd.Process.Pid) + " back"
	if reply, err := echo(lab.Client(), addr, "back", 5*time.Second); err != nil || reply != want {
		t.Fatalf("after restart: %q, %v; want %q", reply, err, want)
	}
}
