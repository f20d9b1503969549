package main

import (
	"bufio"
	"fmt"
	"io"
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
	script := clusterScript(t)
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
	pids, dead := parsePids(t, out)
	if len(pids) != 3 || len(dead) != 0 {
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

// clusterScript runs scripts/cluster.sh with a state directory of the
// test's own, and kills what the test leaves running.
func clusterScript(t *testing.T) func(args ...string) (string, int) {
	state := t.TempDir()
	t.Cleanup(func() { killRecorded(t, filepath.Join(state, "pids")) })
	return func(args ...string) (string, int) {
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
}

// parsePids reads "id pid" lines (and "id pid dead", which pids prints
// for a member that is not running): every member's PID, and the dead.
func parsePids(t *testing.T, out string) (pids map[string]int, dead map[string]bool) {
	pids, dead = map[string]int{}, map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 && (len(f) != 3 || f[2] != "dead") {
			t.Fatalf("pids line %q is neither id pid nor id pid dead", sc.Text())
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatal(err)
		}
		pids[f[0]] = pid
		if len(f) == 3 {
			dead[f[0]] = true
		}
	}
	return pids, dead
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
	pids, _ := parsePids(t, string(b))
	for _, pid := range pids {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil && !isZombie(pid); {
				time.Sleep(10 * time.Millisecond) // polling an external process, with a deadline
			}
		}
	}
}

// TestClusterRestartWithAMajorityDown: three members, n1 and n3 killed;
// `cluster.sh restart n1` must make n1 ready and granting within its boot
// wait plus 2 s while n3 stays down, since n1 and n2 are a majority
// (lease/doc.go "What readiness waits for"; before, n1 waited for n3's
// high-water mark and never got ready). pids marks the killed members
// dead.
func TestClusterRestartWithAMajorityDown(t *testing.T) {
	t.Parallel()
	const bootWaitMs = 2000
	script := clusterScript(t)
	out, code := script("up", "3", "-max-lease-ms", strconv.Itoa(bootWaitMs))
	if code != 0 {
		t.Fatalf("up exited %d:\n%s", code, out)
	}
	endpoints := strings.Split(out[strings.LastIndex(out, "ENDPOINTS=")+len("ENDPOINTS="):], ",")
	for i := range endpoints {
		endpoints[i] = strings.TrimSpace(endpoints[i])
	}
	// A lease first, so that the survivor has a high-water mark to teach.
	if status, body := postGrant(t, endpoints[1], "ch_1", "cs1"); status != http.StatusOK {
		t.Fatalf("grant through n2: %d %s", status, body)
	}
	out, _ = script("pids")
	pids, _ := parsePids(t, out)
	for _, id := range []string{"n1", "n3"} {
		killAndWait(t, id, pids[id])
	}
	out, _ = script("pids")
	if _, dead := parsePids(t, out); !dead["n1"] || !dead["n3"] || dead["n2"] {
		t.Fatalf("pids with n1 and n3 killed printed %q, want them marked dead and n2 not", out)
	}
	start := time.Now()
	if out, code := script("restart", "n1"); code != 0 {
		t.Fatalf("restart n1 with n3 down exited %d:\n%s", code, out)
	}
	ready := time.Since(start)
	status, body := postGrant(t, endpoints[0], "ch_2", "cs2")
	granted := time.Since(start)
	if status != http.StatusOK || !strings.Contains(body, `"primary":"cs2"`) {
		t.Fatalf("n1 ready, but a grant through it answered %d %s", status, body)
	}
	t.Logf("n1 ready %v and granting %v after the restart began (boot wait %d ms), n3 down", ready.Round(time.Millisecond), granted.Round(time.Millisecond), bootWaitMs)
	if limit := bootWaitMs*time.Millisecond + 2*time.Second; granted > limit {
		t.Errorf("n1 granted %v after the restart began, beyond its boot wait plus 2 s (%v)", granted.Round(time.Millisecond), limit)
	}
	if out, _ := script("pids"); !strings.Contains(out, "n3") || !strings.Contains(out, "dead") {
		t.Fatalf("pids after the restart printed %q, want n3 still dead", out)
	}
}

// postGrant asks endpoint to grant chunk to server for 1 s.
func postGrant(t *testing.T, endpoint, chunk, server string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"chunk_handle":%q,"server":%q,"lease_ms":1000}`, chunk, server)
	resp, err := http.Post(endpoint+"/v1/lease_grant", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("grant through %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// killAndWait SIGKILLs a member by PID and waits until it is gone.
func killAndWait(t *testing.T, id string, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s (pid %d): %v", id, pid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil && !isZombie(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs 10 s after SIGKILL", id, pid)
		}
		time.Sleep(10 * time.Millisecond) // polling an external process, with a deadline
	}
}
