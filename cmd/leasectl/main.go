// Command leasectl takes, holds and gives back chunk leases from a
// cluster of `lease-node serve` members, for people: one line of output
// per call, an exit status per outcome. See doc.go and `leasectl -h`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"chunklease/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK      = 0 // done
	exitRefused = 1 // refused: nothing was done, or another server holds the chunk, or the lease was lost
	exitUsage   = 2 // bad usage: a flag, an argument or the environment
	exitUnknown = 3 // unknown outcome: it may have taken effect
)

// run is the whole program with its context (cancelled by SIGINT or
// SIGTERM), arguments, environment and streams passed in, so tests drive
// it without a process. It returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var g globals
	fs := newFlagSet("leasectl", &g)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.WriteString(stdout, usage)
		return exitOK
	case err != nil:
		return usageError(stderr, "", err.Error())
	case fs.NArg() == 0:
		return usageError(stderr, "", "no command given")
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	cmd, ok := commands[name]
	if !ok {
		return usageError(stderr, "", fmt.Sprintf("unknown command %q", name))
	}
	inv := &invocation{ctx: ctx, g: &g, getenv: getenv, out: &lineWriter{w: stdout}, stderr: stderr}
	return cmd(inv, rest)
}

// usageError writes a bad-usage line and where to read more, and returns
// exitUsage.
func usageError(stderr io.Writer, cmd, msg string) int {
	help := "leasectl -h"
	if cmd != "" {
		help = "leasectl " + cmd + " -h"
	}
	fmt.Fprintf(stderr, "leasectl: %s (see %s)\n", msg, help)
	return exitUsage
}

// fail writes a failed call's error in one line and returns its exit
// status: 3 when the outcome is unknown, 1 otherwise.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "leasectl: %v\n", err)
	if client.IsUnknown(err) {
		return exitUnknown
	}
	return exitRefused
}
