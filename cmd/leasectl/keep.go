package main

import (
	"context"
	"fmt"

	"chunklease/client"
)

// cmdKeep holds a lease with a Session until interrupted: a line at the
// grant and at each renewal; on SIGINT or SIGTERM (the run's context) it
// gives the lease back, prints the release and exits 0; on a loss it
// exits 1 (the line on stderr says why).
func cmdKeep(inv *invocation, args []string) int {
	fs := newFlagSet("keep", inv.g)
	leaseMs := fs.Int64("lease-ms", 0, "")
	pos, code := inv.parse("keep", fs, args, 2)
	if code >= 0 {
		return code
	}
	chunk, server := pos[0], pos[1]
	c, code := inv.connect()
	if c == nil {
		return code
	}
	defer c.Close()
	ctx, cancel := inv.callCtx()
	granted := make(chan struct{}) // the grant's line comes first
	s, err := c.NewSession(ctx, chunk, server, client.SessionOptions{LeaseMs: *leaseMs, OnRenew: func(l client.Lease) {
		<-granted
		inv.out.line("renewed %s for %s token=%d expires_in_ms=%d", name(chunk), name(server), l.Token, l.ExpiresInMs)
	}})
	cancel()
	if err != nil {
		return fail(inv.stderr, err)
	}
	l := s.Lease()
	inv.out.line("granted %s to %s token=%d expires_in_ms=%d", name(chunk), name(server), l.Token, l.ExpiresInMs)
	close(granted)
	select {
	case <-s.Done():
		fmt.Fprintf(inv.stderr, "leasectl: %v\n", s.Err())
		closeCtx, cancel := context.WithTimeout(context.Background(), inv.g.timeout)
		defer cancel()
		s.Close(closeCtx) // best effort: gives back any instance still live
		return exitRefused
	case <-inv.ctx.Done():
	}
	// Interrupted: the run's context is done, so the release gets its own.
	closeCtx, cancel := context.WithTimeout(context.Background(), inv.g.timeout)
	defer cancel()
	if err := s.Close(closeCtx); err != nil {
		return fail(inv.stderr, err)
	}
	inv.out.line("released %s for %s token=%d", name(chunk), name(server), s.Token())
	return exitOK
}
