package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"chunklease/client"
)

// cmdMember is `member list|add|remove [ID]`: the acceptor set of a
// cluster with membership on (client.Members, AddMember, RemoveMember).
// With -wait, a change refused because another is waiting out its
// waiting rule is asked again once that time has passed, within -timeout.
func cmdMember(inv *invocation, args []string) int {
	fs := newFlagSet("member", inv.g)
	addr := fs.String("addr", "", "")
	force := fs.Bool("force", false, "")
	wait := fs.Bool("wait", false, "")
	pos, code := inv.parse("member", fs, args, -1)
	if code >= 0 {
		return code
	}
	switch {
	case len(pos) == 1 && pos[0] == "list":
	case len(pos) == 2 && (pos[0] == "add" || pos[0] == "remove"):
	default:
		return usageError(inv.stderr, "member", fmt.Sprintf("member takes list, add ID or remove ID, got %q", strings.Join(pos, " ")))
	}
	if *addr != "" && pos[0] != "add" {
		return usageError(inv.stderr, "member", "-addr goes with add: the new member's peer address")
	}
	return inv.call(func(ctx context.Context, c *client.Client) int {
		for {
			m, err := memberCall(ctx, c, pos, *addr, *force)
			var e *client.Error
			if *wait && errors.Is(err, client.ErrChangeRefused) && errors.As(err, &e) && e.RetryInMs > 0 {
				inv.out.line("member waiting %d ms: another change is in its waiting rule", e.RetryInMs)
				select {
				case <-time.After(time.Duration(e.RetryInMs)*time.Millisecond + 10*time.Millisecond):
					continue
				case <-ctx.Done():
				}
			}
			if err != nil {
				return fail(inv.stderr, err)
			}
			verb := "member list"
			if pos[0] != "list" {
				verb = map[string]string{"add": "member added ", "remove": "member removed "}[pos[0]] + name(pos[1])
			}
			inv.out.line("%s epoch=%d members=%s next_change_in_ms=%d", verb, m.Epoch, strings.Join(m.Members, ","), m.NextChangeInMs)
			return exitOK
		}
	})
}

// memberCall makes the one call pos asks for.
func memberCall(ctx context.Context, c *client.Client, pos []string, addr string, force bool) (client.Membership, error) {
	switch pos[0] {
	case "add":
		return c.AddMember(ctx, pos[1], addr, force)
	case "remove":
		return c.RemoveMember(ctx, pos[1], force)
	}
	return c.Members(ctx)
}
