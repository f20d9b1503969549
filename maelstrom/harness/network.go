package harness

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netsim"
)

// The seam between the runner and the system under test. The runner owns
// the workload, the workers and their Jepsen processes, the nemesis
// schedule and every random choice it makes (shapes, grudges, the nodes a
// kill or pause hits), the history, the final phase and the analysis. A
// Network owns the nodes, the way clients reach them and the way a fault
// is applied to them. Package simnet is today's network (Maelstrom's
// process model over the simulated network of package netsim); a second
// one (nodes as `BIN serve` in Linux network namespaces, HTTP clients,
// faults by the kernel) implements the same interface, and nothing on the
// runner's side of the seam changes.

// Network is the nodes under test, the network between them and the
// harness's clients, and how faults are applied to them. The runner calls
// Start once, then OpenClient, Apply and the clients' methods from its
// loop goroutine (Client.Call on a goroutine of its own per op), and Stop
// once on every path, after Start even when Start failed; Observed after
// Stop. Supports may be called before Start.
type Network interface {
	// Name names the network in messages ("sim").
	Name() string
	// Supports reports whether the network can apply fault f; the run
	// refuses a --nemesis it cannot apply before anything starts. A
	// network supports nemesis.Clock by passing Host.NodeEnv to every
	// program it starts.
	Supports(f nemesis.Fault) bool
	// Start brings every node of host.Nodes up and ready for clients
	// (Maelstrom: started and answered init).
	Start(ctx context.Context, host Host) error
	// OpenClient opens a new client (Maelstrom: c<k>), the identity one
	// worker uses until the runner retires it after an indefinite
	// outcome, as Maelstrom's process model does.
	OpenClient() Client
	// Apply performs one fault action. Every action but bringing nodes
	// back completes before Apply returns; a start may take time (the
	// nodes boot and are probed): Applied.Done then delivers its outcome
	// once, and the runner performs no other fault before it. ctx is
	// cancelled when the run ends: an action in flight gives up.
	Apply(ctx context.Context, f Fault) (Applied, error)
	// Stop ends the test: every client closed, every fault healed, every
	// process it started, restarted ones included, killed and reaped.
	// Output from nodes after Stop begins is not held against them.
	Stop()
	// Observed is what the network saw, for results.json and the report.
	Observed() Observed
}

// Host is what the runner gives a network when the run starts.
type Host struct {
	Dir   string   // the run directory; each node's stderr goes to Dir/node-logs/<id>.log
	Nodes []string // node ids, in the CLI's order
	Env   []string // extra environment of every node's program ("KEY=value")
	// NodeEnv, when not nil, is extra environment for node id's program
	// at every start and restart, after Env and a restart's Fault.Env (the
	// clock nemesis's LEASE_CLOCK_FILE). A network that passes it on
	// supports the clock fault: the runner applies that fault itself,
	// through the files it names. nil: none.
	NodeEnv func(id string) []string
	Seed    uint64 // the network's own random stream (latency draws)
	// Fail fails the run with err: a node crashed outside the kill
	// nemesis, printed output the protocol forbids, never became ready.
	Fail func(err error)
	// Log writes a line to the console (warnings, --log-net-* lines).
	Log func(line string)
}

// EnvOf is the extra environment of node id's program: env (Env at the
// first start, a restart's Fault.Env after a kill) and then NodeEnv(id).
func (h Host) EnvOf(id string, env []string) []string {
	if h.NodeEnv == nil {
		return env
	}
	return append(append([]string(nil), env...), h.NodeEnv(id)...)
}

// Client is one client identity of the harness.
type Client interface {
	// Call sends req (a request body with "type" and the op's fields, as
	// the workload renders it) to node and waits up to timeout for the
	// reply body. It returns an error that is ErrTimeout when no reply
	// came (the op may have happened: the workload records it as info or
	// fail), ctx's error when the run is ending, and any other error when
	// the request could not be made at all (the run fails).
	Call(ctx context.Context, node string, req json.RawMessage, timeout time.Duration) (json.RawMessage, error)
	// Close retires the client: a reply that comes later is discarded.
	Close()
}

// ErrTimeout is a call whose reply did not come in time (Maelstrom's
// client timeout; an HTTP 504 or a broken connection on a real network).
var ErrTimeout = errors.New("timed out")

// Fault is one nemesis action, with the random choices the runner made
// for it from the shared schedule.
type Fault struct {
	// F is the history's f: nemesis.StartPartition, StopPartition,
	// KillOp, StartOp, PauseOp, ResumeOp, and (for networks that apply
	// it) StartPacket, StopPacket. Clock ops never reach a network: the
	// runner applies them (clock.go).
	F string
	// Grudge is a start-partition's: each receiver and the senders whose
	// messages it drops (per-receiver drop sets; a real network turns it
	// into packet filter rules).
	Grudge nemesis.Grudge
	// Nodes are the nodes a kill or pause picked (a node already down or
	// paused is skipped by the network). Start and resume act on every
	// node the fault holds.
	Nodes []string
	// Env is the extra environment of restarted programs (start).
	Env []string
	// Settings are the drawn settings of a fault that carries them
	// (nemesis.PacketSettings, nemesis.ClockSettings); nil otherwise.
	Settings any
}

// Applied is what a fault action did.
type Applied struct {
	// Nodes are the nodes it acted on (kill, start, pause, resume): the
	// history's completion value of those ops.
	Nodes []string
	// Value, when not nil, is the completion value of an action whose
	// result is not a node list (a packet or clock fault's settings as
	// applied).
	Value any
	// Done, when not nil, delivers the outcome of an action still in
	// flight (a start), once; nil means the action is complete.
	Done <-chan error
}

// Restarting is how a network reports a start it performs in the
// background: Applied lists ids, the nodes it brings back, and its Done
// delivers restart's outcome once restart returns, on a goroutine that
// wg tracks (so that Stop can wait for it). With no ids there is nothing
// to do: Applied lists none and has no Done.
func Restarting(ids []string, wg *sync.WaitGroup, restart func() error) Applied {
	a := Applied{Nodes: append([]string{}, ids...)}
	if len(ids) == 0 {
		return a
	}
	done := make(chan error, 1)
	a.Done = done
	wg.Add(1)
	go func() {
		defer wg.Done()
		done <- restart()
	}()
	return a
}

// Observed is what the network saw during the run. The message counts
// and the journal exist only where the network carries every message
// itself (the simulated one): without them results.json has no message
// counts and the report no messages.svg.
type Observed struct {
	Messages           *netsim.Stats  // message counts; nil when not counted
	Journal            []netsim.Entry // the first and latest messages; nil without a journal
	StrayReplies       int64          // replies clients discarded as answering no request in flight
	LateRepliesDropped int64          // replies to closed clients dropped because their node had been paused
	NodePeakMiB        float64        // the largest peak resident memory of a node program; 0 when unknown
	// Network is what this network alone observes (the real one: what
	// the kernel and its delay paths counted per node), written to
	// results.json as "network_observed"; nil: nothing.
	Network any
}
