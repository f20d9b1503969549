package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"chunklease/client"
)

// globals are the flags every command takes, before or after its name.
type globals struct {
	endpoints string
	tokenFile string
	caFile    string
	timeout   time.Duration
}

// Environment variables. The token's names are the server's own, so one
// export serves both; ENDPOINTS is what scripts/cluster.sh up prints.
const (
	envEndpoints = "LEASE_ENDPOINTS"
	envCluster   = "ENDPOINTS"
	envToken     = "LEASE_CLIENT_TOKEN"
	envTokenFile = "LEASE_CLIENT_TOKEN_FILE"
	envCAFile    = "LEASE_CA_FILE"
)

// newFlagSet makes a flag set with the global flags; it prints nothing
// (the caller writes usage and errors itself).
func newFlagSet(name string, g *globals) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&g.endpoints, "endpoints", g.endpoints, "")
	fs.StringVar(&g.tokenFile, "token-file", g.tokenFile, "")
	fs.StringVar(&g.caFile, "ca-file", g.caFile, "")
	if g.timeout == 0 {
		g.timeout = 5 * time.Second
	}
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "")
	return fs
}

// invocation is one run of a command.
type invocation struct {
	ctx    context.Context
	g      *globals
	getenv func(string) string
	out    *lineWriter
	stderr io.Writer
}

// testDial replaces the TCP dialer in tests (an in-memory network).
var testDial func(ctx context.Context, network, addr string) (net.Conn, error)

// client builds the Client from the flags and the environment.
func (inv *invocation) client() (*client.Client, error) {
	list := firstSet(inv.g.endpoints, inv.getenv(envEndpoints), inv.getenv(envCluster))
	if list == "" {
		return nil, errors.New(`no endpoints: give -endpoints http://127.0.0.1:PORT,... or set LEASE_ENDPOINTS (scripts/cluster.sh up prints ENDPOINTS=...; export "$(scripts/cluster.sh up | tail -n1)" sets it)`)
	}
	token, err := inv.token()
	if err != nil {
		return nil, err
	}
	var endpoints []string
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	return client.New(client.Config{
		Endpoints:   endpoints,
		Token:       token,
		CAFile:      firstSet(inv.g.caFile, inv.getenv(envCAFile)),
		DialContext: testDial,
	})
}

// token reads the bearer token: -token-file, LEASE_CLIENT_TOKEN_FILE or
// LEASE_CLIENT_TOKEN (a file and the variable together are refused).
func (inv *invocation) token() (string, error) {
	file := firstSet(inv.g.tokenFile, inv.getenv(envTokenFile))
	direct := inv.getenv(envToken)
	switch {
	case file != "" && direct != "":
		return "", fmt.Errorf("both a token file (-token-file or %s) and %s are set; set one", envTokenFile, envToken)
	case file == "":
		return strings.TrimSpace(direct), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token file: %v", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// callCtx bounds one call by -timeout.
func (inv *invocation) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(inv.ctx, inv.g.timeout)
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
