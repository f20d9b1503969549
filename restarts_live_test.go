package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/lease"
	leasewl "chunklease/workloads/lease"
)

// Fencing across restarts, against real lease-node processes (procs_test.go),
// each history judged by the lease checker with its fencing rules. The
// settings: M = 1 s, restarts with a 1 s boot wait, so L = 250 ms and the
// nodes' wall clocks must agree within 750 ms (lease/doc.go "Fencing
// tokens"). Clock offsets come from the clockfault build.

// mustBeValid fails the test unless the history is valid.
func mustBeValid(t *testing.T, c *procCluster) {
	t.Helper()
	if res := c.judge(); !res.Valid {
		t.Fatalf("the lease checker judged the history invalid: %+v %+v", res.Violations, res.Problems)
	}
}

func grantOf(chunk, server string) map[string]any {
	return map[string]any{"chunk": chunk, "server": server, "lease_ms": 1000}
}

// sequentialRestarts is the schedule under which an earlier core let
// tokens go backwards after two one-at-a-time restarts: with n1's wall clock offset
// by aheadMs, cs1 is granted chunk ch through n1 while n3 is cut off from
// n1 (only n1 and n2 learn its token); then, with n1 | n2 cut, n1
// restarts with the boot wait (its clock offset afterOffsetMs: set right
// or still ahead); after its boot wait the cut heals and n2 restarts
// likewise. It returns cs1's token.
func sequentialRestarts(t *testing.T, c *procCluster, bin string, aheadMs, afterOffsetMs int64) int64 {
	t.Helper()
	for _, id := range c.ids {
		env := []string{}
		if id == "n1" {
			env = append(env, fmt.Sprintf("LEASE_CLOCK_OFFSET_MS=%d", aheadMs))
		}
		c.startNode(id, bin, env...)
	}
	c.cut([]string{"n3"}, []string{"n1"})
	first := c.call(0, "n1", "grant", grantOf("ch", "cs1"))
	t1 := token(t, first)
	c.heal()
	c.cut([]string{"n1"}, []string{"n2"})
	c.restart("n1", bin, fmt.Sprintf("LEASE_CLOCK_OFFSET_MS=%d", afterOffsetMs))
	c.waitBootOver("n1")
	c.heal()
	c.restart("n2", bin)
	c.waitBootOver("n2")
	return t1
}

// grantSomewhere asks each node in turn (a process each, from proc on)
// to grant chunk to server until one answers ok, and returns that reply;
// a refusal's text must say why.
func grantSomewhere(t *testing.T, c *procCluster, proc int, chunk, server string, nodes ...string) map[string]any {
	t.Helper()
	var why []string
	for i, id := range nodes {
		r := c.call(proc+i, id, "grant", grantOf(chunk, server))
		if r != nil && r["type"] == "lease_grant_ok" {
			return r
		}
		why = append(why, fmt.Sprintf("%s: %v", id, r))
	}
	t.Fatalf("no node granted %s to %s: %s", chunk, server, strings.Join(why, "; "))
	return nil
}

// settleTries is how often a test asks a node for a paced grant after a
// burst (grantSomewhere), so that it has a token issued after the load to
// order later tokens against, even where a loaded machine let no grant of
// the burst through.
var settleTries = 10

// TestSequentialRestartsWithAClockAhead runs that schedule three
// ways. Within the bound (n1 500 ms ahead, set right when it restarts)
// and with n1 30 s ahead throughout (its restart floor and n2's recovery
// carry its tokens' time), the next grant to another server gets a larger
// token than cs1's. The negative control is the same schedule beyond the
// bound: n1 30 s ahead, set right at its restart; then nothing remembers
// cs1's token and the checker must find the token going back.
func TestSequentialRestartsWithAClockAhead(t *testing.T) {
	t.Parallel()
	bin := clockfaultNode(t)
	for _, tc := range []struct {
		name                   string
		aheadMs, afterOffsetMs int64
		valid                  bool
	}{
		{"500ms-ahead-set-right", 500, 0, true},
		{"30s-ahead-throughout", 30_000, 30_000, true},
		{"30s-ahead-set-right-beyond-the-bound", 30_000, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newProcCluster(t)
			t1 := sequentialRestarts(t, c, bin, tc.aheadMs, tc.afterOffsetMs)
			nodes := []string{"n3", "n2", "n1"}
			if !tc.valid {
				nodes = []string{"n3"}
			}
			t2 := token(t, grantSomewhere(t, c, 1, "ch", "cs2", nodes...))
			res := c.judge()
			t.Logf("cs1's token %d (n1 %d ms ahead), cs2's after the restarts %d; checker valid=%v", t1, tc.aheadMs, t2, res.Valid)
			if !tc.valid {
				if res.Valid || t2 > t1 || !slices.ContainsFunc(res.Violations, func(v leasewl.Violation) bool { return v.Kind == leasewl.TokenOrder }) {
					t.Fatalf("beyond the bound the token went from %d to %d and the checker found %+v: the control no longer shows the bound",
						t1, t2, res.Violations)
				}
				return
			}
			mustBeValid(t, c)
			if t2 <= t1 {
				t.Fatalf("cs2's token %d is not above cs1's %d", t2, t1)
			}
		})
	}
}

// TestThirtySecondsAheadNamesTheCause: when a node cannot issue a ballot
// above a promise made from a clock 30 s ahead within its quorum timeout,
// its error 11 says so. n1 runs 30 s ahead and grants cs1; once that
// lease is over, a grant of the chunk to cs2 through n3 must climb 30 s
// past n3's own wall clock.
func TestThirtySecondsAheadNamesTheCause(t *testing.T) {
	t.Parallel()
	bin := clockfaultNode(t)
	c := newProcCluster(t)
	c.startNode("n1", bin, "LEASE_CLOCK_OFFSET_MS=30000")
	c.startNode("n2", bin)
	c.startNode("n3", bin)
	token(t, c.call(0, "n1", "grant", grantOf("ch", "cs1")))
	for deadline := time.Now().Add(3 * time.Second); ; { // the property is about time: wait for the lease to end
		r := c.call(1, "n1", "check", map[string]any{"chunk": "ch"})
		if r["expired"] == true || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := c.call(2, "n3", "grant", grantOf("ch", "cs2"))
	text, _ := r["text"].(string)
	if r["type"] != "error" || r["code"] != float64(lease.CodeTemporarilyUnavailable) || !strings.Contains(text, "ahead of this node's wall clock") {
		t.Fatalf("a grant that needs a ballot 30 s ahead answered %v, want error 11 naming the counter ahead of the wall clock", r)
	}
	t.Logf("error text: %s", text)
	mustBeValid(t, c)
}

// TestSequentialRestartsAfterALoadLead: a burst of grants as fast as n1
// takes them pushes its counter ahead of its wall clock, at most by L
// (pacing); the sequential-restart schedule follows, and a grant to another server
// of the chunk with the highest token gets a larger one.
func TestSequentialRestartsAfterALoadLead(t *testing.T) {
	t.Parallel()
	c := newProcCluster(t)
	for _, id := range c.ids {
		c.startNode(id, nodeBin)
	}
	took := c.burst(100, "n1", "cs1", 3000)
	grantSomewhere(t, c, 5000, "settle_n1", "cs1", slices.Repeat([]string{"n1"}, settleTries)...)
	chunk, top, lead := c.highestToken()
	t.Logf("3000 grants through n1 in %v (%.0f a second): the highest token %d (on %s) led the wall clock by %v at its reply (L = %d ms)",
		took, 3000/took.Seconds(), top, chunk, lead, procLeadMs)
	if lead > procLeadMs*time.Millisecond+100*time.Millisecond {
		t.Fatalf("a token led the wall clock by %v, beyond L = %d ms", lead, procLeadMs)
	}
	c.cut([]string{"n1"}, []string{"n2"})
	c.restart("n1", nodeBin)
	c.waitBootOver("n1")
	c.heal()
	c.restart("n2", nodeBin)
	c.waitBootOver("n2")
	r := c.call(1, "n3", "grant", map[string]any{"chunk": chunk, "server": "cs2", "lease_ms": 1000})
	if tok := token(t, r); tok <= top {
		t.Fatalf("cs2's token %d after the restarts is not above %d", tok, top)
	}
	mustBeValid(t, c)
}

// TestWholeClusterRestartAfterLoad: every node takes a burst of grants,
// the whole cluster is killed and restarted with the boot wait (nothing
// remembers a promise), and grants to other servers of the chunks with
// the highest tokens get larger ones.
func TestWholeClusterRestartAfterLoad(t *testing.T) {
	t.Parallel()
	c := newProcCluster(t)
	for _, id := range c.ids {
		c.startNode(id, nodeBin)
	}
	done := make(chan struct{})
	for k, id := range c.ids {
		go func() {
			c.burst(1000+10_000*k, id, "cs1", 1000)
			done <- struct{}{}
		}()
	}
	for range c.ids {
		<-done
	}
	for k, id := range c.ids {
		grantSomewhere(t, c, 50_000+100*k, "settle_"+id, "cs1", slices.Repeat([]string{id}, settleTries)...)
	}
	chunk, top, lead := c.highestToken()
	t.Logf("after 3 x 1000 grants the highest token %d (on %s) led the wall clock by %v", top, chunk, lead)
	for _, id := range c.ids {
		c.kill(id)
	}
	for _, id := range c.ids {
		c.startNode(id, nodeBin, fmt.Sprintf("LEASE_BOOT_WAIT_MS=%d", procBootWaitMs))
	}
	for _, id := range c.ids {
		c.waitBootOver(id)
	}
	granted := 0
	for k, id := range c.ids {
		r := c.call(k+1, id, "grant", map[string]any{"chunk": chunk, "server": fmt.Sprintf("cs%d", k+2), "lease_ms": 1000})
		if r != nil && r["type"] == "lease_grant_ok" && r["primary"] == fmt.Sprintf("cs%d", k+2) {
			granted++
			if tok := token(t, r); tok <= top {
				t.Fatalf("after the whole cluster restarted, %s granted token %d, not above %d", id, tok, top)
			}
		}
	}
	if granted == 0 {
		t.Fatalf("no grant of %s to another server succeeded after the restart: the token order was never put to the test", chunk)
	}
	mustBeValid(t, c)
}

// TestDeadPeerAndARestartServeAfterTheBootWait is an outage of an earlier
// core, which waited for a dead peer's recovery answer: n3
// dies for good and n2 restarts with the boot wait. n1 and n2 are a live
// majority: grants must succeed again within the boot wait plus a second
// of n2's start, without n3. Meanwhile the error says why (n2 in its boot
// wait, n3 silent), and n2's log says it serves with recovery incomplete.
func TestDeadPeerAndARestartServeAfterTheBootWait(t *testing.T) {
	t.Parallel()
	c := newProcCluster(t)
	for _, id := range c.ids {
		c.startNode(id, nodeBin)
	}
	token(t, c.call(0, "n1", "grant", grantOf("ch", "cs1")))
	c.kill("n3")
	restarted := time.Now()
	c.restart("n2", nodeBin)
	var firstErr map[string]any
	var served time.Duration
	for i := 1; time.Since(restarted) < 5*time.Second; i++ {
		r := c.call(i, "n1", "grant", grantOf(fmt.Sprintf("free_%d", i), "cs2"))
		if r != nil && r["type"] == "lease_grant_ok" {
			served = time.Since(restarted)
			break
		}
		if firstErr == nil {
			firstErr = r
		}
	}
	limit := procBootWaitMs*time.Millisecond + time.Second
	t.Logf("granting again %v after n2's restart (boot wait %d ms); the error meanwhile: %v", served, procBootWaitMs, firstErr)
	if served == 0 || served > limit {
		t.Fatalf("n1 and n2 granted again %v after n2's restart, want within %v\nn1:\n%s\nn2:\n%s", served, limit, c.logs["n1"], c.logs["n2"])
	}
	text, _ := firstErr["text"].(string)
	if !strings.Contains(text, "boot wait") || !strings.Contains(text, "n2") || !strings.Contains(text, "n3") {
		t.Errorf("the error during n2's boot wait does not name n2's boot wait and silent n3: %q", text)
	}
	if log := c.logs["n2"].String(); !strings.Contains(log, "recovery incomplete") || !strings.Contains(log, "not from: n3") {
		t.Errorf("n2's log does not say it serves with recovery incomplete, without n3:\n%s", log)
	}
	mustBeValid(t, c)
}

// highestToken finds the largest token any ok grant or renew got, its
// chunk, and how far its time part led the wall clock when the reply
// came (the test's wall clock: every node here runs on the machine's).
func (c *procCluster) highestToken() (string, int64, time.Duration) {
	c.mu.Lock()
	ops := append([]history.Op(nil), c.ops...)
	c.mu.Unlock()
	var chunk string
	var top int64
	var lead time.Duration
	for _, op := range ops {
		var v leasewl.LeaseValue
		if op.Type != history.OK || json.Unmarshal(op.Value, &v) != nil || v.Token == nil {
			continue
		}
		if op.F != leasewl.FRenew && (op.F != leasewl.FGrant || v.Primary == nil || *v.Primary != v.Server) {
			continue
		}
		tok := *v.Token
		at := time.UnixMilli(lease.CounterEpochMs).Add(time.Duration(tok>>lease.LaneBits) * lease.BallotUnit)
		lead = max(lead, at.Sub(c.start.Add(time.Duration(op.Time))))
		if tok > top {
			top, chunk = tok, v.Chunk
		}
	}
	if top == 0 {
		c.t.Fatalf("no ok grant or renew carried a token (%d ops): nothing to order later tokens against", len(ops))
	}
	return chunk, top, lead
}
