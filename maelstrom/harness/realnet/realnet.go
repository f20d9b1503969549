package realnet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netns"
)

// Config is how the real network runs its nodes.
type Config struct {
	// Bin is the node program, canonical (nodeproc.CanonicalBin); every
	// node runs `Bin serve <its flags> Args...`.
	Bin  string
	Args []string // extra words after the harness's serve flags
	// LatencyMs is --latency: a constant delay on every node-to-node
	// packet (netns.Lab.SetLatency); clients' packets get none.
	LatencyMs int
	LogStderr bool // mirror node stderr on the console
	// ReadyTimeout bounds how long a node has to become ready (/readyz at
	// the start, /healthz after a restart): the CLI's --init-timeout;
	// zero means 10 s, Maelstrom's init timeout.
	ReadyTimeout time.Duration
}

// DefaultReadyTimeout is Config.ReadyTimeout's default.
const DefaultReadyTimeout = 10 * time.Second

// Network is the real network (harness.Network): every node `BIN serve`
// in its own network namespace, HTTP clients from the lab's client
// namespace, faults by the kernel.
type Network struct {
	cfg  Config
	host harness.Host
	lab  *netns.Lab
	fail *nodeproc.Failure

	certDir  string
	cluster  string           // -cluster: every member as id=addr:peerPort
	nodes    []*nodeproc.Node // in host.Nodes order; nil entries never started
	byID     map[string]int   // node id -> index in host.Nodes
	launched map[string]bool  // the node's first program was started (guarded by mu)
	packet   []string         // the nodes whose links have a packet fault
	dials    *dials           // every dial from the client namespace
	http     *http.Client     // the harness's clients, from the client namespace
	probe    *http.Client     // readiness probes, short timeouts
	restarts sync.WaitGroup   // starts in flight
	observed *Observations    // taken as the network stops
	mu       sync.Mutex       // guards launched
	stopOnce sync.Once
}

// New checks cfg and returns the network; Start builds the lab and
// starts the nodes.
func New(cfg Config) (*Network, error) {
	if cfg.Bin == "" {
		return nil, errors.New("no node program (--bin)")
	}
	if cfg.LatencyMs < 0 {
		return nil, fmt.Errorf("latency must be >= 0 ms, got %d", cfg.LatencyMs)
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
	return &Network{cfg: cfg, byID: map[string]int{}, launched: map[string]bool{}}, nil
}

// Name is "netns", the --network value.
func (n *Network) Name() string { return "netns" }

// Supports every fault: partitions and packet faults are the kernel's,
// kills and pauses are signals, and clocks the runner's own (each node's
// program gets Host.NodeEnv, which names its clock file).
func (n *Network) Supports(f nemesis.Fault) bool { return slices.Contains(nemesis.KnownFaults, f) }

// Start builds the lab (removing stale ones first, saying so), sets the
// latency, makes the certificates, starts every node's first program
// with a boot wait of 0 (nothing to forget yet) and waits until each
// answers /readyz. A node that does not fails the run with its log's
// last lines.
func (n *Network) Start(ctx context.Context, host harness.Host) error {
	n.host = host
	n.fail = nodeproc.NewFailure(host.Fail)
	for i, id := range host.Nodes {
		n.byID[id] = i
	}
	n.nodes = make([]*nodeproc.Node, len(host.Nodes))
	lab, err := netns.Create(ctx, netns.Config{Nodes: host.Nodes, Seed: host.Seed,
		Logf: func(format string, args ...any) { host.Log("netns: " + fmt.Sprintf(format, args...)) }})
	if err != nil {
		if ctx.Err() != nil {
			return harness.ErrInterrupted
		}
		return err // netns says what is missing (root, a kernel feature)
	}
	n.lab = lab
	if n.cfg.LatencyMs > 0 {
		if err := lab.SetLatency(n.cfg.LatencyMs); err != nil {
			return fmt.Errorf("--latency %d: %w", n.cfg.LatencyMs, err)
		}
	}
	n.http, n.probe = n.newClients()
	if err := n.makeCerts(); err != nil {
		return err
	}
	for i, id := range host.Nodes {
		nd, err := nodeproc.Start(id, n.procConfig(id), host.EnvOf(id, host.Env))
		if err != nil {
			return err
		}
		n.nodes[i] = nd
	}
	return n.awaitAll(ctx, host.Nodes, readyPath)
}

// OpenClient opens a new client. Clients share one HTTP transport (its
// connections are kept alive); a client's identity only matters to the
// runner, which retires it after an indefinite outcome.
func (n *Network) OpenClient() harness.Client { return &client{net: n} }

// Stop ends the test: a restart in flight is waited for (the runner
// cancelled it), what the kernel counted is read, every program is killed
// and reaped, and the lab goes with its namespaces, links, rules and
// queues (Lab.Close, which also kills anything left in them and says
// so). A lab that cannot be removed whole fails the run (exit 255) with
// Close's error, which says how to remove the rest.
func (n *Network) Stop() {
	n.stopOnce.Do(n.stop)
}

func (n *Network) stop() {
	for _, nd := range n.nodes {
		if nd != nil {
			nd.SetStopping()
		}
	}
	n.restarts.Wait()
	if n.http != nil {
		n.dials.close() // before the lab goes: no thread may enter a namespace being deleted
		n.http.CloseIdleConnections()
		n.probe.CloseIdleConnections()
	}
	n.observed = n.observe()
	for _, nd := range n.nodes {
		if nd != nil {
			nd.Stop()
		}
	}
	if n.lab != nil {
		if err := n.lab.Close(); err != nil {
			// Left behind, the lab would break every later run: the run
			// fails, and the error says how to remove what is left.
			err = fmt.Errorf("the real network's lab was not removed whole: %w", err)
			n.host.Log("ERROR " + err.Error())
			n.fail.Set(err)
		}
	}
}

// Observed is what the network saw: no message counts (the kernel
// carries the messages), the largest node's peak memory, and what the
// kernel and the delay paths counted per node (Observations).
func (n *Network) Observed() harness.Observed {
	o := harness.Observed{}
	var kib int64
	for _, nd := range n.nodes {
		if nd != nil {
			kib = max(kib, nd.PeakMemoryKiB())
		}
	}
	o.NodePeakMiB = float64(kib) / 1024
	if n.observed != nil {
		n.observed.fillMemory(n.nodes, n.host.Nodes)
		o.Network = n.observed
	}
	return o
}

// node is node id's supervisor; nil for an id the run does not have.
func (n *Network) node(id string) *nodeproc.Node {
	i, ok := n.byID[id]
	if !ok {
		return nil
	}
	return n.nodes[i]
}

// hit applies act to the nodes ids names, in node order, and lists those
// it acted on (a node already down, or already paused, is not hit again).
func (n *Network) hit(ids []string, act func(*nodeproc.Node) bool) []string {
	hit := []string{}
	for _, nd := range n.nodes {
		if nd != nil && slices.Contains(ids, nd.ID()) && act(nd) {
			hit = append(hit, nd.ID())
		}
	}
	return hit
}

var _ harness.Network = (*Network)(nil)
