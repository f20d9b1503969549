package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"chunklease/maelstrom/nemesis"
	"chunklease/workloads"
)

// progressEvery is how often the terminal progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// minIdleWait keeps the loop from spinning when the workload's Wake is in
// the past but it offered no op to any free worker.
const minIdleWait = time.Millisecond

// worker is one client thread (Jepsen's worker): at most one op in flight.
type worker struct {
	process int     // Jepsen process; + concurrency after each info
	client  *client // nil before the first op and after an info
	stale   *client // the client an info retired; closed at the next op
	busy    bool
	inv     workloads.Invocation
}

// callResult is what an op's goroutine reports back to the loop.
type callResult struct {
	worker int
	reply  json.RawMessage // nil on timeout
	err    error           // errTimeout, or why the call could not be made
}

// opCounts are completions so far, for the progress line.
type opCounts struct{ invoked, ok, fail, info int }

// loop is the main phase: it fires due nemesis ops, asks the workload for
// ops for free workers, records completions, and stops invoking at the
// first op's time + the time limit; in-flight ops then finish (or time
// out). It returns the failure that aborted the run, if any.
func (r *runner) loop(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan callResult, len(r.workers))
	cutoff, started := r.o.TimeLimit, false
	inFlight := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
	defer r.console.endProgress()
	for {
		now := r.now()
		first := r.fireNemesis(now, cutoff)
		invoked := 0
		if now < cutoff {
			invoked = r.invokeFree(ctx, now, done)
			inFlight += invoked
		}
		if !started && (first || invoked > 0) {
			started, cutoff = true, now+r.o.TimeLimit
		}
		if now >= cutoff && inFlight == 0 {
			return r.failure.get()
		}
		timer.Reset(r.nextWake(now, cutoff, invoked) - now)
		select {
		case res := <-done:
			inFlight--
			r.complete(res)
		case <-timer.C:
		case <-ticker.C:
			r.showProgress(r.now())
		case <-r.failure.ch:
			return r.failure.err
		case <-ctx.Done():
			return errInterrupted
		}
	}
}

// nextWake is when the loop must look again, unless a completion comes
// first: the next nemesis op, the workload's next op for a free worker,
// or the cutoff.
func (r *runner) nextWake(now, cutoff time.Duration, invoked int) time.Duration {
	if now >= cutoff {
		return workloads.Never
	}
	wake := cutoff
	if r.schedule != nil {
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

// invokeFree asks the workload for an op for each free worker and starts
// the ops it gets. Like Jepsen's generator context, it rotates through
// the workers: the search starts after the worker that got the last op,
// so ops spread over every worker (and so every node) instead of going
// to the first free one. It returns how many ops it started.
func (r *runner) invokeFree(ctx context.Context, now time.Duration, done chan<- callResult) int {
	started, n, from := 0, len(r.workers), r.nextWorker
	for k := range n {
		i := (from + k) % n
		if r.workers[i].busy {
			continue
		}
		inv, ok := r.o.Workload.Next(now, i)
		if !ok {
			continue
		}
		r.invoke(ctx, now, i, inv, done)
		r.nextWorker = (i + 1) % n
		started++
	}
	return started
}

// invoke records the invoke op and starts the request on its own
// goroutine. A worker whose last op was info gets a fresh client first,
// and its old client is closed, as Maelstrom does for echo-like workloads.
func (r *runner) invoke(ctx context.Context, now time.Duration, i int, inv workloads.Invocation, done chan<- callResult) {
	w := &r.workers[i]
	if w.stale != nil {
		r.closeClient(w.stale)
		w.stale = nil
	}
	if w.client == nil {
		w.client = r.newClient()
	}
	w.busy, w.inv = true, inv
	node := r.nodeOf(i)
	r.record(workloads.Op{Time: int64(now), Process: workloads.Process{ID: w.process},
		Type: workloads.Invoke, F: inv.F, Node: node, Value: inv.Value})
	r.counts.invoked++
	req := r.o.Workload.Request(inv)
	c := w.client
	go func() {
		reply, err := c.call(ctx, r.net, node, req, ClientTimeout)
		done <- callResult{worker: i, reply: reply, err: err}
	}()
}

// nodeOf is the node worker i talks to: Nodes[i mod n].
func (r *runner) nodeOf(i int) string { return r.o.Nodes[i%len(r.o.Nodes)] }

// complete hands a reply (or a timeout) to the workload and records the
// completion op. After an info the worker's process becomes process +
// concurrency and its client is retired.
func (r *runner) complete(res callResult) {
	w := &r.workers[res.worker]
	w.busy = false
	if res.err != nil && !errors.Is(res.err, errTimeout) {
		if !errors.Is(res.err, context.Canceled) {
			r.failure.set(fmt.Errorf("client request to %s: %w", r.nodeOf(res.worker), res.err))
		}
		return
	}
	now := r.now()
	c := r.o.Workload.Complete(now, res.worker, w.inv, res.reply)
	r.record(workloads.Op{Time: int64(now), Process: workloads.Process{ID: w.process},
		Type: c.Type, F: w.inv.F, Node: r.nodeOf(res.worker), Value: c.Value, Error: c.Error})
	switch c.Type {
	case workloads.OK:
		r.counts.ok++
	case workloads.Fail:
		r.counts.fail++
	default:
		r.counts.info++
		w.process += len(r.workers)
		w.stale, w.client = w.client, nil
	}
}

// fireNemesis performs every nemesis op due by now and before the cutoff,
// writing each as an invoke and a completion with process "nemesis". It
// reports whether it performed any.
func (r *runner) fireNemesis(now, cutoff time.Duration) bool {
	fired := false
	for r.schedule != nil && r.schedule.Peek().At <= now && r.schedule.Peek().At < cutoff {
		op := r.schedule.Pop()
		fired = true
		if op.F == nemesis.StartPartition {
			r.startPartition(op.Target)
		} else {
			r.stopPartition()
		}
	}
	return fired
}

// startPartition applies a grudge of the target's shape.
func (r *runner) startPartition(target nemesis.Target) {
	r.recordNemesis(nemesis.StartPartition, string(target))
	grudge, err := nemesis.Compute(target, r.o.Nodes, r.grudgeRNG)
	if err != nil {
		r.failure.set(err)
		return
	}
	r.net.Partition(grudge)
	r.partition = string(target)
	r.recordNemesis(nemesis.StartPartition, []any{"isolated", grudge})
}

// stopPartition heals the network.
func (r *runner) stopPartition() {
	r.recordNemesis(nemesis.StopPartition, nil)
	r.net.Heal()
	r.partition = ""
	r.recordNemesis(nemesis.StopPartition, "network-healed")
}

// recordNemesis writes one nemesis op. As in Jepsen, both the invocation
// and the completion of a nemesis op have type info.
func (r *runner) recordNemesis(f string, value any) {
	raw, _ := json.Marshal(value) // strings and grudges always marshal
	r.record(workloads.Op{Time: int64(r.now()), Process: workloads.NemesisProcess, Type: workloads.Info, F: f, Value: raw})
}

// showProgress redraws the terminal progress line.
func (r *runner) showProgress(now time.Duration) {
	part := r.partition
	if part == "" {
		part = "none"
	}
	c := r.counts
	r.console.setProgress(fmt.Sprintf("%5.1fs / %.0fs | %d ops: %d ok, %d fail, %d info | partition: %s",
		now.Seconds(), r.o.TimeLimit.Seconds(), c.invoked, c.ok, c.fail, c.info, part))
}
