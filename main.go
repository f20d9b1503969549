// Command lease-node is a Maelstrom node that grants GFS-style chunk
// leases through PaxosLease. Every node is a proposer and an acceptor;
// each chunk handle is an independent lease. See docs/protocol.md for the
// messages and the configuration, lease/doc.go for the protocol.
//
// `lease-node serve` runs the same core as one member of a lease service
// on a real network (package server: peers over TLS, clients over HTTP),
// and `lease-node certs` makes the certificates such a cluster runs on
// (server/certs.go). Without a subcommand the binary is the Maelstrom node.
package main

import (
	"fmt"
	"io"
	"os"

	"chunklease/internal/nodeconfig"
	"chunklease/server"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			os.Exit(server.Run(args[1:], os.Stdout, os.Stderr, os.Getenv))
		case "certs":
			os.Exit(server.RunCerts(args[1:], os.Stdout, os.Stderr))
		}
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run is the whole program with its streams and environment passed in, so
// tests drive it without a process. It returns the exit status: 0 at end
// of input, 2 for a bad configuration, 1 if stdout failed.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cfg, clk, notes, code := nodeconfig.Configure("lease-node", func() (nodeconfig.Node, error) { return parseConfig(args, getenv) }, writeHelp, stdout, stderr, getenv)
	if clk == nil {
		return code
	}
	defer clk.Stop()
	s := newShellNode(cfg, clk, stdin, stdout, stderr, getenv)
	for _, note := range notes {
		s.node.Logf("%s", note)
	}
	if err := s.node.Run(); err != nil {
		fmt.Fprintf(stderr, "lease-node: %v\n", err)
		return 1
	}
	return 0
}
