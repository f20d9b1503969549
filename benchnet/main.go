package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `usage: benchnet table|failover|memory|report [flags]   (scripts/bench_net.sh runs it; -h per part lists its flags)`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it returns the exit status (0 measured, whatever
// the goals; 1 a run could not be made; 2 bad usage).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	parts := map[string]func() part{
		"table": func() part { return &tablePart{} }, "failover": func() part { return &failoverPart{} }, "memory": func() part { return &memoryPart{} },
		"report": func() part { return &reportPart{} },
	}
	newPart, ok := parts[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "benchnet: unknown part %q\n%s\n", args[0], usage)
		return 2
	}
	p, env := newPart(), &benchEnv{out: stdout, log: stderr}
	fs := flag.NewFlagSet("benchnet "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	env.flags(fs)
	p.flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if err := env.prepare(); err != nil {
		fmt.Fprintf(stderr, "benchnet: %v\n", err)
		return 2
	}
	if env.cpuProfile != "" {
		f, err := os.Create(env.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "benchnet: %v\n", err)
			return 2
		}
		pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if err := p.run(ctx, env); err != nil {
		fmt.Fprintf(stderr, "benchnet %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// part is one of the benchmark's three parts, with flags of its own.
type part interface {
	flags(fs *flag.FlagSet)
	run(ctx context.Context, env *benchEnv) error
}

// benchEnv is what every part shares: where the repository and the
// binaries are, where processes keep their state, where PIDs and results
// go.
type benchEnv struct {
	repo, work, store, etcdBin string
	pidPath, cpuProfile        string
	seed                       uint64
	memberCPUs                 int
	out, log                   io.Writer
	pids                       *pidFile
	ports                      *ports
}

func (e *benchEnv) flags(fs *flag.FlagSet) {
	fs.StringVar(&e.repo, "repo", ".", "the chunklease repository (scripts/cluster.sh builds and starts the members)")
	fs.StringVar(&e.work, "work", "", "a directory for the members' state and logs (default: a new temporary one)")
	fs.StringVar(&e.store, "store", "", "write every run's figures to STORE/results.jsonl (default: none)")
	fs.StringVar(&e.etcdBin, "etcd", "/usr/bin/etcd", "the etcd binary (Debian's etcd-server package)")
	fs.StringVar(&e.pidPath, "pidfile", "", "append the PID of every process started to this file (\"PID NAME\" a line)")
	fs.StringVar(&e.cpuProfile, "cpuprofile", "", "write this process's CPU profile (the clients' side) to this file")
	fs.IntVar(&e.memberCPUs, "member-cpus", 0, "GOMAXPROCS of every member, ours and etcd's alike (0: the machine's cores / 3, at least 1, each member's share of a machine that runs all three; -1: Go's default, every core)")
	fs.Uint64Var(&e.seed, "seed", 0, "seed of the port choice and the clients' jitter (0: from the clock; printed)")
}

func (e *benchEnv) prepare() error {
	if _, err := os.Stat(filepath.Join(e.repo, "scripts", "cluster.sh")); err != nil {
		return fmt.Errorf("-repo %s: no scripts/cluster.sh there; run from the repository's root or give -repo", e.repo)
	}
	if e.work == "" {
		dir, err := os.MkdirTemp("", "benchnet-")
		if err != nil {
			return err
		}
		e.work = dir
	}
	if e.seed == 0 {
		e.seed = uint64(time.Now().UnixNano())
	}
	e.pids = &pidFile{path: e.pidPath}
	e.ports = newPorts(e.seed)
	e.logf("seed %d (-seed %d repeats the choices), state in %s", e.seed, e.seed, e.work)
	return nil
}

// memberEnv is the environment every member starts with, beside the
// benchmark's own: GOMAXPROCS set to -member-cpus. The three members of
// a cluster share this machine's cores with each other and with the
// clients; with Go's default each runtime keeps threads for every core,
// and four busy processes on 2 cores then spend much of their CPU
// looking for work and waking each other. A member on a machine of its
// own has its cores to itself; the share models that, for both systems
// alike. Measured on 2 cores (renew, 16 clients, alternating runs): a
// renew cost our members 57-62 µs of CPU instead of 83-87, and etcd's
// 153-179 instead of 190-202; neither was slower for it.
func (e *benchEnv) memberEnv() []string {
	if n := e.memberProcs(); n > 0 {
		return []string{fmt.Sprintf("GOMAXPROCS=%d", n)}
	}
	return nil
}

// memberProcs is the GOMAXPROCS of every member; 0: Go's default.
func (e *benchEnv) memberProcs() int {
	switch {
	case e.memberCPUs < 0:
		return 0
	case e.memberCPUs == 0:
		return max(1, runtime.NumCPU()/3)
	}
	return e.memberCPUs
}

func (e *benchEnv) logf(format string, args ...any) {
	fmt.Fprintf(e.log, "benchnet: "+format+"\n", args...)
}

// save appends v as one JSON line to STORE/name.
func (e *benchEnv) save(name string, v any) {
	if e.store == "" {
		return
	}
	if err := os.MkdirAll(e.store, 0o755); err != nil {
		e.logf("store: %v", err)
		return
	}
	f, err := os.OpenFile(filepath.Join(e.store, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		e.logf("store: %v", err)
		return
	}
	defer f.Close()
	json.NewEncoder(f).Encode(v)
}

// intList parses "1,16,64".
func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a list of positive integers", s)
		}
		out = append(out, v)
	}
	return out, nil
}
