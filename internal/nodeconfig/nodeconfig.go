package nodeconfig

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"chunklease/internal/clock"
)

// Node is the lease settings every mode shares, from flags, else the
// environment (Maelstrom-style harnesses start the binary without
// arguments but pass their environment on), else the defaults of the
// contract's table.
type Node struct {
	LeaseMs         int64
	MaxLeaseMs      int64
	Acceptors       string // "all", "self", or a comma list of node ids
	BootWaitMs      int64
	DriftMarginMs   int64
	DriftPPM        int64
	QuorumTimeoutMs int64
	MaxInFlight     int64
	Seed            int64 // 0: derived from the start time
	// Membership lets the acceptor set change at run time through the
	// membership procedure (lease/doc.go "Membership").
	Membership bool
}

// Setting is one row of a configuration table: a flag, the environment
// variable that stands in for it, what it means and its default.
type Setting struct {
	Flag, Env, Usage string
	Def              string
}

// Settings are the lease settings (contract section 1).
var Settings = []Setting{
	{"lease-ms", "LEASE_MS", "lease length T in ms when a request names none", "60000"},
	{"max-lease-ms", "LEASE_MAX_MS", "M: the longest lease in ms a request may ask for", "60000"},
	{"acceptors", "LEASE_ACCEPTORS", "all (every node in node_ids; quorum a majority) | self (each node its own sole acceptor: single-process graders only) | a comma list of node ids, the same on every node", "all"},
	{"boot-wait-ms", "LEASE_BOOT_WAIT_MS", "ms the acceptor does nothing after start (it answers booting); >= M wherever nodes restart", "0"},
	{"drift-margin-ms", "LEASE_DRIFT_MARGIN_MS", "ms every reported remaining time is shortened by", "0"},
	{"drift-ppm", "LEASE_DRIFT_PPM", "bound on clock-rate error in parts per million; acceptors stretch leases by it", "1000"},
	{"quorum-timeout-ms", "LEASE_QUORUM_TIMEOUT_MS", "ms a request may take before the node answers error 11 (1..2000)", "2000"},
	{"max-in-flight", "LEASE_MAX_IN_FLIGHT", "the most client requests a node runs at once (it starts at 16 and adapts to how fast they are answered); more wait, and fail with error 11 if none finishes within the quorum timeout", "256"},
	{"seed", "LEASE_SEED", "seed of the node's random backoff (0: from the start time)", "0"},
	{"membership", "LEASE_MEMBERSHIP", "on | off: let the acceptor set change at run time (member_add, member_remove), one member at a time; " +
		"the same on every node. On, a restarted member votes only once n-q+1 other members that did not restart told it the configuration", "off"},
}

// Parse reads args and the environment and validates every value, so a
// bad setting stops the node at start with one line naming it.
func Parse(name string, args []string, getenv func(string) string) (Node, error) {
	raw, _, err := ParseTable(name, args, getenv, Settings)
	if err != nil {
		return Node{}, err
	}
	return Build(raw)
}

// ParseTable reads the flags of tables from args, each defaulting to its
// environment variable, else its default; it returns the raw values by
// flag name, and the flags args set.
func ParseTable(name string, args []string, getenv func(string) string, tables ...[]Setting) (raw map[string]*string, given map[string]bool, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	raw, given = map[string]*string{}, map[string]bool{}
	for _, table := range tables {
		for _, s := range table {
			def := s.Def
			if v := getenv(s.Env); v != "" {
				def = v
			}
			raw[s.Flag] = fs.String(s.Flag, def, s.Usage+" (env "+s.Env+")")
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

func flagList(tables ...[]Setting) string {
	var names []string
	for _, table := range tables {
		for _, s := range table {
			names = append(names, "-"+s.Flag)
		}
	}
	return strings.Join(names, " ")
}

// Build checks the raw lease settings (from ParseTable) and makes a Node.
func Build(raw map[string]*string) (Node, error) {
	var c Node
	var errs []error
	num := func(name string, dst *int64, lo, hi int64) {
		v, err := strconv.ParseInt(strings.TrimSpace(*raw[name]), 10, 64)
		if err != nil || v < lo || v > hi {
			errs = append(errs, fmt.Errorf("-%s (%s) is %q; want a whole number in %d..%d", name, EnvOf(name, Settings), *raw[name], lo, hi))
			return
		}
		*dst = v
	}
	const week = 7 * 24 * 3600 * 1000
	num("max-lease-ms", &c.MaxLeaseMs, 1, week)
	num("lease-ms", &c.LeaseMs, 1, week)
	num("boot-wait-ms", &c.BootWaitMs, 0, week)
	num("drift-margin-ms", &c.DriftMarginMs, 0, week)
	num("drift-ppm", &c.DriftPPM, 0, 499_999)
	num("quorum-timeout-ms", &c.QuorumTimeoutMs, 1, 2000)
	num("max-in-flight", &c.MaxInFlight, 1, 1_000_000)
	num("seed", &c.Seed, -1<<63, 1<<63-1)
	c.Acceptors = strings.TrimSpace(*raw["acceptors"])
	switch m := strings.TrimSpace(*raw["membership"]); m {
	case "on", "true", "1":
		c.Membership = true
	case "off", "false", "0", "":
	default:
		errs = append(errs, fmt.Errorf("-membership (LEASE_MEMBERSHIP) is %q; want on or off", m))
	}
	errs = append(errs, c.crossCheck()...)
	return c, errors.Join(errs...)
}

// crossCheck validates what depends on more than one setting.
func (c Node) crossCheck() []error {
	var errs []error
	if c.LeaseMs > c.MaxLeaseMs && c.MaxLeaseMs > 0 {
		errs = append(errs, fmt.Errorf("-lease-ms (LEASE_MS) %d is more than -max-lease-ms (LEASE_MAX_MS) %d", c.LeaseMs, c.MaxLeaseMs))
	}
	if c.DriftMarginMs >= c.LeaseMs && c.LeaseMs > 0 {
		errs = append(errs, fmt.Errorf("-drift-margin-ms (LEASE_DRIFT_MARGIN_MS) %d must be less than -lease-ms %d, or no lease would be usable", c.DriftMarginMs, c.LeaseMs))
	}
	if _, err := c.AcceptorList(nil, ""); err != nil && c.Acceptors != "all" && c.Acceptors != "self" {
		errs = append(errs, err)
	}
	if c.Membership && c.Acceptors == "self" {
		errs = append(errs, errors.New("-membership (LEASE_MEMBERSHIP) on needs a shared acceptor set: with -acceptors self each node is its own, which no change can join"))
	}
	return errs
}

// AcceptorList resolves the acceptor setting against init's node ids. With
// nodeIDs nil it only checks the syntax.
func (c Node) AcceptorList(nodeIDs []string, self string) ([]string, error) {
	switch c.Acceptors {
	case "all":
		return nodeIDs, nil
	case "self":
		return []string{self}, nil
	}
	ids := strings.Split(c.Acceptors, ",")
	seen := map[string]bool{}
	for _, id := range ids {
		switch {
		case id == "":
			return nil, fmt.Errorf("-acceptors (LEASE_ACCEPTORS) %q has an empty id; want all, self or a comma list like n1,n2,n3", c.Acceptors)
		case seen[id]:
			return nil, fmt.Errorf("-acceptors (LEASE_ACCEPTORS) lists %s twice", id)
		case nodeIDs != nil && !slices.Contains(nodeIDs, id):
			return nil, fmt.Errorf("-acceptors (LEASE_ACCEPTORS) is %q, but %s is not a node of this cluster: init's node_ids are %v "+
				"(Maelstrom's --node-count N names them n0..n(N-1)). Set it to all, self, or a comma list of ids from node_ids, the same on every node",
				c.Acceptors, id, nodeIDs)
		}
		seen[id] = true
	}
	return ids, nil
}

// EnvOf is the environment variable of a flag in tables ("" if none).
func EnvOf(flagName string, tables ...[]Setting) string {
	for _, table := range tables {
		for _, s := range table {
			if s.Flag == flagName {
				return s.Env
			}
		}
	}
	return ""
}

// WriteRows prints a settings table; defaults overrides shown defaults.
func WriteRows(w io.Writer, table []Setting, defaults map[string]string) {
	for _, s := range table {
		def := s.Def
		if d, ok := defaults[s.Flag]; ok {
			def = d
		}
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  -%s  (env %s, default %s)\n        %s\n", s.Flag, s.Env, def, s.Usage)
	}
}

// Configure is every mode's start: parse the settings and make the
// clocks. -h prints help (exit status 0); a bad setting is one line on
// stderr (2). On either, clk is nil and code is the exit status.
func Configure[C any](prog string, parse func() (C, error), help func(io.Writer), stdout, stderr io.Writer,
	getenv func(string) string) (cfg C, clk *clock.Clock, notes []string, code int) {
	cfg, err := parse()
	if errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return cfg, nil, nil, 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, OneLine(err))
		return cfg, nil, nil, 2
	}
	if clk, notes, err = clock.FromEnv(getenv); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return cfg, nil, nil, 2
	}
	return cfg, clk, notes, 0
}

// OneLine joins a multi-error into one line, as the contract asks.
func OneLine(err error) string {
	b := []byte(err.Error())
	for i, c := range b {
		if c == '\n' {
			b[i] = ';'
		}
	}
	return string(b)
}
