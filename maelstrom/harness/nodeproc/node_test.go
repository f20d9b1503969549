//go:build linux

package nodeproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shell starts /bin/sh -c script for every launch.
func shell(script string) Launcher {
	return func(id string, env []string) (Proc, error) {
		return StartExec(Command{Bin: "/bin/sh", Args: []string{"-c", script}, Env: env})
	}
}

// start supervises a node running script; failures arrive on the channel.
func start(t *testing.T, script string) (*Node, chan error) {
	t.Helper()
	fails := make(chan error, 4)
	n, err := Start("n1", Config{Launch: shell(script), LogPath: filepath.Join(t.TempDir(), "n1.log"),
		Console: func(string) {}, Fail: func(err error) { fails <- err }}, []string{"NODE_ENV_TEST=yes"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n, fails
}

// procState is the state letter of /proc/<pid>/stat, "" once the
// process is gone (reaped).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

// waitFor polls an external process's state with a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stderrLine waits for the program to print a line with prefix on stderr
// and returns the rest.
func stderrLine(t *testing.T, inc *Incarnation, prefix string) string {
	t.Helper()
	var got string
	waitFor(t, "stderr line "+prefix, func() bool {
		for _, l := range inc.StderrTail() {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				got = rest
				return true
			}
		}
		return false
	})
	return got
}

func TestEarlyExitIsReportedWithItsTails(t *testing.T) {
	n, fails := start(t, `echo "env $NODE_ENV_TEST" >&2; echo to-stdout; exit 3`)
	var exit *ExitError
	if err := <-fails; !errors.As(err, &exit) || exit.Status != "exit status 3" || exit.Node != "n1" {
		t.Fatalf("failure %v, want an ExitError with exit status 3", err)
	}
	if strings.Join(exit.Stderr, "|") != "env yes" || strings.Join(exit.Stdout, "|") != "to-stdout" {
		t.Errorf("tails: stderr %q, stdout %q", exit.Stderr, exit.Stdout)
	}
	if !strings.Contains(exit.Error(), `"env yes"`) || !strings.Contains(exit.Error(), n.LogPath()) {
		t.Errorf("diagnostic lacks the quoted tail or the log path:\n%v", exit)
	}
	log, _ := os.ReadFile(n.LogPath())
	if string(log) != "env yes\nto-stdout\n" && string(log) != "to-stdout\nenv yes\n" {
		t.Errorf("log %q, want both lines", log)
	}
	if !n.Down() {
		t.Error("the node is not down after its program exited")
	}
}

func TestKillIsExpectedAndRestartStartsAgain(t *testing.T) {
	n, fails := start(t, `echo "pid $$" >&2; exec sleep 60`)
	first := n.Current()
	pid, _ := strconv.Atoi(stderrLine(t, first, "pid "))
	if pid != first.Proc().PID() {
		t.Fatalf("program reports pid %d, Proc says %d", pid, first.Proc().PID())
	}
	if !n.Kill() || n.Kill() {
		t.Fatal("Kill: want true for a running program, then false")
	}
	inc, err := n.Restart(nil)
	if err != nil {
		t.Fatal(err)
	}
	if procState(pid) != "" {
		t.Errorf("the killed program %d is still there (state %s) after Restart", pid, procState(pid))
	}
	second, _ := strconv.Atoi(stderrLine(t, inc, "pid "))
	if second == pid || n.Down() || len(n.Incarnations()) != 2 {
		t.Errorf("restart: pid %d (first %d), down %v, %d incarnations", second, pid, n.Down(), len(n.Incarnations()))
	}
	n.KillAll()
	if procState(second) != "" {
		t.Errorf("program %d survived KillAll", second)
	}
	select {
	case err := <-fails:
		t.Errorf("a kill was reported as a failure: %v", err)
	default:
	}
}

func TestPauseAndResumeTheProcessGroup(t *testing.T) {
	n, _ := start(t, `sleep 60 & echo "child $!" >&2; wait`)
	child, _ := strconv.Atoi(stderrLine(t, n.Current(), "child "))
	before := time.Now()
	if !n.Pause() || n.Pause() {
		t.Fatal("Pause: want true, then false while paused")
	}
	waitFor(t, "the child stopped", func() bool { return procState(child) == "T" })
	if !n.Paused() || !n.PausedSince(before) {
		t.Error("Paused or PausedSince false while paused")
	}
	if !n.Resume(time.Now()) || n.Resume(time.Now()) {
		t.Fatal("Resume: want true, then false")
	}
	waitFor(t, "the child running", func() bool { return procState(child) == "S" || procState(child) == "R" })
	if n.Paused() || !n.PausedSince(before) || n.PausedSince(time.Now()) {
		t.Error("after resume: Paused true, or PausedSince wrong")
	}
	n.KillAll()
	waitFor(t, "the child killed with its group", func() bool { s := procState(child); return s == "" || s == "Z" })
}

// TestKillEndsAPause: a program killed while paused is resumed by the kill
// (SIGCONT before SIGKILL) and may answer what it held as it dies, so
// PausedSince counts the kill as the pause's end; a kill of a running
// program ends no pause.
func TestKillEndsAPause(t *testing.T) {
	n, _ := start(t, `exec sleep 60`)
	if !n.Pause() {
		t.Fatal("Pause: want true")
	}
	opened := time.Now()         // a client opened during the pause
	time.Sleep(time.Millisecond) // so the two times differ
	if !n.Kill() || n.Paused() || !n.PausedSince(opened) {
		t.Fatalf("after killing the paused program: Paused %v, PausedSince(during the pause) %v; want false, true", n.Paused(), n.PausedSince(opened))
	}
	if _, err := n.Restart(nil); err != nil {
		t.Fatal(err)
	}
	later := time.Now()
	time.Sleep(time.Millisecond) // so the two times differ
	if !n.Kill() || n.PausedSince(later) {
		t.Fatal("a kill of a running program counted as the end of a pause")
	}
	n.KillAll()
}

func TestCanonicalBinErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for bin, want := range map[string]string{
		filepath.Join(dir, "missing"): "no such file",
		dir:                           "is a directory",
		plain:                         "not executable",
	} {
		if _, err := CanonicalBin(bin); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CanonicalBin(%s) = %v, want %q", bin, err, want)
		}
	}
}
