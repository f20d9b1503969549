package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netsim"
	"chunklease/workloads"
)

// Exit statuses of a run (contract section 2).
const (
	ExitValid   = 0 // every checker found the history valid
	ExitInvalid = 1 // some checker found it invalid
	ExitFailed  = 2 // the run itself failed: a node crashed, printed a bad line, init failed, bad flags
)

// Outcome is how a run ended.
type Outcome struct {
	Exit    int
	Dir     string   // the run's store directory; "" when none was made
	Err     error    // why the run failed (Exit 2)
	Results *Results // nil when no results were written
}

// errInterrupted is a run stopped by the user (Ctrl-C).
var errInterrupted = errors.New("interrupted: the run was stopped before its time limit")

// runner is one test run. Its loop goroutine owns the workload, the
// history and the workers; nodes and clients run on their own goroutines
// and talk to it through the network, channels and failure.
type runner struct {
	o       Options
	net     *netsim.Net
	console *console
	dir     string
	started time.Time // wall clock at the start, for the store and results
	start   time.Time // relative time 0 (after init), monotonic

	histFile *os.File
	hist     *workloads.Writer
	nodes    []*node
	failure  failure

	nextClient int
	clients    []*client // every client opened and not yet closed
	workers    []worker
	nextWorker int // where the search for a free worker starts

	schedule  *nemesis.Schedule // nil without --nemesis
	grudgeRNG *rand.Rand
	partition string // the target in force, "" when healed
	counts    opCounts
}

// Run performs one test: start the nodes, init them, drive the workload
// and the nemesis for the time limit, stop everything, check the history
// and write the store directory. The nodes are stopped whatever happens.
func Run(ctx context.Context, o Options) Outcome {
	if o.InitTimeout == 0 {
		o.InitTimeout = InitTimeout
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if err := o.validate(); err != nil {
		return Outcome{Exit: ExitFailed, Err: err}
	}
	r := &runner{o: o, console: newConsole(o.Stderr), started: time.Now()}
	r.failure.ch = make(chan struct{})
	if err := r.prepare(); err != nil {
		return Outcome{Exit: ExitFailed, Dir: r.dir, Err: err}
	}
	defer r.histFile.Close()
	fmt.Fprintf(o.Stdout, "maelstrom: %s workload, nodes %v, seed %d (reproduce with --seed %d)\nmaelstrom: writing %s\n",
		o.Workload.Name(), o.Nodes, o.Seed, o.Seed, r.dir)
	runErr := r.execute(ctx)
	if runErr == nil {
		runErr = r.failure.get() // a node that crashed as the main phase ended
	}
	return r.finish(runErr)
}

// prepare makes the store directory, the history file and the network.
func (r *runner) prepare() error {
	dir, err := makeRunDir(r.o.StoreDir, r.o.Workload.Name(), r.started)
	if err != nil {
		return err
	}
	r.dir = dir
	if r.histFile, err = os.Create(filepath.Join(dir, "history.jsonl")); err != nil {
		return err
	}
	r.hist = workloads.NewWriter(r.histFile)
	if r.net, err = netsim.New(r.o.Latency, mix(r.o.Seed, 1)); err != nil {
		return err
	}
	if r.o.Nemesis {
		rng := rand.New(rand.NewPCG(mix(r.o.Seed, 2), 0))
		if r.schedule, err = nemesis.NewSchedule(r.o.NemesisInterval, rng); err != nil {
			return err
		}
		r.grudgeRNG = rand.New(rand.NewPCG(mix(r.o.Seed, 3), 0))
	}
	r.workers = make([]worker, r.o.Concurrency)
	for i := range r.workers {
		r.workers[i].process = i
	}
	return nil
}

// execute runs setup, the main phase and teardown; the nodes are stopped
// on every path.
func (r *runner) execute(ctx context.Context) error {
	defer r.teardown()
	if err := r.setup(ctx); err != nil {
		return err
	}
	r.start = time.Now()
	r.net.Heal() // nemesis setup
	return r.loop(ctx)
}

// failure records the first thing that makes the run fail.
type failure struct {
	once sync.Once
	err  error
	ch   chan struct{} // closed when err is set
}

func (f *failure) set(err error) {
	f.once.Do(func() { f.err = err; close(f.ch) })
}

// get returns the failure, or nil.
func (f *failure) get() error {
	select {
	case <-f.ch:
		return f.err
	default:
		return nil
	}
}

// newClient opens the next client c<k>.
func (r *runner) newClient() *client {
	c := &client{name: fmt.Sprintf("c%d", r.nextClient)}
	r.nextClient++
	r.net.Register(c.name)
	r.clients = append(r.clients, c)
	return c
}

// closeClient closes c: later replies to it are a node error.
func (r *runner) closeClient(c *client) {
	r.net.Close(c.name)
	for i, x := range r.clients {
		if x == c {
			r.clients = append(r.clients[:i], r.clients[i+1:]...)
			break
		}
	}
}

// teardown ends the test: from now on node output is moot, clients close,
// the network heals (not recorded, as in Maelstrom) and every node is
// killed and waited for.
func (r *runner) teardown() {
	for _, n := range r.nodes {
		n.stopping.Store(true)
	}
	for len(r.clients) > 0 {
		r.closeClient(r.clients[0])
	}
	r.net.Heal()
	for _, n := range r.nodes {
		n.proc.Kill()
	}
	for _, n := range r.nodes {
		n.stop()
	}
}

// now is the time since relative time 0.
func (r *runner) now() time.Duration { return time.Since(r.start) }

// record appends an op to the history; a write error fails the run.
func (r *runner) record(op workloads.Op) {
	if _, err := r.hist.Append(op); err != nil {
		r.failure.set(fmt.Errorf("writing the history: %w", err))
	}
}
