package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// nodeConfig is the node's configuration, from flags, else the environment
// (Maelstrom-style harnesses start the binary without arguments but pass
// their environment on), else the defaults of the contract's table.
type nodeConfig struct {
	leaseMs         int64
	maxLeaseMs      int64
	acceptors       string // "all", "self", or a comma list of node ids
	bootWaitMs      int64
	driftMarginMs   int64
	driftPPM        int64
	quorumTimeoutMs int64
	maxInFlight     int64
	seed            int64 // 0: derived from the start time
}

// setting is one row of the configuration table.
type setting struct {
	flag, env, usage string
	def              string
}

var settings = []setting{
	{"lease-ms", "LEASE_MS", "lease length T in ms when a request names none", "60000"},
	{"max-lease-ms", "LEASE_MAX_MS", "M: the longest lease in ms a request may ask for", "60000"},
	{"acceptors", "LEASE_ACCEPTORS", "all (every node in node_ids; quorum a majority) | self (each node its own sole acceptor: single-process graders only) | a comma list of node ids, the same on every node", "all"},
	{"boot-wait-ms", "LEASE_BOOT_WAIT_MS", "ms the acceptor does nothing after start (it answers booting); >= M wherever nodes restart", "0"},
	{"drift-margin-ms", "LEASE_DRIFT_MARGIN_MS", "ms every reported remaining time is shortened by", "0"},
	{"drift-ppm", "LEASE_DRIFT_PPM", "bound on clock-rate error in parts per million; acceptors stretch leases by it", "1000"},
	{"quorum-timeout-ms", "LEASE_QUORUM_TIMEOUT_MS", "ms a request may take before the node answers error 11 (1..2000)", "2000"},
	{"max-in-flight", "LEASE_MAX_IN_FLIGHT", "the most client requests a node runs at once (it starts at 16 and adapts to how fast they are answered); more wait, and fail with error 11 if none finishes within the quorum timeout", "256"},
	{"seed", "LEASE_SEED", "seed of the node's random backoff (0: from the start time)", "0"},
}

// parseConfig reads args and the environment and validates every value,
// so a bad setting stops the node at start with one line naming it.
func parseConfig(args []string, getenv func(string) string) (nodeConfig, error) {
	raw, _, err := parseTable("lease-node", args, getenv, settings)
	if err != nil {
		return nodeConfig{}, err
	}
	return buildConfig(raw)
}

// parseTable reads the flags of tables from args, each defaulting to its
// environment variable, else its default; it returns the raw values by
// flag name, and the flags args set.
func parseTable(name string, args []string, getenv func(string) string, tables ...[]setting) (raw map[string]*string, given map[string]bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	raw, given = map[string]*string{}, map[string]bool{}
	for _, table := range tables {
		for _, s := range table {
			def := s.def
			if v := getenv(s.env); v != "" {
				def = v
			}
			raw[s.flag] = fs.String(s.flag, def, s.usage+" (env "+s.env+")")
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, fmt.Errorf("%w (flags: %s; -h explains them)", err, flagList(tables...))
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected argument %q (flags: %s)", fs.Arg(0), flagList(tables...))
	}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return raw, given, nil
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
	writeRows(w, settings, nil)
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

func flagList(tables ...[]setting) string {
	var names []string
	for _, table := range tables {
		for _, s := range table {
			names = append(names, "-"+s.flag)
		}
	}
	return strings.Join(names, " ")
}

func buildConfig(raw map[string]*string) (nodeConfig, error) {
	var c nodeConfig
	var errs []error
	num := func(name string, dst *int64, lo, hi int64) {
		v, err := strconv.ParseInt(strings.TrimSpace(*raw[name]), 10, 64)
		if err != nil || v < lo || v > hi {
			errs = append(errs, fmt.Errorf("-%s (%s) is %q; want a whole number in %d..%d", name, envOf(name), *raw[name], lo, hi))
			return
		}
		*dst = v
	}
	const week = 7 * 24 * 3600 * 1000
	num("max-lease-ms", &c.maxLeaseMs, 1, week)
	num("lease-ms", &c.leaseMs, 1, week)
	num("boot-wait-ms", &c.bootWaitMs, 0, week)
	num("drift-margin-ms", &c.driftMarginMs, 0, week)
	num("drift-ppm", &c.driftPPM, 0, 499_999)
	num("quorum-timeout-ms", &c.quorumTimeoutMs, 1, 2000)
	num("max-in-flight", &c.maxInFlight, 1, 1_000_000)
	num("seed", &c.seed, -1<<63, 1<<63-1)
	c.acceptors = strings.TrimSpace(*raw["acceptors"])
	errs = append(errs, c.crossCheck()...)
	return c, errors.Join(errs...)
}

// crossCheck validates what depends on more than one setting.
func (c nodeConfig) crossCheck() []error {
	var errs []error
	if c.leaseMs > c.maxLeaseMs && c.maxLeaseMs > 0 {
		errs = append(errs, fmt.Errorf("-lease-ms (LEASE_MS) %d is more than -max-lease-ms (LEASE_MAX_MS) %d", c.leaseMs, c.maxLeaseMs))
	}
	if c.driftMarginMs >= c.leaseMs && c.leaseMs > 0 {
		errs = append(errs, fmt.Errorf("-drift-margin-ms (LEASE_DRIFT_MARGIN_MS) %d must be less than -lease-ms %d, or no lease would be usable", c.driftMarginMs, c.leaseMs))
	}
	if _, err := c.acceptorList(nil, ""); err != nil && c.acceptors != "all" && c.acceptors != "self" {
		errs = append(errs, err)
	}
	return errs
}

// acceptorList resolves the acceptor setting against init's node ids. With
// nodeIDs nil it only checks the syntax.
func (c nodeConfig) acceptorList(nodeIDs []string, self string) ([]string, error) {
	switch c.acceptors {
	case "all":
		return nodeIDs, nil
	case "self":
		return []string{self}, nil
	}
	ids := strings.Split(c.acceptors, ",")
	seen := map[string]bool{}
	for _, id := range ids {
		switch {
		case id == "":
			return nil, fmt.Errorf("-acceptors (LEASE_ACCEPTORS) %q has an empty id; want all, self or a comma list like n1,n2,n3", c.acceptors)
		case seen[id]:
			return nil, fmt.Errorf("-acceptors (LEASE_ACCEPTORS) lists %s twice", id)
		case nodeIDs != nil && !slices.Contains(nodeIDs, id):
			return nil, fmt.Errorf("-acceptors (LEASE_ACCEPTORS) is %q, but %s is not a node of this cluster: init's node_ids are %v "+
				"(Maelstrom's --node-count N names them n0..n(N-1)). Set it to all, self, or a comma list of ids from node_ids, the same on every node",
				c.acceptors, id, nodeIDs)
		}
		seen[id] = true
	}
	return ids, nil
}

func envOf(flagName string) string {
	for _, table := range [][]setting{settings, serveSettings} {
		for _, s := range table {
			if s.flag == flagName {
				return s.env
			}
		}
	}
	return ""
}
