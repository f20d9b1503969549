package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"chunklease/internal/nodeconfig"
	"chunklease/internal/peer"
	"chunklease/lease"
)

// serveConfig is lease-node serve's configuration: every setting of the
// Maelstrom node (nodeconfig.Node, with the boot wait defaulting to the
// longest lease) plus the cluster, the addresses, TLS and the token.
type serveConfig struct {
	node            nodeconfig.Node
	bootWaitDefault bool // -boot-wait-ms was not given: it is -max-lease-ms
	id              string
	members         []peer.Member
	acceptors       []string
	clientAddr      string
	peerCert        tls.Certificate
	peerCAs         *x509.CertPool
	clientCert      *tls.Certificate // nil: clients speak plain HTTP
	token           string           // "": no token is asked for
	maxClientConns  int              // client connections open at once (conns.go)
	maxPerAddr      int              // of those, from one client address
	loops           int              // event loops, one lease core each (loop.go)
	files           map[string]string
	// join: this node is new to a running cluster (membership): it learns
	// the configuration from the other -cluster members instead of taking
	// -acceptors as its start set.
	join bool
}

// tokenEnv carries the client bearer token itself; it has no flag, so the
// token never shows in ps.
const tokenEnv = "LEASE_CLIENT_TOKEN"

// serveSettings are the settings only serve mode has.
var serveSettings = []nodeconfig.Setting{
	{Flag: "id", Env: "LEASE_NODE_ID", Usage: "this node's id, one of the -cluster ids", Def: ""},
	{Flag: "cluster", Env: "LEASE_CLUSTER", Usage: "every member as id=host:port (its peer address), comma-separated, the same list in the same order on every node (the order numbers the ballot lanes)", Def: ""},
	{Flag: "client-addr", Env: "LEASE_CLIENT_ADDR", Usage: "host:port where HTTP clients connect", Def: ""},
	{Flag: "tls-ca", Env: "LEASE_TLS_CA", Usage: "PEM file of the cluster CA, which signed every member's certificate", Def: ""},
	{Flag: "tls-cert", Env: "LEASE_TLS_CERT", Usage: "PEM file of this member's certificate: signed by the CA, naming the node id as a DNS name, for server and client use (lease-node certs makes one)", Def: ""},
	{Flag: "tls-key", Env: "LEASE_TLS_KEY", Usage: "PEM file of that certificate's key", Def: ""},
	{Flag: "client-tls-cert", Env: "LEASE_CLIENT_TLS_CERT", Usage: "optional: PEM certificate for HTTPS to clients (with -client-tls-key); unset, clients speak plain HTTP", Def: ""},
	{Flag: "client-tls-key", Env: "LEASE_CLIENT_TLS_KEY", Usage: "optional: its key", Def: ""},
	{Flag: "client-token-file", Env: "LEASE_CLIENT_TOKEN_FILE", Usage: "optional: a file holding the bearer token every client request must carry (Authorization: Bearer TOKEN); " + tokenEnv + " may hold the token itself instead", Def: ""},
	{Flag: "max-client-conns", Env: "LEASE_MAX_CLIENT_CONNS", Usage: "client connections open at once; at the limit a new one takes the place of a quiet one (one that never completed a request, open 250 ms or more, oldest first; else one idle 1 s or more), or is answered 503 with Retry-After when none is quiet", Def: strconv.Itoa(defaultMaxClientConns)},
	{Flag: "max-client-conns-per-addr", Env: "LEASE_MAX_CLIENT_CONNS_PER_ADDR", Usage: "client connections open at once from one client address (at most -max-client-conns); at the limit a new one takes the place of a quiet one of that address, or is answered 503 with Retry-After", Def: strconv.Itoa(defaultMaxPerAddr)},
	{Flag: "loops", Env: "LEASE_LOOPS", Usage: fmt.Sprintf("event loops that run this member's lease state, 1..%d: each serves the chunks a hash of the handle gives it, with its own timers and admission (-max-in-flight is shared out); members with different numbers work together. Unset: GOMAXPROCS (the machine's cores, or the GOMAXPROCS environment variable)", lease.MaxCores), Def: ""},
	{Flag: "join", Env: "LEASE_JOIN", Usage: "on | off: this node is new to a running cluster whose acceptor set changes (needs -membership on): it learns the configuration from the other -cluster members and votes once a member_add names it; list the running members and then this node in -cluster (its place there is its ballot lane: never reuse a place another node had)", Def: "off"},
}

// parseServeConfig reads and checks every setting; a bad or inconsistent
// one is an error naming the setting and the fix.
func parseServeConfig(args []string, getenv func(string) string) (serveConfig, error) {
	raw, given, err := nodeconfig.ParseTable("lease-node serve", args, getenv, nodeconfig.Settings, serveSettings)
	if err != nil {
		return serveConfig{}, err
	}
	var c serveConfig
	if getenv("LEASE_BOOT_WAIT_MS") == "" && !given["boot-wait-ms"] {
		c.bootWaitDefault = true
		*raw["boot-wait-ms"] = *raw["max-lease-ms"]
	}
	// Unset, the default lease is the longest one allowed, up to 60 s: a
	// cluster started with only -max-lease-ms 5000 just works.
	if getenv("LEASE_MS") == "" && !given["lease-ms"] {
		if m, err := strconv.ParseInt(strings.TrimSpace(*raw["max-lease-ms"]), 10, 64); err == nil && m < 60000 {
			*raw["lease-ms"] = strconv.FormatInt(max(m, 1), 10)
		}
	}
	if c.node, err = nodeconfig.Build(raw); err != nil {
		return c, err
	}
	c.files = map[string]string{}
	for _, k := range []string{"tls-ca", "tls-cert", "tls-key", "client-tls-cert", "client-tls-key", "client-token-file"} {
		c.files[k] = strings.TrimSpace(*raw[k])
	}
	c.id = strings.TrimSpace(*raw["id"])
	errs := []error{c.parseCluster(strings.TrimSpace(*raw["cluster"])), c.parseJoin(strings.TrimSpace(*raw["join"]))}
	errs = append(errs, c.checkAddrs(strings.TrimSpace(*raw["client-addr"])), c.checkBootWait(), c.resolveAcceptors(),
		c.parseMaxClientConns(strings.TrimSpace(*raw["max-client-conns"]), strings.TrimSpace(*raw["max-client-conns-per-addr"])), c.parseLoops(strings.TrimSpace(*raw["loops"])))
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	return c, errors.Join(c.loadTLS(), c.loadToken(getenv(tokenEnv)))
}

// parseJoin reads -join, which only a cluster with membership takes.
func (c *serveConfig) parseJoin(v string) error {
	switch v {
	case "on", "true", "1":
		c.join = true
	case "off", "false", "0", "":
		return nil
	default:
		return fmt.Errorf("-join (LEASE_JOIN) is %q; want on or off", v)
	}
	if !c.node.Membership {
		return errors.New("-join (LEASE_JOIN) on needs -membership on (LEASE_MEMBERSHIP), on this node and on every member: only a cluster whose acceptor set can change takes a new member")
	}
	return nil
}

// coreAcceptors is the core's Config.Acceptors: the start set, or for a
// joining node the other members it asks for the configuration.
func (c *serveConfig) coreAcceptors() []string {
	if !c.join {
		return c.acceptors
	}
	return slices.DeleteFunc(c.memberIDs(), func(id string) bool { return id == c.id })
}

// defaultMaxClientConns: far more than a lease service's clients need
// (each keeps a few keep-alive connections), far below the file limit Go
// raises at start, and about 20 MiB of buffers when all are open.
// defaultMaxPerAddr: a quarter of them for one address, so that no one
// client host takes the node's connections from the others.
const (
	defaultMaxClientConns = 1024
	defaultMaxPerAddr     = 256
)

func (c *serveConfig) parseMaxClientConns(total, perAddr string) error {
	n, err := strconv.Atoi(total)
	if err != nil || n < 1 || n > 1<<20 {
		return fmt.Errorf("-max-client-conns (LEASE_MAX_CLIENT_CONNS) is %q; give a whole number in 1..1048576 (default %d)", total, defaultMaxClientConns)
	}
	p, err := strconv.Atoi(perAddr)
	if err != nil || p < 1 || p > 1<<20 {
		return fmt.Errorf("-max-client-conns-per-addr (LEASE_MAX_CLIENT_CONNS_PER_ADDR) is %q; give a whole number in 1..1048576 (default %d)", perAddr, defaultMaxPerAddr)
	}
	c.maxClientConns, c.maxPerAddr = n, min(p, n)
	return nil
}

// parseLoops reads -loops; unset, a member runs a loop per core Go may
// use at once (GOMAXPROCS), up to lease.MaxCores.
func (c *serveConfig) parseLoops(v string) error {
	if v == "" {
		c.loops = min(runtime.GOMAXPROCS(0), lease.MaxCores)
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > lease.MaxCores {
		return fmt.Errorf("-loops (LEASE_LOOPS) is %q; give a whole number in 1..%d, or leave it unset for GOMAXPROCS (%d here)", v, lease.MaxCores, runtime.GOMAXPROCS(0))
	}
	c.loops = n
	return nil
}

// parseCluster reads id=host:port,... and checks -id against it.
func (c *serveConfig) parseCluster(list string) error {
	if list == "" {
		return errors.New("-cluster (LEASE_CLUSTER) is empty; list every member as id=host:port, e.g. n1=127.0.0.1:7101,n2=127.0.0.1:7102,n3=127.0.0.1:7103, the same on every node")
	}
	seenAddr := map[string]string{}
	for _, item := range strings.Split(list, ",") {
		id, addr, ok := strings.Cut(strings.TrimSpace(item), "=")
		switch {
		case !ok || id == "" || addr == "":
			return fmt.Errorf("-cluster (LEASE_CLUSTER) item %q is not id=host:port", item)
		case strings.ContainsAny(id, " \t\"\\"):
			return fmt.Errorf("-cluster (LEASE_CLUSTER) id %q: an id is a DNS-style name without spaces or quotes (it is the DNS name in its certificate)", id)
		case slices.ContainsFunc(c.members, func(m peer.Member) bool { return m.ID == id }):
			return fmt.Errorf("-cluster (LEASE_CLUSTER) lists %s twice", id)
		case seenAddr[addr] != "":
			return fmt.Errorf("-cluster (LEASE_CLUSTER) gives %s and %s the same address %s", seenAddr[addr], id, addr)
		}
		if err := checkHostPort(addr); err != nil {
			return fmt.Errorf("-cluster (LEASE_CLUSTER) address of %s: %v", id, err)
		}
		seenAddr[addr] = id
		c.members = append(c.members, peer.Member{ID: id, Addr: addr})
	}
	switch {
	case c.id == "":
		return fmt.Errorf("-id (LEASE_NODE_ID) is empty; set it to this node's id in -cluster (%s)", strings.Join(c.memberIDs(), ", "))
	case !slices.Contains(c.memberIDs(), c.id):
		return fmt.Errorf("-id (LEASE_NODE_ID) is %q, which -cluster does not list (it lists %s); every member, this one included, is in -cluster", c.id, strings.Join(c.memberIDs(), ", "))
	}
	return nil
}

func (c *serveConfig) memberIDs() []string {
	ids := make([]string, len(c.members))
	for i, m := range c.members {
		ids[i] = m.ID
	}
	return ids
}

func (c *serveConfig) peerAddr() string {
	for _, m := range c.members {
		if m.ID == c.id {
			return m.Addr
		}
	}
	return ""
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (%v)", addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%q: the port must be a number in 0..65535", addr)
	}
	return nil
}

func (c *serveConfig) checkAddrs(clientAddr string) error {
	c.clientAddr = clientAddr
	switch {
	case clientAddr == "":
		return errors.New("-client-addr (LEASE_CLIENT_ADDR) is empty; set the host:port HTTP clients connect to, e.g. 127.0.0.1:7001")
	case clientAddr == c.peerAddr() && c.peerAddr() != "":
		return fmt.Errorf("-client-addr (LEASE_CLIENT_ADDR) %s is this node's peer address in -cluster; give clients another port", clientAddr)
	}
	if err := checkHostPort(clientAddr); err != nil {
		return fmt.Errorf("-client-addr (LEASE_CLIENT_ADDR): %v", err)
	}
	return nil
}

// checkBootWait refuses a boot wait that is neither 0 (a first start,
// when no member remembers anything) nor at least the longest lease
// (rule 7): a restarted acceptor with a shorter one could forget a lease
// it accepted and accept another server's.
func (c *serveConfig) checkBootWait() error {
	b, m := c.node.BootWaitMs, c.node.MaxLeaseMs
	if b == 0 || b >= m {
		return nil
	}
	return fmt.Errorf("-boot-wait-ms (LEASE_BOOT_WAIT_MS) is %d, below -max-lease-ms %d: a restarted node could forget a live lease. "+
		"Leave it unset (it is then %d), or 0 only when the whole cluster starts empty", b, m, m)
}

// resolveAcceptors turns -acceptors into ids of the cluster.
func (c *serveConfig) resolveAcceptors() error {
	ids := c.memberIDs()
	switch c.node.Acceptors {
	case "all":
		c.acceptors = ids
		return nil
	case "self":
		if len(ids) > 1 {
			return fmt.Errorf("-acceptors (LEASE_ACCEPTORS) self makes every node its own sole acceptor, so two nodes could grant one chunk to two servers; "+
				"with %d members use all or a comma list of members", len(ids))
		}
		c.acceptors = ids
		return nil
	}
	acc, err := c.node.AcceptorList(ids, c.id)
	c.acceptors = acc
	return err
}

// loadTLS reads the peer TLS files (required) and the client TLS files
// (both or neither), and checks that this member's own certificate is
// one its peers will accept.
func (c *serveConfig) loadTLS() error {
	for _, k := range []string{"tls-ca", "tls-cert", "tls-key"} {
		if c.files[k] == "" {
			return fmt.Errorf("-%s (%s) is not set: peers speak mutually authenticated TLS; make a CA and member certificates with "+
				"`lease-node certs -dir DIR -members %s` and pass DIR/ca.crt, DIR/%s.crt and DIR/%s.key", k, nodeconfig.EnvOf(k, serveSettings), strings.Join(c.memberIDs(), ","), c.id, c.id)
		}
	}
	caPEM, err := os.ReadFile(c.files["tls-ca"])
	if err != nil {
		return fmt.Errorf("-tls-ca (LEASE_TLS_CA): %v", err)
	}
	c.peerCAs = x509.NewCertPool()
	if !c.peerCAs.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("-tls-ca (LEASE_TLS_CA) %s holds no PEM certificate", c.files["tls-ca"])
	}
	if c.peerCert, err = tls.LoadX509KeyPair(c.files["tls-cert"], c.files["tls-key"]); err != nil {
		return fmt.Errorf("-tls-cert/-tls-key (LEASE_TLS_CERT/LEASE_TLS_KEY): %v", err)
	}
	pc := peer.Config{Self: c.id, Members: c.members, Cert: c.peerCert, CAs: c.peerCAs}
	if err := peer.CheckOwnCertificate(&pc); err != nil {
		return fmt.Errorf("-tls-cert (LEASE_TLS_CERT) %s would be refused by the other members: %v; issue it for %s with lease-node certs", c.files["tls-cert"], err, c.id)
	}
	cert, key := c.files["client-tls-cert"], c.files["client-tls-key"]
	switch {
	case cert == "" && key == "":
		return nil
	case cert == "" || key == "":
		return errors.New("-client-tls-cert and -client-tls-key (LEASE_CLIENT_TLS_CERT, LEASE_CLIENT_TLS_KEY) go together: set both for HTTPS to clients, or neither for plain HTTP")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return fmt.Errorf("-client-tls-cert/-client-tls-key: %v", err)
	}
	c.clientCert = &pair
	return nil
}

// loadToken reads the bearer token from -client-token-file or
// LEASE_CLIENT_TOKEN (not both).
func (c *serveConfig) loadToken(fromEnv string) error {
	file := c.files["client-token-file"]
	switch {
	case file != "" && fromEnv != "":
		return fmt.Errorf("both -client-token-file (LEASE_CLIENT_TOKEN_FILE) and %s are set; set one", tokenEnv)
	case file == "" && fromEnv == "":
		return nil
	case fromEnv != "":
		c.token = strings.TrimSpace(fromEnv)
	default:
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("-client-token-file (LEASE_CLIENT_TOKEN_FILE): %v", err)
		}
		c.token = strings.TrimSpace(string(b))
	}
	if c.token == "" || strings.ContainsFunc(c.token, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return errors.New("the client token is empty or has spaces or non-ASCII characters; use a printable ASCII string without spaces, e.g. from `openssl rand -hex 16`")
	}
	return nil
}

// clusterHello is what every member must agree on; peers compare it at
// connect (internal/peer).
//
// With membership the member list and the acceptors are left out: a
// member added at run time was started with another list, and the
// configuration, not the start list, says who votes (lease/doc.go
// "Membership"); the lease bounds must still agree.
func (c *serveConfig) clusterHello() string {
	if c.node.Membership {
		return fmt.Sprintf("membership;max-lease-ms=%d;drift-ppm=%d", c.node.MaxLeaseMs, c.node.DriftPPM)
	}
	var b strings.Builder
	for i, m := range c.members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.ID + "=" + m.Addr)
	}
	fmt.Fprintf(&b, ";acceptors=%s;max-lease-ms=%d;drift-ppm=%d", strings.Join(c.acceptors, ","), c.node.MaxLeaseMs, c.node.DriftPPM)
	return b.String()
}

// writeServeHelp prints what lease-node serve -h shows.
func writeServeHelp(w io.Writer) {
	fmt.Fprint(w, `Usage: lease-node serve [flags]

One node of the lease service on a real network (contract section 3):
peers talk over mutually authenticated TLS, clients over HTTP/1.1 JSON
(POST /v1/lease_grant, lease_renew, lease_check, lease_release,
master_start, master_stop, master_status, member_list, member_add,
member_remove; GET /healthz, /readyz, /metrics). Every flag can be set by its environment variable instead; a
flag wins over the environment. A bad or inconsistent setting stops the
node at start with one line naming it, exit status 2.

Cluster, addresses, TLS and token:
`)
	nodeconfig.WriteRows(w, serveSettings, map[string]string{"loops": "GOMAXPROCS"})
	fmt.Fprintf(w, "  %s  (env only, no flag: a flag would show in ps)\n        the client bearer token itself, instead of -client-token-file\n", tokenEnv)
	fmt.Fprint(w, `
Lease settings (as the Maelstrom node's):
`)
	nodeconfig.WriteRows(w, nodeconfig.Settings, map[string]string{"boot-wait-ms": "-max-lease-ms", "lease-ms": "60000 or -max-lease-ms if less"})
	fmt.Fprint(w, `
The boot wait defaults to the longest lease: a node restarted with the
defaults is safe. -boot-wait-ms 0 is for a first start of the whole
cluster only (nothing to forget); the log says so.

/readyz is 200 once the boot wait is over, a restarted member has heard
the ballot high-water marks of a majority of the acceptors (the others
get one round: a member that is down never holds it back), and a
majority of the acceptors (this node counted) answered a peer ping sent
within the last 500 ms (pings every 100 ms) and are past their boot wait;
a paused, partitioned or restarting majority turns it 503.

Client connections: at -max-client-conns, or -max-client-conns-per-addr
from one address, a new connection replaces a quiet one (no complete
request being answered): first one that never completed a request and
is 250 ms old (a silent or trickling one, however many bytes it sent),
then one idle for 1 s, oldest first (of that address at its own limit).
When none is quiet, the new one is answered 503 with Retry-After: 1 and
Connection: close (at most a quarter of -max-client-conns such answers at
once; beyond, it is closed at once). A request the node has read is
never cut. -max-client-conns is lowered, and the log says so, when the
process may not open that many files (ulimit -n).

SIGTERM or SIGINT: the node drains. Every request answers 503 with
Connection: close and Retry-After (so /readyz does), idle connections
are closed first, requests in flight are answered, then each connection
is let finish its answer; the listener and the peers close and the node
exits 0.

Example (three members; lease-node certs -dir certs -members n1,n2,n3):
  lease-node serve -id n1 -cluster n1=127.0.0.1:7101,n2=127.0.0.1:7102,n3=127.0.0.1:7103 \
    -client-addr 127.0.0.1:7001 -tls-ca certs/ca.crt -tls-cert certs/n1.crt -tls-key certs/n1.key
docs/service.md shows a whole cluster with scripts/cluster.sh.
`)
}
