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
	wait := r.o.RecoveryTime
	if wait == 0 {
		wait = DefaultRecoveryTime(r.leaseMs)
	}
	r.final.Ran, r.final.RecoveryWaitS = true, wait.Seconds()
	if r.o.Faults.Any() {
		fmt.Fprintf(r.o.Stdout, "maelstrom: healing every fault, then waiting %v for recovery before %d final ops\n", wait, len(ops))
	} else {
		fmt.Fprintf(r.o.Stdout, "maelstrom: no nemesis, no fault to heal; waiting %v before %d final ops\n", wait, len(ops))
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

// invokeFinal invokes op i on worker i mod concurrency, each worker's ops
// one after another, and waits until all have completed.
func (r *runner) invokeFinal(ctx context.Context, ops []workloads.Invocation) error {
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
