package harness

import (
	"context"
	"fmt"
	"time"

	"chunklease/maelstrom/nemesis"
	"chunklease/report"
	"chunklease/workloads"
)

// finalState is the final phase as it runs; its figures go to
// results.json as FinalPhase.
type finalState struct {
	report.FinalPhase
	running bool // final ops are being invoked: completions count here
}

// finalPhase is Maelstrom's final phase, for workloads that have final
// ops (workloads.Finisher): every client op and nemesis op has completed
// (mainPhase), the nemesis heals every fault it can cause (stop-partition,
// resume, start: each recorded, in Jepsen's order, in force or not), the
// harness waits for recovery, and then invokes each final op once. A
// workload without final ops ends with the main phase, as Maelstrom's
// echo does, faults and all.
func (r *runner) finalPhase(ctx context.Context) error {
	f, ok := r.o.Workload.(workloads.Finisher)
	if !ok {
		return nil
	}
	ops := f.FinalOps()
	if len(ops) == 0 {
		return nil
	}
	wait := r.recoveryWait()
	r.final.Ran, r.final.RecoveryWaitS = true, wait.Seconds()
	r.final.Workers = finalWorkers(len(r.workers), len(r.o.Nodes), len(ops))
	if r.o.Faults.Any() {
		fmt.Fprintf(r.o.Stdout, "maelstrom: healing every fault, then waiting %v for recovery before %d final ops on %d workers\n", wait, len(ops), r.final.Workers)
	} else {
		fmt.Fprintf(r.o.Stdout, "maelstrom: no nemesis, no fault to heal, no recovery to wait for; %d final ops on %d workers\n", len(ops), r.final.Workers)
	}
	for _, op := range nemesis.FinalOps(r.o.Faults) {
		r.perform(op)
		if err := r.awaitNemesis(ctx); err != nil {
			return err
		}
	}
	r.final.HealedAtNs = int64(r.now())
	if err := r.sleep(ctx, wait); err != nil {
		return err
	}
	return r.invokeFinal(ctx, ops)
}

// recoveryWait is how long the final phase waits after healing:
// --recovery-time when given; otherwise DefaultRecoveryTime when the run
// had a nemesis, and nothing without one. The wait lets nodes restarted
// by the heal finish their boot wait and leases granted across a fault
// run out; a run without faults has nothing to recover from, and its
// final ops read the service as the main phase left it.
func (r *runner) recoveryWait() time.Duration {
	switch {
	case r.o.RecoveryTime > 0:
		return r.o.RecoveryTime
	case r.o.Faults.Any():
		return DefaultRecoveryTime(r.leaseMs)
	}
	return 0
}

// finalWorkersPerNode is how many final ops the final phase keeps in
// flight per node at least. Final ops are independent reads, one per
// chunk in the lease workload, so the phase runs them on more workers
// than the main phase's concurrency when that is small: at 8 per node the
// nodes and the network are busy instead of waiting on one round trip
// per worker.
const finalWorkersPerNode = 8

// finalWorkers is how many workers run the final ops: the main phase's
// workers, and more up to finalWorkersPerNode per node, but no more than
// there are ops.
func finalWorkers(workers, nodes, ops int) int {
	return max(workers, min(ops, finalWorkersPerNode*nodes))
}

// addWorkers grows the workers to n. Each new worker is a new Jepsen
// process, numbered after every process the run has had, and talks to
// node i mod n like the others.
func (r *runner) addWorkers(n int) {
	for len(r.workers) < n {
		r.workers = append(r.workers, worker{process: r.unusedProcess()})
	}
}

// sleep waits for d, unless the run fails or is interrupted first.
func (r *runner) sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return nil
		case <-r.ticker.C:
			r.showProgress(r.now())
		case <-r.failure.ch:
			return r.failure.err
		case <-ctx.Done():
			return ErrInterrupted
		}
	}
}

// invokeFinal invokes op i on worker i mod the final phase's workers, each worker's ops
// one after another, and waits until all have completed.
func (r *runner) invokeFinal(ctx context.Context, ops []workloads.Invocation) error {
	r.addWorkers(r.final.Workers)
	queues := make([][]workloads.Invocation, len(r.workers))
	for i, op := range ops {
		queues[i%len(queues)] = append(queues[i%len(queues)], op)
	}
	left := len(ops)
	next := func(_ time.Duration, worker int) (workloads.Invocation, bool) {
		if len(queues[worker]) == 0 {
			return workloads.Invocation{}, false
		}
		op := queues[worker][0]
		queues[worker] = queues[worker][1:]
		left--
		return op, true
	}
	r.final.running = true
	defer func() { r.final.running = false }()
	r.nextWorker = 0 // op i goes out in order, on worker i mod concurrency
	defer r.console.endProgress()
	for {
		r.invokeFree(ctx, r.now(), next)
		if left == 0 && r.inFlight == 0 {
			r.final.Valid = r.final.Verdict()
			return r.failure.get()
		}
		if err := r.await(ctx, workloads.Never); err != nil {
			return err
		}
	}
}
