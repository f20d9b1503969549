package main

import (
	"fmt"
	"io"

	"chunklease/internal/nodeconfig"
)

// parseConfig reads the Maelstrom node's settings (internal/nodeconfig).
func parseConfig(args []string, getenv func(string) string) (nodeconfig.Node, error) {
	return nodeconfig.Parse("lease-node", args, getenv)
}

// writeHelp prints what -h shows: every setting with its environment
// variable, default and meaning.
func writeHelp(w io.Writer) {
	fmt.Fprint(w, `Usage: lease-node [flags]

A Maelstrom node that grants GFS-style chunk leases through PaxosLease.
It reads Maelstrom messages on stdin, writes them on stdout and logs on
stderr. Every flag can be set by its environment variable instead, since
Maelstrom starts nodes without arguments but passes its environment on;
a flag wins over the environment. A bad value stops the node at start
with one line on stderr and exit status 2.

Flags:
`)
	nodeconfig.WriteRows(w, nodeconfig.Settings, nil)
	fmt.Fprint(w, `
Clock faults (only in a binary built with -tags clockfault, for the clock
nemesis; a normal build ignores them and logs that it did):
  LEASE_CLOCK_OFFSET_MS  ms added to every wall-clock read (may be negative)
  LEASE_CLOCK_RATE       factor on elapsed monotonic time, timers included
  LEASE_CLOCK_FILE       a file of {"offset_ms": N, "rate": R}, followed while running

Example: LEASE_MS=1000 LEASE_MAX_MS=2000 lease-node
docs/protocol.md lists the messages; lease/doc.go specifies the protocol.
`)
}
