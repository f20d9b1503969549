package server

import (
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"chunklease/internal/clock"
	"chunklease/internal/cpuprof"
	"chunklease/internal/nodeconfig"
	"chunklease/internal/peer"
	"chunklease/internal/shell"
	"chunklease/lease"
)

// serveNode is one member of the lease service on a network: the lease
// core on -loops event loops, one core each (loop.go), the peers over
// TLS (internal/peer), clients over HTTP (http.go), metrics
// (metrics.go). Goroutines live only at the edges: HTTP handlers
// hand requests to their chunk's loop and wait for their answer; peer
// readers and writers move frames.
//
// Readiness (/readyz, http.go): 200 only while the boot wait is
// over, the acceptor's recovery no longer holds it back (lease
// AwaitingRecovery: complete, or the marks of a majority in and a round
// for the others), and a majority of the acceptors,
// this node counted, answered a peer ping sent within the transport's
// readiness window (5 ping intervals of 100 ms: 500 ms; internal/peer
// liveness.go) and are past their boot wait (their pongs say so; one in
// its boot wait votes on nothing: TestServeReadyzLeavesOutBootingAcceptors).
// An established TCP connection is no evidence: a paused member or a
// partition that drops packets silently keeps it. So with a
// majority paused or cut off, /readyz turns 503 within about the window
// (TestServeReadyzFollowsAMajority), and 200 again at the first answered
// ping after they come back.
//
// Connections (conns.go, overload.go, http.go): at most
// -max-client-conns client connections (default 1024), at most
// -max-client-conns-per-addr from one address (256). A connection is
// busy from a complete request to its answer, else quiet, keyed by its
// last complete request. At a limit a new one takes the place of a quiet
// one (250 ms old if it never completed a request, idle 1 s otherwise;
// oldest first), or is answered 503 with Retry-After when none is
// quiet. A request the node has read is never cut by this. Idle ones
// close after 30 s (IdleTimeout), headers must arrive within 5 s
// (ReadHeaderTimeout), a request within 10 s. Peers: at most 64 + 4 per
// member incoming connections in their TLS handshake (5 s each; at the
// cap the oldest, if 1 s old, gives way), one admitted connection per
// member, and any peer connection silent for 10 s is closed
// (conns_test.go, TestServeClientConnLimit, scripts/abuse_check.sh,
// internal/peer liveness tests).
//
// Drain (run): every answer closes its connection, quiet connections are
// closed first, requests in flight are answered, then the connections
// finish (TestServeDrainUnderKeepAliveClients).
type serveNode struct {
	cfg   serveConfig
	clock *clock.Clock
	log   *log.Logger

	*member // the cores on their loops (loop.go)
	peers   *peer.Transport

	bootUntil time.Duration // clock time at which the acceptor's boot wait ends
	// config is the core's configuration (membership), published by the
	// loop whenever the core adopts one (Adopted), for readiness, metrics
	// and the peers.
	config   atomic.Pointer[lease.Membership]
	configMu sync.Mutex // orders the loops' stores to config (adopted)
	inflight inflight
	http     *http.Server
	httpLn   net.Listener
	conns    *connLimiter // the client connections (conns.go)
	metrics  *serveMetrics
}

// Run is `lease-node serve`: it returns the exit status (0 after a
// signal and a drain, 2 for a bad configuration, 1 if it could not run).
func Run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cfg, clk, notes, code := nodeconfig.Configure("lease-node serve", func() (serveConfig, error) { return parseServeConfig(args, getenv) },
		writeServeHelp, stdout, stderr, getenv)
	if clk == nil {
		return code
	}
	defer clk.Stop()
	logger := log.New(stderr, cfg.id+" ", log.Ltime|log.Lmicroseconds)
	for _, note := range notes {
		logger.Print(note)
	}
	n, err := newServeNode(cfg, clk, logger)
	if err != nil {
		fmt.Fprintf(stderr, "lease-node serve: %v\n", nodeconfig.OneLine(err))
		return 2
	}
	if err := n.listen(); err != nil {
		fmt.Fprintf(stderr, "lease-node serve: %v\n", err)
		return 1
	}
	defer startProfile(getenv, cfg.id, logger)()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	return n.run(sigs)
}

// newServeNode builds the core and the edges; nothing listens yet.
func newServeNode(cfg serveConfig, clk *clock.Clock, logger *log.Logger) (*serveNode, error) {
	n := &serveNode{cfg: cfg, clock: clk, log: logger}
	wall, now := clk.Wall(), clk.Now()
	inc := wall.UnixMicro() // grows across restarts, as in the Maelstrom node
	seed := cfg.node.Seed
	if seed == 0 {
		seed = inc
	}
	cores, fences, err := buildCores(lease.Config{
		ID: cfg.id, Acceptors: cfg.coreAcceptors(), Nodes: cfg.memberIDs(), Incarnation: inc, Nonce: shell.NewNonce(), WallMs: wall.UnixMilli(),
		DefaultLeaseMs: cfg.node.LeaseMs, MaxLeaseMs: cfg.node.MaxLeaseMs, BootWaitMs: cfg.node.BootWaitMs,
		DriftMarginMs: cfg.node.DriftMarginMs, DriftPPM: cfg.node.DriftPPM, QuorumTimeoutMs: cfg.node.QuorumTimeoutMs, MaxInFlight: int(cfg.node.MaxInFlight),
		Membership: cfg.node.Membership, Join: cfg.join,
	}, cfg.loops, now, func(i int) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed)+uint64(i), uint64(inc))) })
	if err != nil {
		return nil, fmt.Errorf("the lease core refused the settings: %v", err)
	}
	n.bootUntil = cores[0].BootUntil()
	conf := cores[0].Configuration()
	n.config.Store(&conf)
	n.peers = peer.New(peer.Config{Self: cfg.id, Members: cfg.members, Cert: cfg.peerCert, CAs: cfg.peerCAs,
		Hello: cfg.clusterHello(), Seed: uint64(seed), Logf: logger.Printf,
		Booting: func() bool { return n.clock.Now() < n.bootUntil },
		Inboxes: cfg.loops, InboxSize: inboxSize(cfg.loops),
		Route: func(m *lease.Msg) (int, bool) { return lease.Route(m, cfg.loops) }})
	n.member = newMember(cores, fences, clk, n.peers, n.peers.Inbox, logger)
	for _, l := range n.loops {
		l.adopted = n.adopted
	}
	n.metrics = newServeMetrics(n)
	n.http = n.newHTTPServer()
	n.logStart(inc, seed)
	return n, nil
}

func (n *serveNode) logStart(inc, seed int64) {
	c := n.cfg
	n.log.Printf("lease-node serve %s (incarnation %d): cluster %s, acceptors %v, lease %d ms (max %d), drift %d ppm, margin %d ms, quorum timeout %d ms, %d requests in flight, %d loops, seed %d",
		c.id, inc, c.clusterHello(), c.acceptors, c.node.LeaseMs, c.node.MaxLeaseMs, c.node.DriftPPM, c.node.DriftMarginMs, c.node.QuorumTimeoutMs, c.node.MaxInFlight, c.loops, seed)
	switch {
	case c.join:
		n.log.Printf("membership on, joining: this node learns the configuration from %v and votes once a member_add names it", c.coreAcceptors())
	case c.node.Membership:
		n.log.Printf("membership on: the acceptor set may change (member_add, member_remove); start set %v (epoch 0)", c.acceptors)
	}
	switch {
	case c.node.BootWaitMs == 0:
		n.log.Printf("boot wait 0 ms (-boot-wait-ms 0): safe only for a first start of the whole cluster; " +
			"restart a node with the default boot wait (the longest lease), or it may forget a lease it accepted")
	case c.bootWaitDefault:
		n.log.Printf("boot wait %d ms (the default: -max-lease-ms): the acceptor stays silent until every lease it may have accepted before a restart has ended", c.node.BootWaitMs)
	default:
		n.log.Printf("boot wait %d ms", c.node.BootWaitMs)
	}
	scheme, auth := "http", "no client token"
	if c.clientCert != nil {
		scheme = "https"
	}
	if c.token != "" {
		auth = "clients must send the bearer token"
	}
	n.log.Printf("clients: %s://%s (%s); peers: TLS on %s", scheme, c.clientAddr, auth, c.peerAddr())
}

// listen opens the peer and client addresses.
func (n *serveNode) listen() error {
	if err := n.peers.Start(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", n.cfg.clientAddr)
	if err != nil {
		n.peers.Close(time.Second)
		return fmt.Errorf("client address %s: %w", n.cfg.clientAddr, err)
	}
	limit := n.fitDescriptors()
	text := fmt.Sprintf("node %s is at its client connection limits (-max-client-conns %d, -max-client-conns-per-addr %d) with every connection busy; "+
		"retry after a second, or through another member", n.cfg.id, limit, min(n.cfg.maxPerAddr, limit))
	n.conns = newConnLimiter(ln, limit, n.cfg.maxPerAddr, n.http.TLSConfig, text)
	n.http.ConnState = n.conns.connState
	n.http.ConnContext = n.conns.connContext
	n.httpLn = n.conns
	return nil
}

// fitDescriptors is -max-client-conns, lowered (and logged) when the
// process may not open enough files for it: each client connection is a
// descriptor, and so is each overload answer, each peer connection and
// handshake, and the log and listeners (descReserve). Go raises the soft
// limit to the hard one at start; ulimit -n raises the hard one.
func (n *serveNode) fitDescriptors() int {
	var rl syscall.Rlimit
	want := n.cfg.maxClientConns
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return want
	}
	reserve := descReserve + 6*len(n.cfg.members)
	need := want + overflowFor(want) + reserve
	if uint64(need) <= rl.Cur {
		return want
	}
	fit := max(1, (int(rl.Cur)-reserve)*4/5)
	n.log.Printf("the process may open %d files (ulimit -n), and -max-client-conns %d needs about %d with its overload answers and the peers: "+
		"serving at most %d client connections; raise the limit (ulimit -n, LimitNOFILE=) to keep %d", rl.Cur, want, need, fit, want)
	return fit
}

// descReserve is the descriptors a node needs beside its client and peer
// connections: listeners, the log, the peers' handshakes (64), spare.
const descReserve = 128

// run serves until a signal, then drains: readiness and new requests
// answer 503 with Connection: close, idle connections are closed first
// (drainClose), the requests in flight are answered (they end within the
// quorum timeout), then every connection is let finish, the listener
// closed and the peers too. It returns the exit status.
func (n *serveNode) run(sigs <-chan os.Signal) int {
	n.member.start()
	served := make(chan error, 1)
	go func() { served <- n.serveHTTP() }()
	select {
	case s := <-sigs:
		n.log.Printf("%v: draining (readiness and new requests answer 503; %d requests in flight)", s, n.inflight.count())
	case err := <-served:
		n.log.Printf("the client listener failed: %v", err)
		n.stop()
		return 1
	}
	idle := n.inflight.drain()
	closing := n.drainClose()
	bound := time.Duration(n.cfg.node.QuorumTimeoutMs)*time.Millisecond + 2*time.Second
	select {
	case <-idle:
		n.log.Printf("every request in flight was answered")
	case <-time.After(bound):
		// Stopping the loop answers them (504: they may have taken
		// effect) while their connections are still open.
		n.log.Printf("%d requests still in flight after %v; answering them 504", n.inflight.count(), bound)
		n.member.signalStop()
	}
	closing <- 2 * time.Second
	<-closing
	n.stop()
	n.log.Printf("stopped")
	return 0
}

// drainPoll and drainGrace: while draining, every drainPoll the client
// connections that have been quiet for drainGrace and read nothing since
// are closed. A client that sends its next request at once (within
// drainGrace of its last answer) gets it answered, 503 with Connection:
// close, instead of finding its connection closed under it. "At once"
// must cover a client starved of CPU: with 100 ms, one request of 755
// was cut in a run under -race beside two busy loops (its write went
// out before the reset came back, so its transport could not know that
// nothing was read). A second more of drain costs nothing a restart
// notices.
const (
	drainPoll  = 20 * time.Millisecond
	drainGrace = time.Second
)

// drainClose closes quiet client connections as the drain goes on. Send
// it how long the connections may take to finish once the requests in
// flight are answered: it then waits that long at most for every
// connection to end (each answer while draining closes its connection),
// closes the listener, and answers on the same channel when it is done.
func (n *serveNode) drainClose() chan time.Duration {
	ch := make(chan time.Duration)
	go func() {
		tick := time.NewTicker(drainPoll)
		defer tick.Stop()
		var limit time.Duration
		var deadline <-chan time.Time
	closing:
		for {
			left := n.conns.closeQuiet(drainGrace)
			if deadline != nil && left == 0 {
				break
			}
			select {
			case limit = <-ch:
				deadline = time.After(limit)
			case <-tick.C:
			case <-deadline:
				n.log.Printf("%d client connections still open %v after the last request in flight; closing them", left, limit)
				break closing
			}
		}
		n.httpLn.Close()
		ch <- 0
	}()
	return ch
}

// stop closes the client side, the loop and the peers.
func (n *serveNode) stop() {
	n.http.Close()
	n.stopLoops()
	if err := n.peers.Close(2 * time.Second); err != nil {
		n.log.Printf("%v", err)
	}
}

// startProfile writes a CPU profile when MAELSTROM_CPUPROFILE_DIR asks for
// one (internal/cpuprof), as the Maelstrom node does; it returns the stop.
func startProfile(getenv func(string) string, id string, logger *log.Logger) func() {
	dir := getenv(cpuprof.DirEnv)
	if dir == "" {
		return func() {}
	}
	path := filepath.Join(dir, fmt.Sprintf("serve-%s-%d.pprof", id, os.Getpid()))
	stop, err := cpuprof.Start(path, cpuprof.Limit(cpuprof.SecondsEnv, 0))
	if err != nil {
		logger.Printf("%s is set but profiling failed: %v", cpuprof.DirEnv, err)
		return func() {}
	}
	logger.Printf("writing a CPU profile to %s until exit", path)
	return stop
}

// inboxSize is each loop's inbox capacity with loops loops: about as many
// messages waiting in all as with one loop, and at least 512 each.
func inboxSize(loops int) int { return max(peer.DefaultInboxSize/loops, 512) }
