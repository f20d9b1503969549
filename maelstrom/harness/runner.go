package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netsim"
	"chunklease/report"
	"chunklease/workloads"
)

// Exit statuses of a run, as real Maelstrom's (report.ExitValid ...).
const (
	ExitValid   = report.ExitValid
	ExitInvalid = report.ExitInvalid
	ExitUnknown = report.ExitUnknown
	ExitBadArgs = report.ExitBadArgs
	ExitFailed  = report.ExitFailed
)

// Outcome is how a run ended.
type Outcome struct {
	Exit    int
	Dir     string          // the run's store directory; "" when none was made
	Err     error           // why the run failed (ExitFailed) or the options were bad (ExitBadArgs)
	Results *report.Results // nil when no results were written
}

// errInterrupted is a run stopped by the user (Ctrl-C).
var errInterrupted = errors.New("interrupted: the run was stopped before its time limit")

// runner is one test run. Its loop goroutine owns the workload, the
// history and the workers; nodes and clients run on their own goroutines
// and talk to it through the network, channels and failure.
type runner struct {
	o       Options
	net     *network
	console *console
	dir     string
	started time.Time // wall clock at the start, for the store and results
	start   time.Time // relative time 0 (after init), monotonic

	histFile *os.File
	histBuf  *bufio.Writer   // flushed at every progress tick and at the end
	hist     *history.Writer // keeps no op: the analysis reads the file back
	nodes    []*node
	failure  failure
	leaseMs  int64 // the workload's longest lease (0: none)
	// nodeLeases: the workload's leases have the nodes' own length
	// (workloads.NodeLeased), so nodes get it in every run (nodeEnv).
	nodeLeases bool

	nextClient int
	clients    []*client    // every client opened and not yet closed
	strays     atomic.Int64 // messages clients discarded as answering no request in flight
	opened     clientTimes
	workers    []worker
	nextWorker int // where the search for a free worker starts
	done       chan callResult
	inFlight   int // client ops started and not yet completed

	schedule  *nemesis.Schedule // nil without --nemesis
	grudgeRNG *rand.Rand
	procRNG   *rand.Rand // the nodes a kill or pause hits
	partition string     // the target in force, "" when healed
	nemesis   nemesisWork
	final     finalState
	counts    opCounts
	ticker    *time.Ticker // redraws the progress line
	// stored is the stored run being analysed again (Analyze); nil in a
	// live run.
	stored *report.StoredRun
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
		return Outcome{Exit: ExitBadArgs, Err: err}
	}
	r := &runner{o: o, console: newConsole(o.Stderr), started: time.Now(),
		leaseMs: workloads.LongestLeaseMs(o.Workload), nodeLeases: workloads.HasNodeLeases(o.Workload)}
	r.failure.ch = make(chan struct{})
	r.opened.at = map[string]time.Time{}
	if err := r.prepare(); err != nil {
		if r.histFile != nil {
			r.histFile.Close()
		}
		return Outcome{Exit: ExitFailed, Dir: r.dir, Err: err}
	}
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
	if r.histFile, err = os.Create(filepath.Join(dir, historyFile)); err != nil {
		return err
	}
	r.histBuf = bufio.NewWriterSize(r.histFile, historyBufferBytes)
	r.hist = history.NewStreamWriter(r.histBuf)
	sim, err := netsim.New(r.o.Latency, mix(r.o.Seed, 1))
	if err != nil {
		return err
	}
	r.net = &network{Net: sim, console: r.console, logSend: r.o.LogNetSend, logRecv: r.o.LogNetRecv}
	if r.o.Faults.Any() {
		partRNG := rand.New(rand.NewPCG(mix(r.o.Seed, 2), 0))
		schedRNG := rand.New(rand.NewPCG(mix(r.o.Seed, 5), 0))
		if r.schedule, err = nemesis.NewSchedule(r.o.Faults, r.o.NemesisInterval, partRNG, schedRNG); err != nil {
			return err
		}
		r.grudgeRNG = rand.New(rand.NewPCG(mix(r.o.Seed, 3), 0))
		r.procRNG = rand.New(rand.NewPCG(mix(r.o.Seed, 6), 0))
	}
	r.nemesis.done = make(chan restartResult, 1)
	r.nemesis.ctx, r.nemesis.cancel = context.WithCancel(context.Background())
	r.done = make(chan callResult, r.o.Concurrency)
	r.workers = make([]worker, r.o.Concurrency)
	for i := range r.workers {
		r.workers[i].process = i
	}
	return nil
}

// execute runs setup, the main phase, the final phase and teardown; the
// nodes are stopped on every path.
func (r *runner) execute(ctx context.Context) error {
	defer r.teardown()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // first: client calls still in flight give up
	if err := r.setup(ctx); err != nil {
		return err
	}
	r.start = time.Now()
	r.net.Heal() // nemesis setup
	r.ticker = time.NewTicker(progressEvery)
	defer r.ticker.Stop()
	if err := r.mainPhase(ctx); err != nil {
		return err
	}
	return r.finalPhase(ctx)
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
	c := &client{name: fmt.Sprintf("c%d", r.nextClient), stray: r.noteStray}
	r.nextClient++
	r.opened.set(c.name, time.Now())
	r.net.Register(c.name)
	r.clients = append(r.clients, c)
	return c
}

// noteStray counts a message a client discarded because it answers no
// request in flight (a stale reply, a duplicate, a wrong in_reply_to) and
// warns on the first: Maelstrom's clients discard them silently, but a
// node whose every reply is discarded otherwise looks merely silent.
func (r *runner) noteStray(client string, msgID int64, m netsim.Message) {
	if r.strays.Add(1) == 1 {
		r.console.println(fmt.Sprintf("maelstrom: warning: %s discarded a message from %s that answers no request in flight (its request is msg_id %d): %s; "+
			"Maelstrom's clients discard these too (results.json net.stray_replies counts them)", client, m.Src, msgID, truncate(string(m.Body), 300)))
	}
}

// clientTimes remembers when each client was opened, for nodes' reader
// goroutines deciding whether a late reply is a pause's doing.
type clientTimes struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (c *clientTimes) set(name string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at[name] = t
}

func (c *clientTimes) get(name string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.at[name]
	return t, ok
}

// lateReply is nodeConfig.lateReply: a reply to a closed client is a
// pause's doing when the node was paused at some time after the client
// was opened (the request, or the reply, waited in a stopped process).
// Such replies are dropped and counted; any other is judged.
func (r *runner) lateReply(n *node, client string) bool {
	opened, ok := r.opened.get(client)
	if !ok || !n.pausedSince(opened) {
		return false
	}
	r.nemesis.lateReplies.Add(1)
	return true
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

// teardown ends the test: from now on node output is moot, a restart
// still in flight is waited for, clients close, the network heals (not
// recorded, as in Maelstrom) and every program of every node is killed
// (continued first if paused) and waited for.
func (r *runner) teardown() {
	for _, n := range r.nodes {
		n.stopping.Store(true)
	}
	if r.nemesis.busy {
		r.nemesis.cancel() // a restart's init in flight gives up
		<-r.nemesis.done
		r.nemesis.busy = false
	}
	for len(r.clients) > 0 {
		r.closeClient(r.clients[0])
	}
	r.net.Heal()
	for _, n := range r.nodes {
		n.stop()
	}
}

// historyBufferBytes buffers history.jsonl: a run writes two lines per op.
const historyBufferBytes = 256 << 10

// flushHistory writes out what the history buffer holds, so the file is
// never more than a progress tick behind (tail -f, a harness killed
// mid-run). Only the loop goroutine appends and flushes.
func (r *runner) flushHistory() {
	if err := r.histBuf.Flush(); err != nil {
		r.failure.set(fmt.Errorf("writing the history: %w", err))
	}
}

// closeHistory flushes and closes history.jsonl before the analysis reads
// it back.
func (r *runner) closeHistory() error {
	err := r.histBuf.Flush()
	if cerr := r.histFile.Close(); err == nil {
		err = cerr
	}
	return err
}

// now is the time since relative time 0.
func (r *runner) now() time.Duration { return time.Since(r.start) }

// record stamps op with the time now and appends it to the history; a
// write error fails the run. Only the loop goroutine records, and it
// reads the clock as it appends, so the history is in time order
// whatever time the op's caller had in hand.
func (r *runner) record(op history.Op) {
	op.Time = int64(r.now())
	if _, err := r.hist.Append(op); err != nil {
		r.failure.set(fmt.Errorf("writing the history: %w", err))
	}
}
