package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"chunklease/internal/cpuprof"
	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/harness/realnet"
	"chunklease/maelstrom/harness/simnet"
	"chunklease/workloads"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	softMemoryLimit()
	stopProfile := startProfile()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// softMemoryLimitBytes is the harness's soft memory limit unless
// GOMEMLIMIT sets another. Most of the harness's heap is garbage between
// collections (history lines, decoded replies); with the default GOGC
// alone, a 120 s run at 2000 ops/s over 100 000 chunks peaked at about
// 200 MiB, with this limit at about 150 MiB for the same CPU. A run whose
// live data outgrows the limit only collects more often (the runtime
// caps the collector at half the CPU); GOMEMLIMIT=off lifts it.
const softMemoryLimitBytes = 160 << 20

// softMemoryLimit sets softMemoryLimitBytes unless GOMEMLIMIT is set
// (the runtime reads that itself). Nodes inherit the environment, not
// this setting.
func softMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimitBytes)
	}
}

// startProfile writes the harness's CPU profile to
// $MAELSTROM_CPUPROFILE_DIR/harness-<pid>.pprof when that is set, until
// exit or for MAELSTROM_CPUPROFILE_S seconds; the nodes, which inherit the
// environment, profile themselves (package maelstrom, profile.go).
func startProfile() (stop func()) {
	dir := os.Getenv(cpuprof.DirEnv)
	if dir == "" {
		return func() {}
	}
	path := filepath.Join(dir, fmt.Sprintf("harness-%d.pprof", os.Getpid()))
	stop, err := cpuprof.Start(path, cpuprof.Limit(cpuprof.SecondsEnv, 0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "maelstrom: %s is set but profiling failed: %v\n", cpuprof.DirEnv, err)
		return func() {}
	}
	return stop
}

// commandUsage is what a bare or unknown command prints on stderr before
// exiting 254 (bad arguments), and --help on stdout before exiting 0.
const commandUsage = `Usage: maelstrom COMMAND [OPTIONS ...]
Commands: test, analyze

Run "maelstrom test --help" for the options of test, and "maelstrom
analyze --help" for analyze. Maelstrom's other commands (serve, demo,
doc) are not provided.
`

const testUsage = `Usage: maelstrom test [OPTIONS ...] [-- NODE-ARGS ...]

Runs the node program (--bin) as Maelstrom does, drives a workload through
a simulated network with the chosen faults, checks the history and writes
store/<workload>/<time>/ (store/latest points at the last run). With
--network netns (root), every node runs as BIN serve in its own Linux
network namespace and every fault is the kernel's. Options may
come before or after other words; words that are not options, and every
word after --, are passed to the node program.

Exit status: 0 valid, 1 invalid, 2 validity unknown, 254 bad arguments,
255 the run failed (a node crashed or never answered init, a checker
crashed).

Options:
`

// run is the whole command: parse, run, report. It returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0: // no command: bad arguments, and the usage says what to type
		fmt.Fprint(stderr, commandUsage)
		return harness.ExitBadArgs
	case args[0] == "analyze":
		return analyze(args[1:], stdout, stderr)
	case args[0] == "--help" || args[0] == "-h": // asked for: the usage is the output
		fmt.Fprint(stdout, commandUsage)
		return harness.ExitValid
	case args[0] != "test":
		fmt.Fprintf(stderr, "maelstrom: unknown command %q\n", args[0])
		fmt.Fprint(stderr, commandUsage)
		return harness.ExitBadArgs
	}
	f, err := parseTest(args[1:])
	if f.help {
		printUsage(stdout)
		return harness.ExitValid
	}
	if err != nil {
		fmt.Fprintf(stderr, "maelstrom: %v\n", err)
		return harness.ExitBadArgs
	}
	exit := harness.ExitValid
	for i := range f.TestCount {
		if i > 0 {
			f.Seed++ // each repetition its own schedule, each printed
		}
		opts, err := f.options()
		if err != nil {
			fmt.Fprintf(stderr, "maelstrom: %v\n", err)
			return harness.ExitBadArgs
		}
		opts.Command = append([]string{"maelstrom"}, args...)
		opts.Stdout, opts.Stderr = stdout, stderr
		out := harness.Run(ctx, opts)
		if out.Err != nil && out.Dir == "" {
			fmt.Fprintf(stderr, "maelstrom: %v\n", out.Err)
		}
		if exit = out.Exit; exit != harness.ExitValid {
			break // as Jepsen, stop at the first run that is not valid
		}
	}
	return exit
}

// printUsage prints the help of test.
func printUsage(w io.Writer) {
	fmt.Fprint(w, testUsage)
	fmt.Fprint(w, newTestFlagSet(&testFlags{}).FlagUsages())
}

// parseTest parses the arguments of `maelstrom test` and checks every
// value; errors are worded as Maelstrom words them. The flags come back
// even on error, so that --help wins over other mistakes.
func parseTest(args []string) (*testFlags, error) {
	f := &testFlags{}
	fs := newTestFlagSet(f)
	if err := fs.Parse(args); err != nil {
		f.help = asksHelp(args) // as tools.cli, help wins over bad options
		return f, parseError(err)
	}
	if f.help {
		return f, nil
	}
	f.Args = fs.Args()
	f.countGiven = fs.Changed("node-count")
	if f.Bin == "" {
		return f, errors.New("Expected a --bin PATH_TO_BINARY to test")
	}
	if !f.seedSet {
		f.Seed = rand.Uint64() >> 1 // printed at start, so any run can be replayed
	}
	_, err := f.options()
	return f, err
}

// asksHelp reports whether -h or --help comes before any "--".
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help":
			return true
		}
	}
	return false
}

// options validates the flags and builds the run options, with the
// chosen network running --bin.
func (f *testFlags) options() (harness.Options, error) {
	bin, binErr := nodeproc.CanonicalBin(f.Bin)
	o, err := f.runOptions()
	if err = errors.Join(binErr, err); err != nil {
		return harness.Options{}, err
	}
	if o.Network, err = f.network(bin); err != nil {
		return harness.Options{}, err
	}
	return o, nil
}

// network is the --network that runs bin: the simulated one (Maelstrom's
// process model), or the real one (bin serve in network namespaces).
func (f *testFlags) network(bin string) (harness.Network, error) {
	if f.Network == "netns" {
		ready, _ := f.initTimeout() // runOptions has checked it
		return realnet.New(realnet.Config{Bin: bin, Args: f.Args, LatencyMs: f.LatencyMs, LogStderr: f.LogStderr, ReadyTimeout: ready})
	}
	cfg := f.simConfig()
	cfg.Launch = nodeproc.ExecLauncher(bin, f.Args)
	return simnet.New(cfg)
}

// simConfig is the simulated network's configuration from the flags,
// without the node program; runOptions has checked the latency.
func (f *testFlags) simConfig() simnet.Config {
	lat, _ := f.latency()
	initTimeout, _ := f.initTimeout()
	return simnet.Config{Latency: lat, Strict: f.Strict, LogStderr: f.LogStderr, LogNetSend: f.LogNetSend, LogNetRecv: f.LogNetRecv,
		InitTimeout: initTimeout}
}

// runOptions validates every flag but --bin and builds the run options
// without a network: test adds the simulated one, analyze needs none.
func (f *testFlags) runOptions() (harness.Options, error) {
	var errs []error
	collect := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	nodes, err := f.nodeIDs()
	collect(err)
	f.Nodes = nodes
	workers, err := f.concurrency(len(nodes))
	collect(err)
	timeLimit, interval, recovery, err := f.durations()
	collect(err)
	_, err = f.latency()
	collect(err)
	faults, err := f.faults()
	collect(err)
	avail, err := f.availability()
	collect(err)
	collect(f.checkCounts())
	collect(f.networkProblems())
	wl, err := f.workload(workers)
	collect(err)
	if err := errors.Join(errs...); err != nil {
		return harness.Options{}, err
	}
	return harness.Options{
		Workload: wl, Nodes: nodes,
		TimeLimit: timeLimit, Concurrency: workers,
		Faults: faults, NemesisInterval: interval, RecoveryTime: recovery,
		KillWithoutBootWait: f.KillWithoutBootWait, AvailabilityMin: avail,
		ClockDriftPPM: f.ClockDriftPPM, ClockMaxOffsetMs: f.ClockMaxOffsetMs,
		Seed: f.Seed, StoreDir: f.Store, Config: f,
	}, nil
}

// workload builds the chosen workload with its seed, from the table of
// workloads (workloads.go).
func (f *testFlags) workload(workers int) (workloads.Workload, error) {
	p := workloads.Params{Rate: f.Rate, Workers: workers, Seed: harness.WorkloadSeed(f.Seed), LeaseMs: f.LeaseMs,
		Servers: f.Servers, Chunks: f.Chunks, BenchOp: f.BenchOp, Ops: f.Ops}
	for _, w := range workloadTable {
		if w.name == f.Workload {
			return w.build(p)
		}
	}
	return nil, fmt.Errorf("Failed to validate %q: Must be one of %s (this harness runs these %d)",
		"--workload "+f.Workload, workloadNames(), len(workloadTable))
}
