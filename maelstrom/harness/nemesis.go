package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/nemesis"
)

// nemesisWork is the nemesis's state. Like Jepsen's nemesis it performs
// one op at a time: partitions, kills, pauses and resumes complete at
// once; a start (killed nodes launched again and sent a fresh init) runs
// on its own goroutine, and no other nemesis op starts until it is done.
type nemesisWork struct {
	busy    bool               // a start is in flight
	done    chan restartResult // its outcome
	clients []*client          // its init clients, closed when it is done
	ctx     context.Context    // cancelled at teardown: an init in flight gives up
	cancel  context.CancelFunc
	// lateReplies counts replies to closed clients dropped because the
	// node had been paused (runner.lateReply).
	lateReplies atomic.Int64
}

// restartResult is how a start ended: the nodes started, or why not.
type restartResult struct {
	started []string
	err     error
}

// fireNemesis performs every nemesis op due by now and before the cutoff,
// writing each as an invoke and a completion with process "nemesis". It
// stops at a start in flight. It reports whether it performed any.
func (r *runner) fireNemesis(now, cutoff time.Duration) bool {
	fired := false
	for r.schedule != nil && !r.nemesis.busy {
		op := r.schedule.Peek()
		if op.At > now || op.At >= cutoff {
			break
		}
		r.schedule.Pop()
		r.perform(op)
		fired = true
	}
	return fired
}

// perform carries out one nemesis op.
func (r *runner) perform(op nemesis.Op) {
	switch op.F {
	case nemesis.StartPartition:
		r.startPartition(op.Target)
	case nemesis.StopPartition:
		r.stopPartition()
	case nemesis.KillOp:
		r.hitNodes(op, (*node).kill)
	case nemesis.PauseOp:
		r.hitNodes(op, (*node).pause)
	case nemesis.ResumeOp:
		r.recordNemesis(op.F, op.Nodes)
		now := time.Now()
		r.recordNemesis(op.F, r.eachNode(func(n *node) bool { return n.resume(now) }))
	case nemesis.StartOp:
		r.startKilled(op)
	default:
		r.failure.set(fmt.Errorf("nemesis: unknown op %q", op.F))
	}
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

// hitNodes kills or pauses the nodes op's specification picks; the
// completion lists the nodes it hit (a node already down, or already
// paused, is not hit again).
func (r *runner) hitNodes(op nemesis.Op, act func(*node) bool) {
	var spec any = string(op.Nodes)
	if op.Nodes == nemesis.SpecRandom {
		spec = nil // Jepsen's nil node spec
	}
	r.recordNemesis(op.F, spec)
	ids, err := nemesis.PickNodes(op.Nodes, r.o.Nodes, r.procRNG)
	if err != nil {
		r.failure.set(err)
		return
	}
	hit := []string{}
	for _, id := range ids {
		if act(r.node(id)) {
			hit = append(hit, id)
		}
	}
	r.recordNemesis(op.F, hit)
}

// eachNode applies act to every node and lists those it acted on.
func (r *runner) eachNode(act func(*node) bool) []string {
	hit := []string{}
	for _, n := range r.nodes {
		if act(n) {
			hit = append(hit, n.id)
		}
	}
	return hit
}

func (r *runner) node(id string) *node {
	for _, n := range r.nodes {
		if n.id == id {
			return n
		}
	}
	panic("harness: no node " + id)
}

// startKilled starts every killed node again, each with a fresh init
// from a new client, in parallel, on its own goroutine; finishRestart
// records the completion. A node that fails to start or to answer init
// fails the run, as a failed init does at setup.
func (r *runner) startKilled(op nemesis.Op) {
	r.recordNemesis(op.F, op.Nodes)
	var dead []*node
	for _, n := range r.nodes {
		if n.down() {
			dead = append(dead, n)
		}
	}
	if len(dead) == 0 {
		r.recordNemesis(op.F, []string{})
		return
	}
	r.nemesis.busy = true
	r.nemesis.clients = make([]*client, len(dead))
	for i := range dead {
		r.nemesis.clients[i] = r.newClient()
	}
	env, clients, ctx := r.nodeEnv(true), r.nemesis.clients, r.nemesis.ctx
	go func() {
		errs := make([]error, len(dead))
		var wg sync.WaitGroup
		for i, n := range dead {
			wg.Go(func() {
				if errs[i] = n.restart(env); errs[i] == nil {
					errs[i] = r.initNode(ctx, clients[i], n.id)
				}
			})
		}
		wg.Wait()
		res := restartResult{}
		for i, n := range dead {
			if errs[i] != nil && res.err == nil {
				res.err = fmt.Errorf("restarting node %s: %w", n.id, errs[i])
			}
			res.started = append(res.started, n.id)
		}
		r.nemesis.done <- res
	}()
}

// finishRestart records the end of a start and closes its init clients.
func (r *runner) finishRestart(res restartResult) {
	r.nemesis.busy = false
	for _, c := range r.nemesis.clients {
		r.closeClient(c)
	}
	r.nemesis.clients = nil
	if res.err != nil {
		r.failure.set(res.err)
		return
	}
	r.recordNemesis(nemesis.StartOp, res.started)
}

// awaitRestart waits for a start in flight (the final phase's).
func (r *runner) awaitRestart(ctx context.Context) error {
	for r.nemesis.busy {
		select {
		case res := <-r.nemesis.done:
			r.finishRestart(res)
		case <-r.failure.ch:
			return r.failure.err
		case <-ctx.Done():
			return errInterrupted
		}
	}
	return r.failure.get()
}

// recordNemesis writes one nemesis op. As in Jepsen, both the invocation
// and the completion of a nemesis op have type info.
func (r *runner) recordNemesis(f string, value any) {
	raw, _ := json.Marshal(value) // strings, node lists and grudges always marshal
	r.record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: f, Value: raw})
}

// showProgress redraws the terminal progress line.
func (r *runner) showProgress(now time.Duration) {
	r.flushHistory()
	faults := []string{}
	if r.partition != "" {
		faults = append(faults, "partition "+r.partition)
	}
	if down := r.nodesWhere((*node).down); len(down) > 0 {
		faults = append(faults, "killed "+strings.Join(down, " "))
	}
	if paused := r.nodesWhere((*node).paused); len(paused) > 0 {
		faults = append(faults, "paused "+strings.Join(paused, " "))
	}
	if len(faults) == 0 {
		faults = append(faults, "none")
	}
	c := r.counts
	r.console.setProgress(fmt.Sprintf("%5.1fs / %.0fs | %d ops: %d ok, %d fail, %d info | faults: %s",
		now.Seconds(), r.o.TimeLimit.Seconds(), c.invoked, c.ok, c.fail, c.info, strings.Join(faults, ", ")))
}

func (r *runner) nodesWhere(pred func(*node) bool) []string {
	var ids []string
	for _, n := range r.nodes {
		if pred(n) {
			ids = append(ids, n.id)
		}
	}
	return ids
}
