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
	"time"

	"chunklease/history"
	"chunklease/maelstrom/nemesis"
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

// ErrInterrupted is a run stopped by the user (Ctrl-C); a network whose
// Start is interrupted returns it too.
var ErrInterrupted = errors.New("interrupted: the run was stopped before its time limit")

// runner is one test run. Its loop goroutine owns the workload, the
// history and the workers; nodes and clients run on their own goroutines
// and talk to it through the network, channels and failure.
type runner struct {
	o        Options
	net      Network
	observed Observed // what the network saw, once it stopped
	console  *console
	dir      string
	started  time.Time // wall clock at the start, for the store and results
	start    time.Time // relative time 0 (after init), monotonic

	histFile *os.File
	histBuf  *bufio.Writer   // flushed at every progress tick and at the end
	hist     *history.Writer // keeps no op: the analysis reads the file back
	failure  failure
	leaseMs  int64 // the workload's longest lease (0: none)
	// nodeLeases: the workload's leases have the nodes' own length
	// (workloads.NodeLeased), so nodes get it in every run (nodeEnv).
	nodeLeases bool

	workers    []worker
	nextWorker int // where the search for a free worker starts
	done       chan callResult
	inFlight   int // client ops started and not yet completed

	schedule  *nemesis.Schedule // nil without --nemesis
	grudgeRNG *rand.Rand
	procRNG   *rand.Rand // the nodes a kill or pause hits
	packetRNG *rand.Rand // the nodes a packet fault hits
	faults    faultState // what is in force, for the progress line
	nemesis   nemesisWork
	clock     *clockWork // the clock nemesis's files and draws; nil without it
	member    memberWork // the member nemesis's view of the configuration (member.go)
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
	if err := r.prepare(); err != nil {
		if r.histFile != nil {
			r.histFile.Close()
		}
		return Outcome{Exit: ExitFailed, Dir: r.dir, Err: err}
	}
	fmt.Fprintf(o.Stdout, "maelstrom: %s workload, nodes %v, seed %d (reproduce with --seed %d)\nmaelstrom: writing %s\n",
		o.Workload.Name(), o.Nodes, o.Seed, o.Seed, r.dir)
	if r.clock != nil {
		fmt.Fprintln(o.Stdout, r.clock.describe())
	}
	runErr := r.execute(ctx)
	if runErr == nil {
		runErr = r.failure.get() // a node that crashed as the main phase ended
	}
	return r.finish(runErr)
}

// prepare makes the store directory, the history file, the nemesis
// schedule and the clock files.
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
	r.net = r.o.Network
	if r.o.Faults.Any() {
		stream := func(n uint64) *rand.Rand { return rand.New(rand.NewPCG(StreamSeed(r.o.Seed, n), 0)) }
		streams := nemesis.Streams{Partition: stream(2), Process: stream(5), Clock: stream(7), Packet: stream(9), Member: stream(11)}
		if r.schedule, err = nemesis.NewSchedule(r.o.Faults, r.o.NemesisInterval, streams); err != nil {
			return err
		}
		r.grudgeRNG, r.procRNG, r.packetRNG = stream(3), stream(6), stream(10)
		r.startMembers(stream(12))
	}
	if err := r.prepareClock(); err != nil {
		return err
	}
	r.nemesis.ctx, r.nemesis.cancel = context.WithCancel(context.Background())
	r.done = make(chan callResult, r.o.Concurrency)
	r.workers = make([]worker, r.o.Concurrency)
	for i := range r.workers {
		r.workers[i].process = i
	}
	return nil
}

// execute starts the network, runs the main phase and the final phase,
// and tears down; the nodes are stopped on every path.
func (r *runner) execute(ctx context.Context) error {
	defer r.teardown()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // first: client calls still in flight give up
	host := Host{Dir: r.dir, Nodes: r.o.Nodes, Env: r.nodeEnv(false), Seed: StreamSeed(r.o.Seed, 1),
		Fail: r.failure.set, Log: r.console.println}
	if r.clock != nil {
		host.NodeEnv = r.clock.env
	}
	if err := r.net.Start(ctx, host); err != nil {
		return err
	}
	if err := r.verifyClockfault(ctx); err != nil {
		return err
	}
	r.start = time.Now()
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

// teardown ends the test: a fault action in flight (a restart, a
// strobe) gives up, and the network stops: clients close, the network heals (not
// recorded, as in Maelstrom) and every program of every node is killed
// and waited for.
func (r *runner) teardown() {
	r.nemesis.cancel()
	r.nemesis.bg.Wait()
	r.net.Stop()
	r.observed = r.net.Observed()
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
