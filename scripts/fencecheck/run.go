package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are `fencecheck run`'s flags.
type options struct {
	repo, chunkserver, work string
	duration, negDuration   time.Duration
	holders                 int
	leaseMs                 int64
	seed                    uint64
	negativeOnly            bool
	deadline                time.Duration
}

// runner owns everything a run starts, and stops it (cleanups, last
// first).
type runner struct {
	opts      options
	ctx       context.Context
	self      string   // this executable, run again as each holder
	endpoints []string // the members' client URLs, n1 first
	cleanups  []func()
}

func (r *runner) onCleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *runner) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

func runCommand(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.repo, "repo", ".", "the repository (for scripts/cluster.sh)")
	fs.StringVar(&o.chunkserver, "chunkserver", "", "the built examples/chunkserver")
	fs.StringVar(&o.work, "work", "", "a directory for the cluster's state and the logs")
	fs.DurationVar(&o.duration, "duration", 45*time.Second, "how long the main run injects faults")
	fs.DurationVar(&o.negDuration, "negative-duration", 12*time.Second, "how long the negative control runs")
	fs.IntVar(&o.holders, "holders", 5, "holders (at least 4)")
	fs.Int64Var(&o.leaseMs, "lease-ms", 1000, "the lease length holders ask for (also the members' longest lease)")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the holders' holding times (0: draw one)")
	fs.BoolVar(&o.negativeOnly, "negative-only", false, "run only the negative control (to study it)")
	fs.DurationVar(&o.deadline, "deadline", 170*time.Second, "give up (and stop everything) after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.chunkserver == "" || o.work == "" || o.holders < 4 || o.leaseMs < 100 {
		return errors.New("run needs -chunkserver and -work, at least 4 holders and a lease of at least 100 ms")
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	r := &runner{opts: o, ctx: ctx, self: self}
	defer r.cleanup()
	fmt.Printf("fence: seed %d (replay the holding times with -seed %d)\n", o.seed, o.seed)
	if err := r.clusterUp(); err != nil {
		return err
	}
	main := &phase{name: "main", chunk: "ch_fenced", duration: o.duration,
		faults: []faultKind{holderStop, memberStop, holderPauseInAct, memberKill, holderCut}}
	if !o.negativeOnly {
		if err := r.runPhase(main); err != nil {
			return err
		}
		mv := main.verdict
		fmt.Printf("fence: main run: faults %s; holders=%d (%d wrote) sessions=%d writes=%d refused=%d checks-refused=%d stale-accepted=%d overlaps=%d\n",
			main.faultText(), mv.holders, mv.writers, mv.sessions, mv.writes, mv.refused, mv.checkRefused, mv.staleAccepted, mv.overlaps)
		if err := main.acceptable(); err != nil {
			return err
		}
	}
	mv := main.verdict
	neg := &phase{name: "negative", chunk: "ch_unfenced", duration: o.negDuration, doneOnly: true, unfenced: true,
		faults: []faultKind{holderPauseInAct, holderStop}}
	if err := r.runPhase(neg); err != nil {
		return err
	}
	nv := neg.verdict
	caught := nv.staleAccepted > 0 || nv.overlaps > 0
	fmt.Printf("fence: negative control (holders acting on Done alone, the store's check off): faults %s; writes=%d stale-accepted=%d overlaps=%d: caught=%t\n",
		neg.faultText(), nv.writes, nv.staleAccepted, nv.overlaps, caught)
	for _, d := range nv.details[:min(3, len(nv.details))] {
		fmt.Println("fence:   e.g.", d)
	}
	if !caught {
		return errors.New("the negative control was not caught: holders acting on Done alone against an unfenced store left no stale write and no overlap")
	}
	if o.negativeOnly {
		return nil
	}
	fmt.Printf("fence: holders=%d sessions=%d writes=%d refused=%d stale-accepted=%d overlaps=%d negative-control=caught\n",
		mv.holders, mv.sessions, mv.writes, mv.refused, mv.staleAccepted, mv.overlaps)
	return nil
}

// clusterUp starts 3 members with scripts/cluster.sh (one core each's
// share: GOMAXPROCS=1) and registers their stop.
func (r *runner) clusterUp() error {
	out, err := r.cluster("up", "3", "-max-lease-ms", strconv.FormatInt(r.opts.leaseMs, 10))
	r.onCleanup(func() {
		r.continueMembers()
		if out, err := r.cluster("down"); err != nil {
			fmt.Fprintf(os.Stderr, "fence: cluster.sh down: %v\n%s", err, out)
		}
	})
	if err != nil {
		return fmt.Errorf("scripts/cluster.sh up: %w\n%s", err, out)
	}
	last := out[strings.LastIndex(strings.TrimRight(out, "\n"), "\n")+1:]
	eps, ok := strings.CutPrefix(strings.TrimSpace(last), "ENDPOINTS=")
	if !ok {
		return fmt.Errorf("scripts/cluster.sh up printed no ENDPOINTS line:\n%s", out)
	}
	r.endpoints = strings.Split(eps, ",")
	fmt.Printf("fence: 3 members up: %s\n", eps)
	return nil
}

// cluster runs scripts/cluster.sh with this run's state directory.
func (r *runner) cluster(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(r.opts.repo, "scripts/cluster.sh"), args...)
	cmd.Dir = r.opts.repo
	cmd.Env = append(os.Environ(), "CLUSTER_STATE_DIR="+filepath.Join(r.opts.work, "cluster"), "GOMAXPROCS=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// memberPIDs reads `cluster.sh pids`: member id to PID.
func (r *runner) memberPIDs() (map[string]int, error) {
	out, err := r.cluster("pids")
	if err != nil {
		return nil, fmt.Errorf("scripts/cluster.sh pids: %w", err)
	}
	pids := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var id string
		var pid int
		if _, err := fmt.Sscan(sc.Text(), &id, &pid); err == nil {
			pids[id] = pid
		}
	}
	return pids, nil
}

// continueMembers sends SIGCONT to every member (a cleanup: none may be
// left stopped).
func (r *runner) continueMembers() {
	if pids, err := r.memberPIDs(); err == nil {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
}

// sleep waits d, or until the run is interrupted.
func (r *runner) sleep(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-r.ctx.Done():
		return r.stopped()
	}
}

// stopped says why the run's context ended: a signal, or the deadline.
func (r *runner) stopped() error {
	if errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the run took longer than its deadline (%v); everything it started is stopped", r.opts.deadline)
	}
	return errors.New("interrupted; everything it started is stopped")
}

// lease is the lease length as a duration.
func (r *runner) lease() time.Duration { return time.Duration(r.opts.leaseMs) * time.Millisecond }
