package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"chunklease/client"
)

// TestServeRollingRestartKeepsASession: three members, each restarted in
// turn as an operator does it (SIGTERM, start with the default boot
// wait, wait for /readyz, next), twice over, while a client.Session
// holds a 2 s lease with the client's defaults. With two members up at
// every instant the Session must never lose its lease.
func TestServeRollingRestartKeepsASession(t *testing.T) {
	t.Parallel()
	rollingSession(t, rolling{leaseMs: 2000, rounds: 2})
}

// TestServeRollingRestartKeepsASessionFromAStandby: the same while a
// standby asks for the chunk every 5 ms through the members in turn
// (lease_grant, a 409 naming the holder each time): the Session keeps
// its lease and the standby is never granted the chunk. Before the
// holder went first at a member (lease/proposer.go holderFirst), the
// Session lost its lease in the first round of restarts in every run
// (lease/rolling_test.go models the same in simulated time).
func TestServeRollingRestartKeepsASessionFromAStandby(t *testing.T) {
	t.Parallel()
	rollingSession(t, rolling{leaseMs: 2000, rounds: 2, poll: 5 * time.Millisecond})
}

// TestServeRollingRestartAfterADowntime: the same with a 1 s lease, each
// member down for 3 s before it starts again (a maintenance, a slow
// start): long enough for the others' redial backoff to reach its cap
// (2 s), which is longer than the restarted member's boot wait. When a
// restarted member turns ready, every member must reach it both ways
// (/readyz counts all three acceptors), so that stopping the next one
// leaves a majority that can talk. Before a member dialling in ended the
// others' backoff (internal/peer comeBack), the restarted member turned
// ready with one other member while the third still waited out its
// backoff; the operator then stopped that one, and for up to a second no
// two members could reach each other: the Session lost its lease in 3 of
// 17 rolling restarts, and the restarted member counted two acceptors at
// its readiness in 10 of 14 restarts.
func TestServeRollingRestartAfterADowntime(t *testing.T) {
	t.Parallel()
	rollingSession(t, rolling{leaseMs: 1000, rounds: 1, down: 3 * time.Second, allReach: true})
}

// rolling is a rolling restart: the lease, the rounds over the members,
// how long each stays down, a standby's polling interval (0: none), and
// whether a restarted member must reach every member once ready.
type rolling struct {
	leaseMs  int64
	rounds   int
	down     time.Duration
	poll     time.Duration
	allReach bool
}

func rollingSession(t *testing.T, r rolling) {
	leaseMs, poll := r.leaseMs, r.poll
	c := startServeCluster(t, 3, "-max-lease-ms", fmt.Sprint(leaseMs))
	var endpoints []string
	for i := range c.members {
		endpoints = append(endpoints, c.url(i, ""))
	}
	cl, err := client.New(client.Config{Endpoints: endpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var renewals atomic.Int64
	s, err := cl.NewSession(ctx, "roll", "cs1", client.SessionOptions{LeaseMs: leaseMs, OnRenew: func(client.Lease) { renewals.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	var standbyErr error
	var wg sync.WaitGroup
	stop := make(chan struct{})
	if poll > 0 {
		sb, err := client.New(client.Config{Endpoints: endpoints})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(poll)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				gctx, gcancel := context.WithTimeout(context.Background(), time.Second)
				l, err := sb.Grant(gctx, "roll", "cs2", leaseMs)
				gcancel()
				if err == nil && l.Granted() {
					standbyErr = fmt.Errorf("the standby cs2 was granted the chunk (token %d) while cs1's Session held it", l.Token)
					return
				}
			}
		}()
	}
	for round := range r.rounds {
		for i := range c.members {
			c.signal(i, syscall.SIGTERM)
			if code := c.waitExit(i, 15*time.Second); code != 0 {
				t.Fatalf("%s exited %d after SIGTERM", c.members[i].id, code)
			}
			time.Sleep(r.down) // the fault: the member stays down this long
			c.start(i)         // the default boot wait: -max-lease-ms
			c.waitReady(i, 20*time.Second)
			if r.allReach {
				if _, body := c.get(i, "/readyz"); !strings.Contains(body, `"acceptors_reachable":3,`) {
					t.Errorf("round %d: %s turned ready while not every member reached it, so stopping the next could leave no majority that talks: %s\n%s",
						round, c.members[i].id, body, logsOf(c))
				}
			}
			select {
			case <-s.Done():
				close(stop)
				wg.Wait()
				t.Fatalf("round %d, after restarting %s: the Session lost its lease after %d renewals: %v\n%s", round, c.members[i].id, renewals.Load(), s.Err(), logsOf(c))
			default:
			}
		}
	}
	close(stop)
	wg.Wait()
	if standbyErr != nil {
		t.Fatal(standbyErr)
	}
	select {
	case <-s.Done():
		t.Fatalf("the Session lost its lease after %d renewals: %v", renewals.Load(), s.Err())
	default:
	}
	t.Logf("the Session kept its lease through %d rolling restarts: %d renewals", r.rounds, renewals.Load())
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	if err := s.Close(cctx); err != nil {
		t.Errorf("closing the Session: %v", err)
	}
}

// logsOf is every member's log, for a failure.
func logsOf(c *serveCluster) string {
	var b strings.Builder
	for i, m := range c.members {
		fmt.Fprintf(&b, "--- %s\n%s", m.id, c.log(i))
	}
	return b.String()
}
