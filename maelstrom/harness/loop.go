package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"chunklease/history"
	"chunklease/workloads"
)

// ClientTimeout is how long a client op waits for its reply before it is
// recorded as timed out (maelstrom-spec D.4).
const ClientTimeout = 5 * time.Second

// progressEvery is how often the terminal progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// minIdleWait keeps the loop from spinning when the workload's Wake is in
// the past but it offered no op to any free worker.
const minIdleWait = time.Millisecond

// worker is one client thread (Jepsen's worker): at most one op in flight.
type worker struct {
	process int    // Jepsen process; a new one after each info (newProcess)
	client  Client // nil before the first op and after an info
	stale   Client // the client an info retired; closed at the next op
	busy    bool
	inv     workloads.Invocation
}

// callResult is what an op's goroutine reports back to the loop.
type callResult struct {
	worker int
	reply  json.RawMessage // nil on timeout
	err    error           // ErrTimeout, or why the call could not be made
}

// opCounts are completions so far, for the progress line.
type opCounts struct{ invoked, ok, fail, info int }

// mainPhase fires due nemesis ops, asks the workload for ops for free
// workers, records completions, and stops invoking (client and nemesis
// ops alike) at the first op's time + the time limit; in-flight ops then
// finish (or time out), and a nemesis op in flight completes. It returns
// the failure that aborted the run, if any.
func (r *runner) mainPhase(ctx context.Context) error {
	cutoff, started := r.o.TimeLimit, false
	defer r.console.endProgress()
	for {
		now := r.now()
		fired := r.fireNemesis(now, cutoff)
		invoked := 0
		if now < cutoff {
			invoked = r.invokeFree(ctx, now, r.o.Workload.Next)
		}
		if !started && (fired || invoked > 0) {
			started, cutoff = true, now+r.o.TimeLimit
		}
		if now >= cutoff && r.inFlight == 0 && !r.nemesis.busy {
			return r.failure.get()
		}
		if err := r.await(ctx, r.nextWake(now, cutoff, invoked)); err != nil {
			return err
		}
	}
}

// await waits until wake (time since relative time 0) or the next event,
// and handles it: a completion, the end of a nemesis op in flight (a
// start, a strobe), a progress tick.
// It returns the run's failure, or ErrInterrupted.
func (r *runner) await(ctx context.Context, wake time.Duration) error {
	timer := time.NewTimer(max(wake-r.now(), 0))
	defer timer.Stop()
	for {
		select {
		case res := <-r.done:
			r.inFlight--
			r.complete(res)
			return nil
		case err := <-r.nemesis.done:
			r.finishPending(err)
			return nil
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

// nextWake is when the loop must look again, unless an event comes
// first: the next nemesis op (unless one is in flight), the workload's
// next op for a free worker, or the cutoff.
func (r *runner) nextWake(now, cutoff time.Duration, invoked int) time.Duration {
	if now >= cutoff {
		return workloads.Never
	}
	wake := cutoff
	if r.schedule != nil && !r.nemesis.busy {
		wake = min(wake, r.schedule.Peek().At)
	}
	if r.anyFree() {
		w := r.o.Workload.Wake()
		if w <= now && invoked == 0 {
			w = now + minIdleWait
		}
		wake = min(wake, max(w, now))
	}
	return wake
}

func (r *runner) anyFree() bool {
	for i := range r.workers {
		if !r.workers[i].busy {
			return true
		}
	}
	return false
}

// invokeFree asks next for an op for each free worker and starts the
// ops it gets. Like Jepsen's generator context, it rotates through the
// workers: the search starts after the worker that got the last op, so
// ops spread over every worker (and so every node) instead of going to
// the first free one. It returns how many ops it started.
func (r *runner) invokeFree(ctx context.Context, now time.Duration, next func(time.Duration, int) (workloads.Invocation, bool)) int {
	started, n, from := 0, len(r.workers), r.nextWorker
	for k := range n {
		i := (from + k) % n
		if r.workers[i].busy {
			continue
		}
		inv, ok := next(now, i)
		if !ok {
			continue
		}
		r.invoke(ctx, i, inv)
		r.nextWorker = (i + 1) % n
		started++
	}
	r.inFlight += started
	return started
}

// invoke records the invoke op and starts the request on its own
// goroutine. A worker whose last op was info gets a fresh client first,
// and its old client is closed, as Maelstrom does for echo-like
// workloads.
func (r *runner) invoke(ctx context.Context, i int, inv workloads.Invocation) {
	w := &r.workers[i]
	if w.stale != nil {
		w.stale.Close()
		w.stale = nil
	}
	if w.client == nil {
		w.client = r.net.OpenClient()
	}
	w.busy, w.inv = true, inv
	node := r.nodeOf(i)
	r.record(history.Op{Process: history.Process{ID: w.process},
		Type: history.Invoke, F: inv.F, Node: node, Value: inv.Value})
	r.counts.invoked++
	if r.final.running {
		r.final.Invoked++
	}
	req := r.o.Workload.Request(inv)
	c, done := w.client, r.done
	go func() {
		reply, err := c.Call(ctx, node, req, ClientTimeout)
		done <- callResult{worker: i, reply: reply, err: err}
	}()
}

// nodeOf is the node worker i talks to: Nodes[i mod n].
func (r *runner) nodeOf(i int) string { return r.o.Nodes[i%len(r.o.Nodes)] }

// complete hands a reply (or a timeout) to the workload and records the
// completion op. After an info the worker gets a new process
// (newProcess) and its client is retired.
func (r *runner) complete(res callResult) {
	w := &r.workers[res.worker]
	w.busy = false
	if res.err != nil && !errors.Is(res.err, ErrTimeout) {
		if !errors.Is(res.err, context.Canceled) {
			r.failure.set(fmt.Errorf("client request to %s: %w", r.nodeOf(res.worker), res.err))
		}
		return
	}
	c := r.o.Workload.Complete(r.now(), res.worker, w.inv, res.reply)
	r.record(history.Op{Process: history.Process{ID: w.process},
		Type: c.Type, F: w.inv.F, Node: r.nodeOf(res.worker), Value: c.Value, Error: c.Error})
	switch c.Type {
	case history.OK:
		r.counts.ok++
		if r.final.running {
			r.final.OK++
		}
	case history.Fail:
		r.counts.fail++
	default:
		r.counts.info++
		r.newProcess(w)
		w.stale, w.client = w.client, nil
	}
}

// newProcess gives worker w the process that follows an info: process +
// concurrency in the main phase, as Jepsen numbers them, and in the final
// phase, which may run more workers (addWorkers), the next number no
// process of the run has had.
func (r *runner) newProcess(w *worker) {
	if r.final.running {
		w.process = r.unusedProcess()
		return
	}
	w.process += r.o.Concurrency
}

// unusedProcess is a number no process of the run has had: each worker's
// process only grows, so it is one above the workers' highest.
func (r *runner) unusedProcess() int {
	top := -1
	for i := range r.workers {
		top = max(top, r.workers[i].process)
	}
	return top + 1
}
