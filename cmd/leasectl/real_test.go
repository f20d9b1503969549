package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The commands against real members: set CHUNKLEASE_TEST_ENDPOINTS to
// the client URLs of a running cluster (loopback only), as
// scripts/run_tests.sh does with scripts/cluster.sh up; without it these
// tests are skipped (the fake cluster's tests above cover the same
// commands). Tokens are the members' own, so the lines are matched by
// pattern and the tokens compared with each other.

// realEnv is the environment of a leasectl run against the members
// under test, or a skip.
func realEnv(t *testing.T) map[string]string {
	t.Helper()
	list := os.Getenv("CHUNKLEASE_TEST_ENDPOINTS")
	if list == "" {
		t.Skip("CHUNKLEASE_TEST_ENDPOINTS is not set (scripts/run_tests.sh sets it to a cluster of real members)")
	}
	for _, e := range strings.Split(list, ",") {
		u, err := url.Parse(e)
		if ip := net.ParseIP(u.Hostname()); err != nil || (u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback())) {
			t.Fatalf("CHUNKLEASE_TEST_ENDPOINTS: %s is not a loopback address; the tests only talk to 127.0.0.0/8 and ::1", e)
		}
	}
	env := map[string]string{"LEASE_ENDPOINTS": list}
	for _, k := range []string{"LEASE_CLIENT_TOKEN", "LEASE_CA_FILE"} {
		env[k] = os.Getenv(k)
	}
	return env
}

// expect runs leasectl and checks its exit status and its one line (a
// regular expression with groups); it returns the groups.
func expect(t *testing.T, env map[string]string, code int, pattern string, args ...string) []string {
	t.Helper()
	got, out, errOut := runCLI(context.Background(), env, args...)
	m := regexp.MustCompile(`\A` + pattern + `\n\z`).FindStringSubmatch(out)
	if got != code || m == nil {
		t.Fatalf("leasectl %s: exit %d (want %d), stdout %q (want /%s/), stderr %q", strings.Join(args, " "), got, code, out, pattern, errOut)
	}
	return m[1:]
}

func token(t *testing.T, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("token %q: %v", s, err)
	}
	return v
}

// TestRealMembersLeaseCommands: grant, the holder named to another
// server, a renew by that server refused (exit 1), check, release by the
// token, then the chunk granted to the other server with a larger token;
// master status of every member.
func TestRealMembersLeaseCommands(t *testing.T) {
	env := realEnv(t)
	ch := fmt.Sprintf("ctl_%d", time.Now().UnixNano())
	g := token(t, expect(t, env, 0, `granted `+ch+` to cs1 token=(\d+) expires_in_ms=\d+`, "grant", "-lease-ms", "5000", ch, "cs1")[0])
	expect(t, env, 1, `held `+ch+` by cs1 token=`+strconv.FormatInt(g, 10)+` expires_in_ms=\d+`, "grant", ch, "cs2")
	if code, out, errOut := runCLI(context.Background(), env, "renew", ch, "cs2"); code != 1 || out != "" || !strings.Contains(errOut, "held by another server") {
		t.Fatalf("renew by cs2: exit %d, %q, %q; want 1 and held", code, out, errOut)
	}
	expect(t, env, 0, `check `+ch+` primary=cs1 remaining_ms=\d+ expired=false`, "check", ch)
	expect(t, env, 0, `released `+ch+` for cs1 token=`+strconv.FormatInt(g, 10), "release", ch, "cs1", strconv.FormatInt(g, 10))
	g2 := token(t, expect(t, env, 0, `granted `+ch+` to cs2 token=(\d+) expires_in_ms=\d+`, "grant", "-lease-ms", "300", ch, "cs2")[0])
	if g2 <= g {
		t.Errorf("the grant after the release has token %d, not above %d", g2, g)
	}
	n := len(strings.Split(env["LEASE_ENDPOINTS"], ","))
	expect(t, env, 0, strings.Repeat(`master status node=\S+ is_master=(?:true master=\S* remaining_ms=\d+ token=[1-9]\d*|false master=\S* remaining_ms=\d+)\n`, n-1)+
		`master status node=\S+ is_master=(?:true master=\S* remaining_ms=\d+ token=[1-9]\d*|false master=\S* remaining_ms=\d+)`, "master", "status")
}

// TestRealMembersKeep: keep holds a 300 ms lease, renewing, until
// interrupted, then gives it back with the latest token and exits 0; the
// chunk is free at once, or within one lease when a renewal's outcome
// stayed unknown (an instance the keep never saw runs out by itself).
func TestRealMembersKeep(t *testing.T) {
	env := realEnv(t)
	ch := fmt.Sprintf("keep_%d", time.Now().UnixNano())
	ctx, interrupt := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"keep", "-lease-ms", "300", ch, "cs1"}, func(k string) string { return env[k] }, &out, &errOut)
	}()
	// Hold it for five renewals (polling a real process's output, with a deadline).
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "renewed ") < 5 {
		if time.Now().After(deadline) {
			interrupt()
			t.Fatalf("keep made fewer than 5 renewals in 10 s: stdout %q, stderr %q", out.String(), errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	interrupt()
	code := <-done
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	last := regexp.MustCompile(`^renewed ` + ch + ` for cs1 token=(\d+) expires_in_ms=\d+$`).FindStringSubmatch(lines[len(lines)-2])
	if code != 0 || errOut.String() != "" || !strings.HasPrefix(lines[0], "granted "+ch+" to cs1 token=") || last == nil ||
		lines[len(lines)-1] != "released "+ch+" for cs1 token="+last[1] {
		t.Fatalf("keep: exit %d, stderr %q, stdout:\n%s\nwant granted, renewed..., released with the last renewal's token", code, errOut.String(), out.String())
	}
	free := regexp.MustCompile(`^check ` + ch + ` primary=cs1 remaining_ms=0 expired=true\n$`)
	deadline = time.Now().Add(time.Second) // one 300 ms lease and the drift margin, with room
	for {
		_, got, _ := runCLI(context.Background(), env, "check", ch)
		if free.MatchString(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("check after keep released: %q; want free within one lease", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
