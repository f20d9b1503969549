// Command membercheck holds leases through a membership change, for
// scripts/member_check.sh: one client.Session per chunk against the
// members' endpoints, each renewing in the background, until SIGTERM or
// SIGINT. It prints "sessions up" once every Session holds its lease, and
// at the end one line of JSON: how many Sessions it ran, how many lost
// their lease (Done closed before the end), and how many renewals got a
// token not above the one before (token inversions). Every request loop
// is a Session's own, bounded by its lease; nothing outlives the
// program.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"chunklease/client"
)

func main() {
	endpoints := flag.String("endpoints", os.Getenv("LEASE_ENDPOINTS"), "the members' client URLs, comma-separated")
	chunks := flag.Int("chunks", 8, "Sessions, one chunk each")
	leaseMs := flag.Int64("lease-ms", 2000, "lease length every grant and renew asks for")
	limit := flag.Duration("limit", 5*time.Minute, "stop by itself after this long")
	flag.Parse()
	os.Exit(run(strings.Split(*endpoints, ","), *chunks, *leaseMs, *limit))
}

// result is the final line.
type result struct {
	Sessions        int      `json:"sessions"`
	Lost            int      `json:"lost"`
	TokenInversions int64    `json:"token_inversions"`
	Renewals        int64    `json:"renewals"`
	Losses          []string `json:"losses,omitempty"`
}

func run(endpoints []string, chunks int, leaseMs int64, limit time.Duration) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	c, err := client.New(client.Config{Endpoints: endpoints})
	if err != nil {
		fmt.Fprintf(os.Stderr, "membercheck: %v\n", err)
		return 2
	}
	defer c.Close()
	var renewals, inversions atomic.Int64
	var sessions []*client.Session
	for i := range chunks {
		var mu sync.Mutex
		var last int64
		opts := client.SessionOptions{LeaseMs: leaseMs, OnRenew: func(l client.Lease) {
			renewals.Add(1)
			mu.Lock()
			defer mu.Unlock()
			if l.Token <= last {
				inversions.Add(1)
			}
			last = l.Token
		}}
		start, cancelStart := context.WithTimeout(ctx, 10*time.Second)
		s, err := c.NewSession(start, fmt.Sprintf("member_check_%d", i), fmt.Sprintf("cs%d", i), opts)
		cancelStart()
		if err != nil {
			fmt.Fprintf(os.Stderr, "membercheck: session %d: %v\n", i, err)
			closeAll(sessions)
			return 1
		}
		mu.Lock()
		last = s.Token()
		mu.Unlock()
		sessions = append(sessions, s)
	}
	fmt.Println("sessions up")
	res := result{Sessions: len(sessions)}
	<-ctx.Done()
	for i, s := range sessions {
		select {
		case <-s.Done():
			res.Lost++
			res.Losses = append(res.Losses, fmt.Sprintf("session %d: %v", i, s.Err()))
		default:
		}
	}
	closeAll(sessions)
	res.TokenInversions, res.Renewals = inversions.Load(), renewals.Load()
	line, _ := json.Marshal(res)
	fmt.Println(string(line))
	return 0
}

// closeAll gives every lease back.
func closeAll(sessions []*client.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range sessions {
		s.Close(ctx)
	}
}
