package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/fakelease"
)

// syncBuffer is a bytes buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runCLI runs leasectl with args and env, and returns its exit status,
// stdout and stderr.
func runCLI(ctx context.Context, env map[string]string, args ...string) (int, string, string) {
	var out, errOut syncBuffer
	code := run(ctx, args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// step is one invocation and what it must print and return.
type step struct {
	args   string
	code   int
	stdout string // a regular expression for the whole of stdout; "" for nothing
	stderr string // a substring of stderr; "" for nothing
}

func runSteps(t *testing.T, env map[string]string, steps []step) {
	t.Helper()
	for _, s := range steps {
		code, out, errOut := runCLI(context.Background(), env, strings.Fields(s.args)...)
		okOut := (s.stdout == "" && out == "") || (s.stdout != "" && regexp.MustCompile(`\A`+s.stdout+`\n\z`).MatchString(out))
		okErr := (s.stderr == "" && errOut == "") || (s.stderr != "" && strings.Contains(errOut, s.stderr) && strings.Count(errOut, "\n") == 1)
		if code != s.code || !okOut || !okErr {
			t.Errorf("leasectl %s:\n exit %d, want %d\n stdout %q, want /%s/\n stderr %q, want %q", s.args, code, s.code, out, s.stdout, errOut, s.stderr)
		}
	}
}

// TestLeaseCommands: each lease command's line and exit status, over a
// fake cluster on loopback.
func TestLeaseCommands(t *testing.T) {
	f := fakelease.Start(t, fakelease.Options{})
	env := map[string]string{"LEASE_ENDPOINTS": strings.Join(f.Endpoints(), ",")}
	runSteps(t, env, []step{
		{"grant -lease-ms 5000 ch_1 cs1", 0, `granted ch_1 to cs1 token=1001 expires_in_ms=5000`, ""},
		{"grant ch_1 cs2", 1, `held ch_1 by cs1 token=1001 expires_in_ms=(4\d\d\d|5000)`, ""},
		{"renew ch_1 cs1", 0, `renewed ch_1 for cs1 token=1002 expires_in_ms=60000`, ""},
		{"renew ch_1 cs2 -lease-ms 300", 1, "", `lease_renew "ch_1" for "cs2": held by another server at http://127.0.0.1:`},
		{"check ch_1", 0, `check ch_1 primary=cs1 remaining_ms=\d+ expired=false`, ""},
		{"check ch_9", 0, `check ch_9 primary=none remaining_ms=0 expired=true`, ""},
		{"release ch_1 cs1 1001", 0, `released ch_1 for cs1 token=1001`, ""},
		{"check ch_1", 0, `check ch_1 primary=cs1 remaining_ms=\d+ expired=false`, ""},
		{"release ch_1 cs1 1002", 0, `released ch_1 for cs1 token=1002`, ""},
		{"check ch_1", 0, `check ch_1 primary=cs1 remaining_ms=0 expired=true`, ""},
		{"grant ch_2 cs1 -lease-ms 300 -timeout 2s", 0, `granted ch_2 to cs1 token=1003 expires_in_ms=300`, ""},
		{"grant -lease-ms 999999 ch_3 cs1", 1, "", "(400, code 12): lease_ms 999999 is out of range"},
		{"release ch_1 cs1 abc", 2, "", `TOKEN "abc" is not a positive integer`},
		{"release ch_1 cs1 -5", 2, "", "flag provided but not defined: -5"},
		{"grant ch_1", 2, "", "grant takes 2 argument(s) (CHUNK SERVER), got 1 (see leasectl grant -h)"},
		{"grant -lease-ms x ch_1 cs1", 2, "", `invalid value "x" for flag -lease-ms`},
		{"frobnicate", 2, "", `unknown command "frobnicate" (see leasectl -h)`},
		{"", 2, "", "no command given"},
	})
	code, out, _ := runCLI(context.Background(), env, "grant", "my chunk", "cs=1")
	if code != 0 || !strings.HasPrefix(out, `granted "my chunk" to "cs=1" token=`) {
		t.Errorf("names with a space and '=': exit %d, %q; want them quoted", code, out)
	}
}

// TestFailureStatuses: unknown outcomes exit 3, unreachable members 1.
func TestFailureStatuses(t *testing.T) {
	f := fakelease.Start(t, fakelease.Options{})
	env := map[string]string{"LEASE_ENDPOINTS": strings.Join(f.Endpoints(), ",")}
	for i := range 3 {
		f.Node(i).Inject(fakelease.Fault{Op: "lease_grant", Status: 504}, fakelease.Fault{Op: "lease_grant", Status: 504}, fakelease.Fault{Op: "lease_grant", Status: 504})
		f.Node(i).Inject(fakelease.Fault{Op: "lease_renew", Reset: true, Apply: true}, fakelease.Fault{Op: "lease_renew", Status: 503, RetryAfter: "0"}, fakelease.Fault{Op: "lease_renew", Status: 503, RetryAfter: "0"})
	}
	runSteps(t, env, []step{
		{"grant ch_1 cs1", 3, "", "outcome unknown at http://127.0.0.1:"},
		{"renew ch_1 cs1", 3, "", "it may have taken effect"},
	})
	for i := range 3 {
		f.Node(i).Kill()
	}
	runSteps(t, env, []step{
		{"check ch_1 -timeout 1s", 1, "", "unavailable"},
		{"release ch_1 cs1 5", 1, "", "not sent"},
	})
}

// TestEnvironment: ENDPOINTS as scripts/cluster.sh prints it, the token
// from the environment or a file, and the refusals of bad settings.
func TestEnvironment(t *testing.T) {
	f := fakelease.Start(t, fakelease.Options{Token: "t0k3n"})
	list := strings.Join(f.Endpoints(), ",")
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("t0k3n\n"), 0o600)
	wrongFile := filepath.Join(dir, "wrong")
	os.WriteFile(wrongFile, []byte("nope"), 0o600)
	runSteps(t, map[string]string{"ENDPOINTS": list, "LEASE_CLIENT_TOKEN": "t0k3n"}, []step{
		{"check ch_1", 0, `check ch_1 primary=none remaining_ms=0 expired=true`, ""},
		{"check ch_1 -token-file " + tokenFile, 2, "", "both a token file"},
	})
	runSteps(t, map[string]string{"LEASE_ENDPOINTS": list, "LEASE_CLIENT_TOKEN_FILE": tokenFile}, []step{
		{"check ch_1", 0, `check ch_1 primary=none remaining_ms=0 expired=true`, ""},
		{"-token-file " + wrongFile + " check ch_1", 1, "", "unauthorized"},
		{"check -token-file /nonexistent ch_1", 2, "", "token file: open /nonexistent"},
	})
	runSteps(t, map[string]string{}, []step{
		{"check ch_1", 2, "", `no endpoints: give -endpoints`},
		{"-endpoints " + list + " check ch_1", 1, "", "set the cluster's client token"},
		{"-endpoints ftp://x check ch_1", 2, "", "write it as http://HOST:PORT"},
		{"-endpoints " + list + " -ca-file /nonexistent check ch_1", 2, "", "CA file"},
	})
}

// TestMasterCommands: start and stop at one node, status at every node.
func TestMasterCommands(t *testing.T) {
	f := fakelease.Start(t, fakelease.Options{})
	eps := f.Endpoints()
	env := map[string]string{"LEASE_ENDPOINTS": strings.Join(eps, ",")}
	q := regexp.QuoteMeta
	runSteps(t, env, []step{
		{"master start", 2, "", "which node? give -node N (1..3"},
		{"master start -node 4", 2, "", "there are 3 endpoints"},
		{"master elect -node 1", 2, "", `unknown action "elect"`},
		{"master start -node 1", 0, `master started node=` + q(eps[0]), ""},
		{"master status -node " + eps[0], 0, `master status node=` + q(eps[0]) + ` is_master=true master=n1 remaining_ms=\d+ token=[1-9]\d*`, ""},
		{"master status", 0, `master status node=` + q(eps[0]) + ` is_master=true master=n1 remaining_ms=\d+ token=[1-9]\d*\n` +
			`master status node=` + q(eps[1]) + ` is_master=false master=n1 remaining_ms=0\n` +
			`master status node=` + q(eps[2]) + ` is_master=false master=n1 remaining_ms=0`, ""},
		{"master stop -node 1", 0, `master stopped node=` + q(eps[0]), ""},
		{"master status -node 1", 0, `master status node=` + q(eps[0]) + ` is_master=false master=n1 remaining_ms=0`, ""},
	})
	f.Node(2).Kill()
	code, out, errOut := runCLI(context.Background(), env, "master", "status")
	if code != 1 || strings.Count(out, "\n") != 2 || !strings.Contains(errOut, eps[2]) {
		t.Errorf("status with n3 down: exit %d, stdout %q, stderr %q; want two lines, n3's error, exit 1", code, out, errOut)
	}
}

// TestHelp: -h for the program and for each command prints its usage on
// stdout and exits 0.
func TestHelp(t *testing.T) {
	code, out, errOut := runCLI(context.Background(), nil, "-h")
	if code != 0 || !strings.HasPrefix(out, "leasectl: take, hold") || errOut != "" {
		t.Errorf("leasectl -h: exit %d, %q", code, out)
	}
	for cmd := range commands {
		code, out, errOut := runCLI(context.Background(), nil, cmd, "-h")
		if code != 0 || !strings.HasPrefix(out, "Usage: leasectl [flags] "+cmd) || errOut != "" || !strings.Contains(usage, "leasectl [flags] "+cmd) {
			t.Errorf("leasectl %s -h: exit %d, %q, %q", cmd, code, out, errOut)
		}
	}
}

// keepCLI runs keep in the background inside a synctest bubble.
func keepCLI(t *testing.T, f *fakelease.Cluster, args ...string) (cancel func(), result func() (int, string, string)) {
	testDial = f.DialContext()
	t.Cleanup(func() { testDial = nil })
	ctx, cancel := context.WithCancel(context.Background())
	env := map[string]string{"LEASE_ENDPOINTS": strings.Join(f.Endpoints(), ",")}
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, append([]string{"keep"}, args...), func(k string) string { return env[k] }, &out, &errOut)
	}()
	return cancel, func() (int, string, string) { code := <-done; return code, out.String(), errOut.String() }
}

// TestKeepReleasesOnInterrupt: keep prints the grant and each renewal,
// and on interrupt gives the lease back with the latest token and exits 0.
func TestKeepReleasesOnInterrupt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakelease.Start(t, fakelease.Options{Network: fakelease.Pipe})
		interrupt, result := keepCLI(t, f, "-lease-ms", "300", "ch_1", "cs1")
		time.Sleep(time.Second)
		interrupt()
		code, out, errOut := result()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		renews := f.CallsOf("lease_renew")
		last := renews[len(renews)-1]
		if code != 0 || errOut != "" || len(lines) != len(renews)+2 || len(renews) < 9 {
			t.Fatalf("exit %d, stderr %q, %d lines for %d renewals:\n%s", code, errOut, len(lines), len(renews), out)
		}
		if !regexp.MustCompile(`^granted ch_1 to cs1 token=1001 expires_in_ms=300$`).MatchString(lines[0]) ||
			!regexp.MustCompile(`^renewed ch_1 for cs1 token=\d+ expires_in_ms=300$`).MatchString(lines[1]) ||
			lines[len(lines)-1] != "released ch_1 for cs1 token="+strconv.FormatInt(last.Token, 10) || f.Holder("ch_1").Live {
			t.Fatalf("lines:\n%s\nwant granted, renewed..., released with token %d; holder %+v", out, last.Token, f.Holder("ch_1"))
		}
	})
}

// TestKeepLoss: a lease taken by another server ends keep with exit 1
// and a line on stderr saying so.
func TestKeepLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakelease.Start(t, fakelease.Options{Network: fakelease.Pipe})
		_, result := keepCLI(t, f, "ch_1", "cs1", "-lease-ms", "300")
		time.Sleep(250 * time.Millisecond)
		f.Steal("ch_1", "cs2", 1000)
		code, out, errOut := result()
		if code != 1 || !strings.HasPrefix(out, "granted ch_1 to cs1") || !strings.Contains(errOut, "lease lost") || !strings.Contains(errOut, "held by cs2") || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and the loss", code, out, errOut)
		}
	})
}

// TestKeepHeld: keep on a chunk another server holds exits 1 at once.
func TestKeepHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakelease.Start(t, fakelease.Options{Network: fakelease.Pipe})
		f.Steal("ch_1", "cs2", 5000)
		_, result := keepCLI(t, f, "ch_1", "cs1")
		code, out, errOut := result()
		if code != 1 || out != "" || !strings.Contains(errOut, "held by cs2") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 1, held by cs2", code, out, errOut)
		}
	})
}
