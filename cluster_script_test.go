package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClusterScript runs scripts/cluster.sh as the README does: up prints
// the endpoints on its last line with every member ready, a second up
// refuses, pids lists live processes, down stops exactly those.
func TestClusterScript(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	script := func(args ...string) (string, int) {
		cmd := exec.Command("scripts/cluster.sh", args...)
		cmd.Env = append(os.Environ(), "CLUSTER_STATE_DIR="+state)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	t.Cleanup(func() { killRecorded(t, filepath.Join(state, "pids")) })
	out, code := script("up", "3", "-max-lease-ms", "5000")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if code != 0 || !strings.HasPrefix(last, "ENDPOINTS=") || !strings.Contains(out, "-boot-wait-ms 0") {
		t.Fatalf("up exited %d; want 0, the boot wait stated and ENDPOINTS= last:\n%s", code, out)
	}
	endpoints := strings.Split(strings.TrimPrefix(last, "ENDPOINTS="), ",")
	if len(endpoints) != 3 {
		t.Fatalf("%d endpoints, want 3: %s", len(endpoints), last)
	}
	for _, e := range endpoints {
		resp, err := http.Get(e + "/readyz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s/readyz after up: %v %v", e, resp, err)
		}
		resp.Body.Close()
	}
	if out, code := script("up"); code != 1 || !strings.Contains(out, "already running") {
		t.Fatalf("a second up exited %d, want 1 saying a cluster runs:\n%s", code, out)
	}
	out, _ = script("pids")
	pids := parsePids(t, out)
	if len(pids) != 3 {
		t.Fatalf("pids printed %q, want 3 lines of id pid", out)
	}
	for id, pid := range pids {
		if syscall.Kill(pid, 0) != nil {
			t.Fatalf("%s's pid %d is not running", id, pid)
		}
	}
	if out, code := script("down"); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("down exited %d:\n%s", code, out)
	}
	for id, pid := range pids {
		if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			t.Fatalf("%s (pid %d) still runs after down", id, pid)
		}
	}
}

func parsePids(t *testing.T, out string) map[string]int {
	pids := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			t.Fatalf("pids line %q is not: id pid", sc.Text())
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatal(err)
		}
		pids[f[0]] = pid
	}
	return pids
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

// killRecorded SIGKILLs what a failed test left running, by the PIDs the
// script recorded.
func killRecorded(t *testing.T, pidfile string) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return
	}
	for _, pid := range parsePids(t, string(b)) {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil && !isZombie(pid); {
				time.Sleep(10 * time.Millisecond) // polling an external process, with a deadline
			}
		}
	}
}
