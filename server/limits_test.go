package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestServeReadyzFollowsAMajority: /readyz is 200 only while a majority
// of the acceptors (this node counted) answered a ping within the
// readiness window (contract section 3). With n2 and n3 stopped (SIGSTOP:
// the kernel keeps their TCP connections ESTABLISHED, as it does across a
// partition that drops packets silently), every /readyz sent to n1
// readyzCutBound or more after they stopped must answer 503 (no pong of
// theirs can echo a ping sent after they stopped, so this holds however
// loaded the machine; the window was 1.5 s before), a grant through it
// must fail for want of a majority, and /readyz must be 200 again once
// they run again.
func TestServeReadyzFollowsAMajority(t *testing.T) {
	c := startServeCluster(t, 3, "-max-lease-ms", "2000", "-quorum-timeout-ms", "1000")
	c.poll(10*time.Second, "n1 hearing every acceptor", func() bool {
		_, body := c.get(0, "/readyz")
		return strings.Contains(body, `"acceptors_reachable":3`)
	}, 0)
	c.pause(1)
	c.pause(2)
	defer c.resume(1)
	defer c.resume(2)
	paused := time.Now() // both are stopped by now
	var body string
	c.poll(10*time.Second, "n1's /readyz answering 503 with n2 and n3 paused", func() bool {
		var s int
		sent := time.Since(paused)
		s, body = c.get(0, "/readyz")
		if s == http.StatusOK && sent >= readyzCutBound {
			t.Fatalf("/readyz sent %v after a majority stopped answering said 200, beyond the bound of %v: %s", sent.Round(time.Millisecond), readyzCutBound, body)
		}
		return s == http.StatusServiceUnavailable
	}, 0)
	t.Logf("503 %v after the pause: %s", time.Since(paused).Round(time.Millisecond), body)
	if !strings.Contains(body, fmt.Sprintf(`"window_ms":%d`, readyzCutBound.Milliseconds())) {
		t.Errorf("the 503 does not state the %v window: %s", readyzCutBound, body)
	}
	if !strings.Contains(body, `"acceptors_reachable":1`) || !strings.Contains(body, "answered a ping within") {
		t.Errorf("the 503 does not say that only n1 answers: %s", body)
	}
	if status, reply := c.op(0, 0, "grant", lv("ch", "cs1", "lease_ms", 1000)); status == http.StatusOK {
		t.Fatalf("a grant through n1 succeeded with n2 and n3 paused: %v", reply)
	}
	// Still 503 after the failed grant: nothing but an answered ping counts.
	if s, body := c.get(0, "/readyz"); s != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d after the failed grant: %s", s, body)
	}
	c.resume(1)
	resumed := time.Now()
	c.poll(15*time.Second, "n1 ready again with n2 running", func() bool {
		s, _ := c.get(0, "/readyz")
		return s == http.StatusOK
	}, 0)
	t.Logf("200 again %v after n2 resumed (n3 still paused)", time.Since(resumed).Round(time.Millisecond))
	c.resume(2)
}

// readyzCutBound is how soon /readyz must follow a majority cut off: the
// peer transport's default readiness window (docs/service.md).
const readyzCutBound = 500 * time.Millisecond

// TestServeReadyzLeavesOutBootingAcceptors: with n3 dead and n2
// restarted with its default boot wait (3 s), n1 is not ready while n2
// waits, though n2 answers its pings (an acceptor in its boot wait votes
// on nothing, so n1 and n2 are no majority yet), and says why; it is
// ready once n2's boot wait is over, and not before.
func TestServeReadyzLeavesOutBootingAcceptors(t *testing.T) {
	t.Parallel()
	c := startServeCluster(t, 3, "-max-lease-ms", "3000", "-lease-ms", "3000")
	c.waitReady(0, 10*time.Second)
	c.kill(2)
	c.kill(1)
	restarted := time.Now()
	c.start(1)
	c.poll(10*time.Second, "n1's /readyz naming n2 as answering from its boot wait", func() bool {
		s, body := c.get(0, "/readyz")
		return s == http.StatusServiceUnavailable && strings.Contains(body, "1 more answered from their boot wait")
	}, 0, 1)
	c.waitReady(0, 10*time.Second)
	if ready := time.Since(restarted); ready < 3*time.Second {
		t.Fatalf("n1 ready %v after n2 restarted, inside n2's 3 s boot wait", ready.Round(time.Millisecond))
	}
	if status, reply := c.op(0, 0, "grant", lv("ch", "cs1", "lease_ms", 1000)); status != http.StatusOK {
		t.Fatalf("n1 ready but a grant through it answered %d %v", status, reply)
	}
}

// TestServeClientConnLimit: one client's connections cannot take a
// member's descriptors (-max-client-conns). 24 idle keep-alive
// connections against a limit of 8: each new one takes the place of the
// longest-idle one once that has been idle for idleGrace (until then a
// new one is answered 503 with Retry-After, and the client dials again),
// and the node's descriptors stay within the limit. 8 connections stuck
// in a request (headers never finished, a byte now and then) hold no
// slot: a fresh client is served at once, long before their header
// timeout, and they are closed.
func TestServeClientConnLimit(t *testing.T) {
	const limit, flood = 8, 24
	c := startServeCluster(t, 1, "-max-client-conns", fmt.Sprint(limit))
	pid := c.members[0].cmd.Process.Pid
	c.client.CloseIdleConnections()
	base := countFDs(t, pid)
	addr := c.members[0].clientAddr
	var idle []net.Conn
	defer func() {
		for _, conn := range idle {
			conn.Close()
		}
	}()
	answered503 := 0
	for i := range flood {
		c.poll(5*time.Second, fmt.Sprintf("idle connection %d served", i), func() bool {
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return false
			}
			if err := healthz(conn); err != nil {
				conn.Close() // 503: every idle one is younger than idleGrace
				if strings.Contains(err.Error(), "status 503") {
					answered503++
				}
				return false
			}
			idle = append(idle, conn)
			return true
		}, 0)
	}
	if answered503 == 0 {
		t.Error("no connection beyond the limit was answered 503 while every idle one was younger than idleGrace")
	}
	c.poll(5*time.Second, "the node holding no more descriptors than the limit", func() bool { return countFDs(t, pid) <= base+limit+2 }, 0)
	t.Logf("descriptors: %d before, %d with %d idle connections opened (limit %d); %d answered 503", base, countFDs(t, pid), flood, limit, answered503)
	for _, conn := range idle[:flood-limit] {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); err == nil {
			t.Fatal("an idle connection beyond the limit is still open")
		}
	}

	// Now 8 connections each in a request whose headers never end.
	for _, conn := range idle {
		conn.Close()
	}
	idle = nil
	c.poll(5*time.Second, "the node closing the idle connections", func() bool { return countFDs(t, pid) <= base }, 0)
	var stuck []net.Conn
	defer func() {
		for _, conn := range stuck {
			conn.Close()
		}
	}()
	for range limit {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		stuck = append(stuck, conn)
		fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	}
	began := time.Now()
	c.poll(2*time.Second, "a fresh client served while 8 unfinished requests are open", func() bool {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return false
		}
		defer conn.Close()
		return healthz(conn) == nil
	}, 0)
	t.Logf("a fresh client served %v after the 8 stuck requests began (their header timeout: 5 s)", time.Since(began).Round(time.Millisecond))
	stuck[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := stuck[0].Read(make([]byte, 1)); err == nil {
		t.Fatal("the oldest stuck request's connection was not closed for the fresh client")
	}
	if fds := countFDs(t, pid); fds > base+limit+overflowFor(limit)+2 {
		t.Fatalf("the node holds %d descriptors, %d at the start", fds, base)
	}
}

// healthz sends GET /healthz on conn, keeping it alive, and reads the 200.
func healthz(conn net.Conn) error {
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	defer conn.SetDeadline(time.Time{})
	if _, err := fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// countFDs is the number of open descriptors of process pid.
func countFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestServeIdleRestartGetsReady: a member restarted with the default
// boot wait on a cluster nobody uses becomes ready once its boot wait is
// over: its recovery starts from the core's first wake-up, not from a
// first request or peer message that an idle cluster never sends (and
// that a router waiting for /readyz would never send either).
func TestServeIdleRestartGetsReady(t *testing.T) {
	const bootWaitMs = 1000
	c := startServeCluster(t, 3, "-max-lease-ms", fmt.Sprint(bootWaitMs))
	c.kill(1)
	c.start(1) // the default boot wait: -max-lease-ms
	restarted := time.Now()
	c.waitReady(1, 10*time.Second)
	took := time.Since(restarted)
	if took < bootWaitMs*time.Millisecond {
		t.Errorf("ready %v after the restart, inside its %d ms boot wait", took, bootWaitMs)
	}
	t.Logf("ready %v after the restart (boot wait %d ms) with no request sent", took.Round(time.Millisecond), bootWaitMs)
	if log := c.log(1); !strings.Contains(log, "recovery complete") {
		t.Errorf("ready, yet the restarted member's log does not say its recovery completed:\n%s", log)
	}
}
