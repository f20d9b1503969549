package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"

	"chunklease/maelstrom/harness"
	"chunklease/workloads"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: maelstrom test [options] [-- node-args...]

Runs the node program (--bin) as Maelstrom does and checks a workload's
history. Commands other than test (analyze, serve, demo) are not provided.

Exit status: 0 valid, 1 invalid, 2 the run failed or bad arguments.

Options of test:
`

// run is the whole command: parse, run, report. It returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		return 0
	}
	if args[0] != "test" {
		fmt.Fprintf(stderr, "maelstrom: unknown command %q (only test is provided)\n\n", args[0])
		printUsage(stderr)
		return harness.ExitFailed
	}
	opts, err := parseTest(args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "maelstrom: %v\n", err)
		return harness.ExitFailed
	}
	opts.Command = append([]string{"maelstrom"}, args...)
	opts.Stdout, opts.Stderr = stdout, stderr
	out := harness.Run(ctx, opts)
	if out.Err != nil && out.Dir == "" {
		fmt.Fprintf(stderr, "maelstrom: %v\n", out.Err)
	}
	return out.Exit
}

// printUsage lists the options with Maelstrom's double dashes (the
// single-dash forms work too).
func printUsage(w io.Writer) {
	fmt.Fprint(w, usage)
	fs := newTestFlagSet(&testFlags{}, w)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-"
		}
		fmt.Fprintf(w, "  %s%s %s\n    \t%s", dashes, f.Name, name, usage)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "[]" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// parseTest turns the arguments of `maelstrom test` into run options.
func parseTest(args []string, stderr io.Writer) (harness.Options, error) {
	var f testFlags
	fs := newTestFlagSet(&f, stderr)
	if err := fs.Parse(args); err != nil {
		return harness.Options{}, err
	}
	f.Args = fs.Args()
	if f.Bin == "" {
		return harness.Options{}, errors.New("expected a --bin PATH_TO_BINARY to test")
	}
	if !f.seedSet {
		f.Seed = rand.Uint64() >> 1 // printed at start, so any run can be replayed
	}
	return f.options()
}

// options validates the flags and builds the run options.
func (f *testFlags) options() (harness.Options, error) {
	var errs []error
	collect := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	bin, err := harness.CanonicalBin(f.Bin)
	collect(err)
	nodes, err := f.nodeIDs()
	collect(err)
	f.Nodes = nodes
	workers, err := f.concurrency(len(nodes))
	collect(err)
	timeLimit, interval, err := f.durations()
	collect(err)
	lat, err := f.latency()
	collect(err)
	nem, err := f.nemesis()
	collect(err)
	avail, err := f.availability()
	collect(err)
	collect(f.checkRate())
	wl, err := f.workload(workers)
	collect(err)
	if err := errors.Join(errs...); err != nil {
		return harness.Options{}, err
	}
	return harness.Options{
		Workload: wl, Nodes: nodes, Launch: harness.ExecLauncher(bin, f.Args),
		TimeLimit: timeLimit, Concurrency: workers, Latency: lat,
		Nemesis: nem, NemesisInterval: interval, AvailabilityMin: avail,
		LogStderr: f.LogStderr, Strict: f.Strict, Seed: f.Seed, StoreDir: f.Store, Config: f,
	}, nil
}

// workload builds the chosen workload with its seed.
func (f *testFlags) workload(workers int) (workloads.Workload, error) {
	seed := harness.WorkloadSeed(f.Seed)
	switch f.Workload {
	case "echo":
		return workloads.NewEcho(workloads.EchoOptions{Rate: f.Rate}, seed), nil
	case "lease":
		o := workloads.LeaseOptions{Servers: f.Servers, Chunks: f.Chunks, LeaseMs: f.LeaseMs, Rate: f.Rate, Workers: workers}
		if f.Servers < 1 || f.Chunks < 1 || f.LeaseMs < 1 {
			return nil, fmt.Errorf("--servers, --chunks and --lease-ms must be >= 1 (got %d, %d, %d)", f.Servers, f.Chunks, f.LeaseMs)
		}
		if err := o.Validate(); err != nil {
			return nil, fmt.Errorf("lease workload: %w", err)
		}
		return workloads.NewLease(o, seed), nil
	case "master":
		o := workloads.MasterOptions{Rate: f.Rate}
		if err := o.Validate(); err != nil {
			return nil, fmt.Errorf("master workload: %w", err)
		}
		return workloads.NewMaster(o, seed), nil
	}
	return nil, fmt.Errorf("unknown workload %q: this harness runs lease, echo and master", f.Workload)
}
