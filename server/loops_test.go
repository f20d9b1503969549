package server

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeMembersWithDifferentLoops: members that run 1, 2 and 3 loops
// form one cluster (each routes a peer message by its own count):
// grants, renewals, checks and releases of many chunks through every
// member; then n1 restarts with 2 loops and the default boot wait,
// recovers its ballot floor from the others' cores (every core of n2 and
// n3 answers its sync), and serves again with larger tokens. The history
// is judged by the lease checker.
func TestServeMembersWithDifferentLoops(t *testing.T) {
	t.Parallel()
	loops := []string{"1", "2", "3"}
	c := newServeCluster(t, 3, "-max-lease-ms", "2000", "-lease-ms", "2000")
	for i := range c.members {
		c.start(i, "-boot-wait-ms", "0", "-loops", loops[i])
	}
	for i := range c.members {
		c.waitReady(i, 15*time.Second)
		if want := fmt.Sprintf(", %s loops,", loops[i]); !strings.Contains(c.log(i), want) {
			t.Fatalf("%s's start line does not say %q:\n%s", c.members[i].id, want, c.log(i))
		}
	}
	const chunks = 12
	round := func(proc int) {
		for k := range chunks {
			chunk, server := fmt.Sprintf("ch_%d", k), fmt.Sprintf("cs%d", k%4)
			status, g := c.op(proc, k%3, "grant", lv(chunk, server, "lease_ms", 2000))
			wantStatus(t, "grant "+chunk, status, 200, g)
			status, r := c.op(proc, (k+1)%3, "renew", lv(chunk, server, "lease_ms", 2000))
			wantStatus(t, "renew "+chunk, status, 200, r)
			if status, ck := c.op(proc, (k+2)%3, "check", lv(chunk, "")); status != 200 || ck["primary"] != server {
				t.Fatalf("check of %s via %s answered %d %v, want %s", chunk, c.members[(k+2)%3].id, status, ck, server)
			}
			if k%2 == 0 {
				status, rel := c.op(proc, (k+2)%3, "release", lv(chunk, server, "token", tokenOf(t, r)))
				wantStatus(t, "release "+chunk, status, 200, rel)
			}
		}
	}
	round(0)
	c.kill(0)
	c.start(0, "-loops", "2") // the default boot wait: a restart
	c.waitReady(0, 20*time.Second)
	if !regexp.MustCompile(`recovery complete: high-water marks from n2, n3`).MatchString(c.log(0)) {
		t.Fatalf("n1 did not log its recovery from both peers' cores:\n%s", c.log(0))
	}
	round(1)
	c.hist.Judge()
}
