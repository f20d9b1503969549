package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"chunklease/client"
)

// commands are the subcommands by name.
var commands = map[string]func(*invocation, []string) int{
	"grant":   cmdGrant,
	"renew":   cmdRenew,
	"check":   cmdCheck,
	"release": cmdRelease,
	"master":  cmdMaster,
	"keep":    cmdKeep,
	"member":  cmdMember,
}

func cmdGrant(inv *invocation, args []string) int {
	fs := newFlagSet("grant", inv.g)
	leaseMs := fs.Int64("lease-ms", 0, "")
	pos, code := inv.parse("grant", fs, args, 2)
	if code >= 0 {
		return code
	}
	return inv.call(func(ctx context.Context, c *client.Client) int {
		l, err := c.Grant(ctx, pos[0], pos[1], *leaseMs)
		if err != nil {
			return fail(inv.stderr, err)
		}
		if !l.Granted() {
			inv.out.line("held %s by %s token=%d expires_in_ms=%d", name(l.Chunk), name(l.Primary), l.Token, l.ExpiresInMs)
			return exitRefused
		}
		inv.out.line("granted %s to %s token=%d expires_in_ms=%d", name(l.Chunk), name(l.Server), l.Token, l.ExpiresInMs)
		return exitOK
	})
}

func cmdRenew(inv *invocation, args []string) int {
	fs := newFlagSet("renew", inv.g)
	leaseMs := fs.Int64("lease-ms", 0, "")
	pos, code := inv.parse("renew", fs, args, 2)
	if code >= 0 {
		return code
	}
	return inv.call(func(ctx context.Context, c *client.Client) int {
		l, err := c.Renew(ctx, pos[0], pos[1], *leaseMs)
		if err != nil {
			return fail(inv.stderr, err)
		}
		inv.out.line("renewed %s for %s token=%d expires_in_ms=%d", name(l.Chunk), name(l.Server), l.Token, l.ExpiresInMs)
		return exitOK
	})
}

func cmdCheck(inv *invocation, args []string) int {
	fs := newFlagSet("check", inv.g)
	pos, code := inv.parse("check", fs, args, 1)
	if code >= 0 {
		return code
	}
	return inv.call(func(ctx context.Context, c *client.Client) int {
		ch, err := c.Check(ctx, pos[0])
		if err != nil {
			return fail(inv.stderr, err)
		}
		inv.out.line("check %s primary=%s remaining_ms=%d expired=%t", name(ch.Chunk), orNone(ch.Primary), ch.RemainingMs, ch.Expired)
		return exitOK
	})
}

func cmdRelease(inv *invocation, args []string) int {
	fs := newFlagSet("release", inv.g)
	pos, code := inv.parse("release", fs, args, 3)
	if code >= 0 {
		return code
	}
	token, err := strconv.ParseInt(pos[2], 10, 64)
	if err != nil || token <= 0 {
		return usageError(inv.stderr, "release", fmt.Sprintf("TOKEN %q is not a positive integer; give the token of the latest grant or renew", pos[2]))
	}
	return inv.call(func(ctx context.Context, c *client.Client) int {
		if err := c.Release(ctx, pos[0], pos[1], token); err != nil {
			return fail(inv.stderr, err)
		}
		inv.out.line("released %s for %s token=%d", name(pos[0]), name(pos[1]), token)
		return exitOK
	})
}

// parse parses a command's flags, which may come before, between or
// after its arguments, and checks the number of arguments. code is -1 to
// go on, else the exit status (0 after -h).
func (inv *invocation) parse(cmd string, fs *flag.FlagSet, args []string, want int) (pos []string, code int) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(inv.out.w, commandUsage[cmd])
			return nil, exitOK
		}
		if err != nil {
			return nil, usageError(inv.stderr, cmd, err.Error())
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if want >= 0 && len(pos) != want { // want < 0: the command checks its arguments itself
		return nil, usageError(inv.stderr, cmd, fmt.Sprintf("%s takes %d argument(s) (%s), got %d", cmd, want, commandArgs[cmd], len(pos)))
	}
	return pos, -1
}

// connect builds the client; a bad setting is bad usage.
func (inv *invocation) connect() (*client.Client, int) {
	c, err := inv.client()
	if err != nil {
		fmt.Fprintf(inv.stderr, "leasectl: %v\n", err)
		return nil, exitUsage
	}
	return c, -1
}

// call runs one call of the service with a client and the call's
// deadline; a bad client setting is bad usage.
func (inv *invocation) call(f func(ctx context.Context, c *client.Client) int) int {
	c, code := inv.connect()
	if c == nil {
		return code
	}
	defer c.Close()
	ctx, cancel := inv.callCtx()
	defer cancel()
	return f(ctx, c)
}

// lineWriter writes whole lines, one at a time (keep prints from the
// Session's goroutine too).
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}

// name prints a chunk, server or node name as is when it is plain, and
// quoted (Go syntax) otherwise, so that a line always splits on spaces
// into key=value fields.
func name(s string) string {
	if s == "" || s == "none" || strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r > '~' || r == '=' || r == '"' || r == '\\'
	}) {
		return strconv.Quote(s)
	}
	return s
}

// orNone is name, or none for "".
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return name(s)
}
