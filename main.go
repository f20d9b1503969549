// Command lease-node is a Maelstrom node that grants GFS-style chunk
// leases through PaxosLease. Every node is a proposer and an acceptor;
// each chunk handle is an independent lease. See docs/protocol.md for the
// messages and the configuration, lease/doc.go for the protocol.
//
// `lease-node serve` runs the same core as one member of a lease service
// on a real network (serve*.go: peers over TLS, clients over HTTP), and
// `lease-node certs` makes the certificates such a cluster runs on
// (certs.go). Without a subcommand the binary is the Maelstrom node.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"chunklease/internal/clock"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			os.Exit(runServe(args[1:], os.Stdout, os.Stderr, os.Getenv))
		case "certs":
			os.Exit(runCerts(args[1:], os.Stdout, os.Stderr))
		}
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run is the whole program with its streams and environment passed in, so
// tests drive it without a process. It returns the exit status: 0 at end
// of input, 2 for a bad configuration, 1 if stdout failed.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	cfg, clk, notes, code := configure("lease-node", func() (nodeConfig, error) { return parseConfig(args, getenv) }, writeHelp, stdout, stderr, getenv)
	if clk == nil {
		return code
	}
	defer clk.Stop()
	s := newServer(cfg, clk, stdin, stdout, stderr)
	for _, note := range notes {
		s.node.Logf("%s", note)
	}
	if err := s.node.Run(); err != nil {
		fmt.Fprintf(stderr, "lease-node: %v\n", err)
		return 1
	}
	return 0
}

// configure is every mode's start: parse the settings and make the
// clocks. -h prints help (exit status 0); a bad setting is one line on
// stderr (2). On either, clk is nil and code is the exit status.
func configure[C any](prog string, parse func() (C, error), help func(io.Writer), stdout, stderr io.Writer,
	getenv func(string) string) (cfg C, clk *clock.Clock, notes []string, code int) {
	cfg, err := parse()
	if errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return cfg, nil, nil, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, oneLine(err))
		return cfg, nil, nil, 2
	}
	if clk, notes, err = clock.FromEnv(getenv); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return cfg, nil, nil, 2
	}
	return cfg, clk, notes, 0
}

// oneLine joins a multi-error into one line, as the contract asks.
func oneLine(err error) string {
	b := []byte(err.Error())
	for i, c := range b {
		if c == '\n' {
			b[i] = ';'
		}
	}
	return string(b)
}
