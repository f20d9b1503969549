package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/nemesis"
)

// nemesisWork is the nemesis's state. Like Jepsen's nemesis it performs
// one op at a time: partitions, kills, pauses, resumes, clock bumps and
// resets complete at once; a start (killed nodes launched again and made
// ready) and a clock strobe take time, and no other nemesis op starts
// until the one in flight is done.
type nemesisWork struct {
	busy   bool            // an op is in flight
	done   <-chan error    // its outcome (Applied.Done, a strobe's end)
	record func()          // records its completion once done says nil
	ctx    context.Context // cancelled at teardown: an action in flight gives up
	cancel context.CancelFunc
	bg     sync.WaitGroup // the runner's own fault goroutines (strobes); waited for at teardown
}

// pending marks an op in flight until done delivers; record then writes
// its completion.
func (w *nemesisWork) pending(done <-chan error, record func()) {
	w.busy, w.done, w.record = true, done, record
}

// faultState is what the nemesis has in force, as the runner saw it
// applied: for the progress line.
type faultState struct {
	partition              string // the target in force, "" when healed
	killed, paused, packet []string
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

// perform carries out one nemesis op: the runner makes the op's random
// choices (a partition's grudge, the nodes a kill or pause hits, a clock
// op's settings) and records it, the network applies it (the runner
// itself, for a clock op). The invoke's value is the op's shape, node
// specification or settings; the completion's the grudge, the nodes hit
// or the settings applied.
func (r *runner) perform(op nemesis.Op) {
	if op.F == nemesis.MemberOp {
		r.performMember()
		return
	}
	f, err := r.choose(op)
	r.recordNemesis(op.F, invokeValue(op, f))
	if err != nil {
		r.failure.set(err)
		return
	}
	if op.F == nemesis.ClockSkew || op.F == nemesis.ClockReset {
		r.applyClock(f)
		return
	}
	r.apply(op, f)
}

// invokeValue is what a nemesis op's invoke records.
func invokeValue(op nemesis.Op, f Fault) any {
	switch op.F {
	case nemesis.ClockSkew, nemesis.ClockReset:
		return f.Settings
	case nemesis.StartPartition:
		return string(op.Target)
	case nemesis.StopPartition:
		return nil
	case nemesis.KillOp, nemesis.PauseOp:
		return nodeSpecValue(op.Nodes)
	case nemesis.StartOp, nemesis.ResumeOp, nemesis.StopPacket:
		return op.Nodes
	case nemesis.StartPacket:
		return packetInvoke{Nodes: nodeSpecValue(op.Nodes), PacketSettings: op.Settings.(nemesis.PacketSettings)}
	}
	return op.Settings
}

// packetInvoke is a start-packet's invoke value: the settings drawn, with
// the node specification (null: a random subset) where the completion
// names the nodes.
type packetInvoke struct {
	Nodes any `json:"nodes"`
	nemesis.PacketSettings
}

// choose makes op's random choices: the fault action the network gets.
func (r *runner) choose(op nemesis.Op) (Fault, error) {
	f := Fault{F: op.F, Settings: op.Settings}
	var err error
	switch op.F {
	case nemesis.StartPartition:
		f.Grudge, err = nemesis.Compute(op.Target, r.o.Nodes, r.grudgeRNG)
	case nemesis.KillOp, nemesis.PauseOp:
		f.Nodes, err = nemesis.PickNodes(op.Nodes, r.o.Nodes, r.procRNG)
	case nemesis.StartOp:
		f.Env = r.nodeEnv(true)
	case nemesis.ClockSkew, nemesis.ClockReset:
		if r.clock == nil {
			return f, fmt.Errorf("a %s op in a run without the clock fault", op.F)
		}
		f.Settings, err = nemesis.DrawClock(op, r.o.Nodes, r.clock.now, r.clock.draw, r.o.NemesisInterval, r.clock.rng)
	case nemesis.StartPacket:
		settings := op.Settings.(nemesis.PacketSettings)
		settings.Nodes, err = nemesis.PickNodes(op.Nodes, r.o.Nodes, r.packetRNG)
		f.Nodes, f.Settings = settings.Nodes, settings
	}
	return f, err
}

// nodeSpecValue is a kill's or pause's invoke value: the node
// specification, or null for Jepsen's random subset.
func nodeSpecValue(spec nemesis.NodeSpec) any {
	if spec == nemesis.SpecRandom {
		return nil
	}
	return string(spec)
}

// apply has the network apply f and records the completion, unless the
// action is still in flight (a start: finishRestart records it).
func (r *runner) apply(op nemesis.Op, f Fault) {
	applied, err := r.net.Apply(r.nemesis.ctx, f)
	if err != nil {
		r.failure.set(fmt.Errorf("nemesis %s: %w", f.F, err))
		return
	}
	if applied.Done != nil {
		started := nonNil(applied.Nodes)
		r.nemesis.pending(applied.Done, func() {
			r.note(nemesis.StartOp, "", started)
			r.recordNemesis(nemesis.StartOp, started)
		})
		return
	}
	r.note(f.F, op.Target, applied.Nodes)
	r.recordNemesis(f.F, completionValue(f, applied))
}

// completionValue is what a nemesis op's completion records.
func completionValue(f Fault, a Applied) any {
	switch {
	case f.F == nemesis.StartPartition:
		return []any{"isolated", f.Grudge}
	case f.F == nemesis.StopPartition:
		return "network-healed"
	case a.Value != nil:
		return a.Value
	}
	return nonNil(a.Nodes)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// note keeps the progress line's view of the faults in force.
func (r *runner) note(f string, target nemesis.Target, nodes []string) {
	st := &r.faults
	switch f {
	case nemesis.StartPartition:
		st.partition = string(target)
	case nemesis.StopPartition:
		st.partition = ""
	case nemesis.KillOp:
		st.killed = union(st.killed, nodes)
		st.paused = slices.DeleteFunc(st.paused, func(n string) bool { return slices.Contains(nodes, n) })
	case nemesis.StartOp:
		st.killed = slices.DeleteFunc(st.killed, func(n string) bool { return slices.Contains(nodes, n) })
	case nemesis.PauseOp:
		st.paused = union(st.paused, nodes)
	case nemesis.ResumeOp:
		st.paused = slices.DeleteFunc(st.paused, func(n string) bool { return slices.Contains(nodes, n) })
	case nemesis.StartPacket:
		st.packet = union(st.packet, nodes)
	case nemesis.StopPacket:
		st.packet = nil
	}
}

// union is a with b's elements it lacks, sorted.
func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	slices.Sort(a)
	return a
}

// finishPending records the end of the nemesis op in flight (a start, a
// strobe).
func (r *runner) finishPending(err error) {
	record := r.nemesis.record
	r.nemesis.busy, r.nemesis.done, r.nemesis.record = false, nil, nil
	if err != nil {
		r.failure.set(err)
		return
	}
	record()
}

// awaitNemesis waits for the nemesis op in flight (the final phase's).
func (r *runner) awaitNemesis(ctx context.Context) error {
	for r.nemesis.busy {
		select {
		case err := <-r.nemesis.done:
			r.finishPending(err)
		case <-r.failure.ch:
			return r.failure.err
		case <-ctx.Done():
			return ErrInterrupted
		}
	}
	return r.failure.get()
}

// recordNemesis writes one nemesis op. As in Jepsen, both the invocation
// and the completion of a nemesis op have type info.
func (r *runner) recordNemesis(f string, value any) {
	raw, _ := json.Marshal(value) // strings, node lists, grudges and settings always marshal
	r.record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: f, Value: raw})
}

// showProgress redraws the terminal progress line.
func (r *runner) showProgress(now time.Duration) {
	r.flushHistory()
	faults := []string{}
	if r.faults.partition != "" {
		faults = append(faults, "partition "+r.faults.partition)
	}
	if len(r.faults.killed) > 0 {
		faults = append(faults, "killed "+strings.Join(r.faults.killed, " "))
	}
	if len(r.faults.paused) > 0 {
		faults = append(faults, "paused "+strings.Join(r.faults.paused, " "))
	}
	if r.clock != nil {
		if skewed := r.clock.skewed(); len(skewed) > 0 {
			faults = append(faults, "clocks "+strings.Join(skewed, " "))
		}
	}
	if len(r.faults.packet) > 0 {
		faults = append(faults, "packet "+strings.Join(r.faults.packet, " "))
	}
	if len(faults) == 0 {
		faults = append(faults, "none")
	}
	c := r.counts
	r.console.setProgress(fmt.Sprintf("%5.1fs / %.0fs | %d ops: %d ok, %d fail, %d info | faults: %s",
		now.Seconds(), r.o.TimeLimit.Seconds(), c.invoked, c.ok, c.fail, c.info, strings.Join(faults, ", ")))
}
