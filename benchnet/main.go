package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `usage: benchnet table|latency|openloop|failover|memory|report [flags]   (scripts/bench_net.sh runs it; -h per part lists its flags)`

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
		"report": func() part { return &reportPart{} }, "openloop": func() part { return &openloopPart{} },
		"latency": func() part { return &latencyPart{} },
	}
	newPart, ok := parts[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "benchnet: unknown part %q\n%s\n", args[0], usage)
		return 2
	}
	p, env := newPart(), &benchEnv{out: stdout, log: stderr, needEtcd: args[0] != "report"}
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
	repo, work, store          string
	etcdBin, etcd34Bin         string
	etcdVersion, etcd34Version string // their `etcd --version` lines; "" when not there
	pidPath, cpuProfile        string
	needEtcd                   bool // the part starts etcd members
	seed                       uint64
	memberCPUs                 string
	out, log                   io.Writer
	pids                       *pidFile
	ports                      *ports
}

func (e *benchEnv) flags(fs *flag.FlagSet) {
	fs.StringVar(&e.repo, "repo", ".", "the chunklease repository (scripts/cluster.sh builds and starts the members)")
	fs.StringVar(&e.work, "work", "", "a directory for the members' state and logs (default: a new temporary one)")
	fs.StringVar(&e.store, "store", "", "write every run's figures to STORE/results.jsonl (default: none)")
	fs.StringVar(&e.etcdBin, "etcd", "", "the etcd 3.7 binary, the comparison's anchor (scripts/bench_net.sh builds go.etcd.io/etcd/server/v3@v3.7.3)")
	fs.StringVar(&e.etcd34Bin, "etcd34", "/usr/bin/etcd", "a second etcd, shown as a column of its own when it is there (Debian's etcd-server, 3.4); \"\" leaves it out")
	fs.StringVar(&e.pidPath, "pidfile", "", "append the PID of every process started to this file (\"PID NAME\" a line)")
	fs.StringVar(&e.cpuProfile, "cpuprofile", "", "write this process's CPU profile (the clients' side) to this file")
	fs.StringVar(&e.memberCPUs, "member-cpus", "default", "GOMAXPROCS of every member, ours and etcd's alike: default (Go's: every core), share (the machine's cores / 3, at least 1: each member's share of a machine that runs all three), or a number")
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
	if _, err := e.parseMemberCPUs(); err != nil {
		return err
	}
	if !e.needEtcd {
		return nil
	}
	if e.etcdBin == "" {
		return errors.New("-etcd: give the etcd 3.7 binary (scripts/bench_net.sh builds it from go.etcd.io/etcd/server/v3@v3.7.3)")
	}
	var err error
	if e.etcdVersion, err = etcdVersion(e.etcdBin); err != nil {
		return fmt.Errorf("-etcd %s: %w", e.etcdBin, err)
	}
	if e.etcd34Bin != "" {
		if e.etcd34Version, err = etcdVersion(e.etcd34Bin); err != nil {
			e.logf("no second etcd column: -etcd34 %s: %v", e.etcd34Bin, err)
			e.etcd34Bin = ""
		}
	}
	e.pids = &pidFile{path: e.pidPath}
	e.ports = newPorts(e.seed)
	e.logf("seed %d (-seed %d repeats the choices), state in %s", e.seed, e.seed, e.work)
	return nil
}

// memberEnv is the environment every member starts with, beside the
// benchmark's own: GOMAXPROCS as -member-cpus says, nothing for Go's
// default. A member on a machine of its own has every core; Go's default
// is what an operator gets, so it is the default here too. The share
// (-member-cpus share) models a machine of its own for each of the three
// members of a cluster that share this one with the clients: with Go's
// default each runtime keeps threads for every core, and four busy
// processes on 2 cores then spend CPU looking for work and waking each
// other (measured on 2 cores, renew at 16 clients, alternating runs: a
// renew cost our members 57-62 µs of CPU with the share instead of
// 83-87, and etcd's 153-179 instead of 190-202).
func (e *benchEnv) memberEnv() []string {
	if n := e.memberProcs(); n > 0 {
		return []string{fmt.Sprintf("GOMAXPROCS=%d", n)}
	}
	return nil
}

// memberProcs is the GOMAXPROCS of every member; 0: Go's default.
func (e *benchEnv) memberProcs() int {
	n, _ := e.parseMemberCPUs()
	return n
}

func (e *benchEnv) parseMemberCPUs() (int, error) {
	switch e.memberCPUs {
	case "", "default":
		return 0, nil
	case "share":
		return max(1, runtime.NumCPU()/3), nil
	}
	n, err := strconv.Atoi(e.memberCPUs)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("-member-cpus %q: give default, share or a number of cores", e.memberCPUs)
	}
	return n, nil
}

// etcdKind is one etcd configuration a part compares against.
type etcdKind struct {
	name, bin, version string
	fsync              bool
}

// etcds are the etcd configurations of a comparison: etcd 3.7 without
// fsync (the anchor, named "etcd"), the second etcd when it is there,
// and etcd 3.7 with fsync when asked for.
func (e *benchEnv) etcds(fsync bool) []etcdKind {
	out := []etcdKind{{name: "etcd", bin: e.etcdBin, version: e.etcdVersion}}
	if e.etcd34Bin != "" {
		out = append(out, etcdKind{name: "etcd-3.4", bin: e.etcd34Bin, version: e.etcd34Version})
	}
	if fsync {
		out = append(out, etcdKind{name: "etcd-fsync", bin: e.etcdBin, version: e.etcdVersion, fsync: true})
	}
	return out
}

// etcdVersion is the version an etcd binary reports, e.g. "3.7.3".
func etcdVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(string(out), "\n")
	v, ok := strings.CutPrefix(first, "etcd Version: ")
	if !ok {
		return "", fmt.Errorf("%q is not etcd's version line", first)
	}
	return strings.TrimSpace(v), nil
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

// goal prints a goal's PASS or MISS line, and appends it to
// STORE/goals.txt, where scripts/bench_net.sh reads every part's goals.
func (e *benchEnv) goal(g goal) {
	fmt.Fprintln(e.out, g)
	if e.store == "" {
		return
	}
	if err := os.MkdirAll(e.store, 0o755); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(e.store, "goals.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		e.logf("store: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintln(f, g)
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
