package simnet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netsim"
)

// Config is how the simulated network runs its nodes.
type Config struct {
	Launch  nodeproc.Launcher // starts a node program (nodeproc.ExecLauncher for --bin)
	Latency netsim.Latency    // node-to-node latency; client links have none
	// Strict fails the run on node output Maelstrom would reject; off,
	// the node is muted instead, as Maelstrom does.
	Strict     bool
	LogStderr  bool // mirror node stderr on the console
	LogNetSend bool // log every message sent (":send"), as Maelstrom's --log-net-send
	LogNetRecv bool // log every message delivered (":recv"), as Maelstrom's --log-net-recv
	// InitTimeout is how long a node has to answer init (the CLI's
	// --init-timeout); zero means Maelstrom's 10 s.
	InitTimeout time.Duration
}

// Network is the simulated network (harness.Network): node programs on
// stdin and stdout, clients c<k>, Maelstrom's network model, and faults
// as drop sets and signals.
type Network struct {
	cfg  Config
	host harness.Host
	net  *network
	fail *nodeproc.Failure

	mu         sync.Mutex // guards the clients
	nextClient int
	clients    []*client // every client opened and not yet closed
	opened     map[string]time.Time

	nodes       []*node
	restarts    sync.WaitGroup // starts in flight
	strays      atomic.Int64   // messages clients discarded as answering no request in flight
	lateReplies atomic.Int64   // replies to closed clients dropped because their node had been paused
}

// New checks cfg and returns the network; Start starts its nodes.
func New(cfg Config) (*Network, error) {
	if cfg.Launch == nil {
		return nil, errors.New("no node program (--bin)")
	}
	if err := cfg.Latency.Validate(); err != nil {
		return nil, err
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = InitTimeout
	}
	return &Network{cfg: cfg, opened: map[string]time.Time{}}, nil
}

// Name is "sim".
func (n *Network) Name() string { return "sim" }

// Supports partitions, kills and pauses (the faults of Maelstrom's
// process model), packet faults (netsim's) and clocks: it gives every
// program Host.NodeEnv, through which the runner applies them.
func (n *Network) Supports(f nemesis.Fault) bool { return slices.Contains(nemesis.KnownFaults, f) }

// Start registers every node before any starts (so no node can send to a
// peer the network does not know yet), starts the programs, sends each
// its init from c0..c(n-1) in parallel and waits for every init_ok. Then
// it opens the idle per-node setup clients c(n)..c(2n-1), as Maelstrom
// does, so worker clients start at c(2n).
func (n *Network) Start(ctx context.Context, host harness.Host) error {
	n.host = host
	n.fail = nodeproc.NewFailure(host.Fail)
	sim, err := netsim.New(n.cfg.Latency, host.Seed)
	if err != nil {
		return err
	}
	n.net = &network{Net: sim, console: host.Log, logSend: n.cfg.LogNetSend, logRecv: n.cfg.LogNetRecv}
	for _, id := range host.Nodes {
		n.net.Register(id)
	}
	initClients := make([]*client, len(host.Nodes))
	for i := range initClients {
		initClients[i] = n.newClient()
	}
	cfg := nodeConfig{net: n.net, launch: n.cfg.Launch, logDir: filepath.Join(host.Dir, "node-logs"), log: host.Log,
		mirror: n.cfg.LogStderr, strict: n.cfg.Strict, fail: n.fail.Set, lateReply: n.lateReply}
	for _, id := range host.Nodes {
		nd, err := startNode(id, cfg, host.EnvOf(id, host.Env))
		if err != nil {
			return err
		}
		n.nodes = append(n.nodes, nd)
	}
	if err := n.initAll(ctx, initClients); err != nil {
		return err
	}
	for _, c := range initClients {
		c.Close()
	}
	for range host.Nodes {
		n.newClient()
	}
	return nil
}

// OpenClient opens the next client c<k>.
func (n *Network) OpenClient() harness.Client { return n.newClient() }

// Apply applies one fault: a partition is the grudge's drop sets (healed
// all at once), kill and pause act on the chosen nodes that are up and
// running, resume on every paused node, start launches every killed node
// again with a fresh init, in parallel, in the background, and a packet
// fault goes on its nodes' links (netsim.StartPacket) until stop-packet.
func (n *Network) Apply(ctx context.Context, f harness.Fault) (harness.Applied, error) {
	switch f.F {
	case nemesis.StartPartition:
		n.net.Partition(f.Grudge)
	case nemesis.StopPartition:
		n.net.Heal()
	case nemesis.KillOp:
		return harness.Applied{Nodes: n.hit(f.Nodes, (*node).Kill)}, nil
	case nemesis.PauseOp:
		return harness.Applied{Nodes: n.hit(f.Nodes, (*node).Pause)}, nil
	case nemesis.ResumeOp:
		now := time.Now()
		return harness.Applied{Nodes: n.hit(n.host.Nodes, func(nd *node) bool { return nd.Resume(now) })}, nil
	case nemesis.StartOp:
		return n.startKilled(ctx, f.Env), nil
	case nemesis.StartPacket:
		return n.startPacket(f.Settings)
	case nemesis.StopPacket:
		return harness.Applied{Nodes: n.net.StopPacket()}, nil
	default:
		return harness.Applied{}, fmt.Errorf("the simulated network cannot apply %q", f.F)
	}
	return harness.Applied{}, nil
}

// startPacket puts a packet fault's settings on the links of its nodes;
// the completion records the settings applied.
func (n *Network) startPacket(settings any) (harness.Applied, error) {
	s, err := nemesis.PacketOf(settings)
	if err == nil {
		err = n.net.StartPacket(s.Nodes, netsim.PacketFault(s.LinkFault))
	}
	return harness.Applied{Nodes: s.Nodes, Value: s}, err
}

// hit applies act to the nodes ids names and lists those it acted on (a
// node already down, or already paused, is not hit again).
func (n *Network) hit(ids []string, act func(*node) bool) []string {
	hit := []string{}
	for _, nd := range n.nodes {
		if slices.Contains(ids, nd.id) && act(nd) {
			hit = append(hit, nd.id)
		}
	}
	return hit
}

// startKilled starts every killed node again, each with a fresh init from
// a new client, in parallel, on its own goroutine. A node that fails to
// start or to answer init fails the run, as a failed init does at start.
func (n *Network) startKilled(ctx context.Context, env []string) harness.Applied {
	dead, ids := nodeproc.DownOf(n.nodes)
	clients := make([]*client, len(dead))
	for i := range dead {
		clients[i] = n.newClient()
	}
	return harness.Restarting(ids, &n.restarts, func() error {
		errs := make([]error, len(dead))
		var wg sync.WaitGroup
		for i, nd := range dead {
			wg.Go(func() {
				if _, errs[i] = nd.Restart(n.host.EnvOf(nd.id, env)); errs[i] == nil {
					errs[i] = n.initNode(ctx, clients[i], nd.id)
				}
			})
		}
		wg.Wait()
		for _, c := range clients {
			c.Close()
		}
		for i, nd := range dead {
			if errs[i] != nil {
				return fmt.Errorf("restarting node %s: %w", nd.id, errs[i])
			}
		}
		return nil
	})
}

// Stop ends the test: from now on node output is moot, a restart still
// in flight is waited for (the runner cancelled its context), clients
// close, the network heals (not recorded, as in Maelstrom) and every
// program of every node is killed (continued first if paused) and waited
// for.
func (n *Network) Stop() {
	for _, nd := range n.nodes {
		nd.SetStopping()
	}
	n.restarts.Wait()
	n.mu.Lock()
	clients := slices.Clone(n.clients)
	n.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
	if n.net != nil {
		n.net.Heal()
		n.net.StopPacket()
	}
	for _, nd := range n.nodes {
		nd.stop()
	}
}

// Observed is what the network saw: every message counted and the
// journal's first and latest messages, the replies clients discarded or
// dropped, and the largest node's peak memory.
func (n *Network) Observed() harness.Observed {
	o := harness.Observed{StrayReplies: n.strays.Load(), LateRepliesDropped: n.lateReplies.Load()}
	if n.net != nil {
		stats := n.net.Stats()
		o.Messages, o.Journal = &stats, n.net.Journal()
	}
	var kib int64
	for _, nd := range n.nodes {
		kib = max(kib, nd.PeakMemoryKiB())
	}
	o.NodePeakMiB = float64(kib) / 1024
	return o
}

var _ harness.Network = (*Network)(nil)
