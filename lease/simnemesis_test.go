package lease_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"chunklease/history"
)

// partitionShapes are the simulated nemesis targets: Jepsen's symmetric
// shapes plus one-directional cuts, which real Maelstrom also produces
// (its drop sets are per receiver), and a slow node whose outgoing
// messages are all held back for up to spikeMax (a congested link), so
// that every copy of what it sends arrives late together.
var partitionShapes = []string{"one", "majority", "ring", "deaf", "mute", "slow"}

// flipPartition alternates between starting a partition and healing, as
// Jepsen's partition nemesis does, and records both in the history.
func (w *world) flipPartition() {
	if w.nemesis {
		for i := range w.blocked {
			clear(w.blocked[i])
		}
		w.slow = -1
		w.nemesis = false
		w.recordNemesis("stop-partition", nil, "network-healed")
		for _, e := range w.held {
			e.at = w.now + w.sc.latency.draw(w.rng)
			w.push(e)
		}
		w.held = w.held[:0]
	} else {
		shape := partitionShapes[w.rng.IntN(len(partitionShapes))]
		w.cut(shape)
		w.nemesis = true
		w.recordNemesis("start-partition", shape, []any{"isolated", w.grudge()})
	}
	w.push(event{at: w.expDelay(w.sc.partition), kind: evNemesis})
}

// cut applies one shape to the drop sets.
func (w *world) cut(shape string) {
	n := w.sc.nodes
	perm := w.rng.Perm(n)
	x := perm[0]
	switch shape {
	case "one": // x alone, both ways
		for i := range n {
			if i != x {
				w.blocked[x][i], w.blocked[i][x] = true, true
			}
		}
	case "majority": // a minority and a majority, both ways
		minority := map[int]bool{}
		for _, i := range perm[:n/2] {
			minority[i] = true
		}
		for i := range n {
			for j := range n {
				w.blocked[i][j] = minority[i] != minority[j]
			}
		}
	case "ring": // each node hears only its ring neighbours (directed at n=3)
		pos := make([]int, n)
		for k, i := range perm {
			pos[i] = k
		}
		for i := range n {
			for j := range n {
				d := (pos[j] - pos[i] + n) % n
				w.blocked[i][j] = i != j && d != n-1 && (n == 3 || d != 1)
			}
		}
	case "deaf": // x receives nothing but is still heard
		for i := range n {
			w.blocked[x][i] = i != x
		}
	case "mute": // x hears everyone but nobody hears x
		for i := range n {
			w.blocked[i][x] = i != x
		}
	case "slow": // x's messages all arrive late
		w.slow = x
	}
}

// grudge renders the drop sets as receiver -> senders dropped.
func (w *world) grudge() map[string][]string {
	g := map[string][]string{}
	for i, row := range w.blocked {
		for j, b := range row {
			if b {
				g[w.ids[i]] = append(g[w.ids[i]], w.ids[j])
			}
		}
	}
	return g
}

func (w *world) recordNemesis(f string, invoke, done any) {
	iv, _ := json.Marshal(invoke)
	dv, _ := json.Marshal(done)
	w.record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: f, Value: iv})
	w.record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: f, Value: dv})
}

// crashSome kills a random running node, or in a storm a random majority
// or the whole cluster (a power loss), losing all their state; each
// restarts after a random downtime and then waits out its boot wait and
// recovers its ballot floor. A whole-cluster restart resets every promise
// while messages from before it may still be in flight: the case the
// acceptors' refusal to overwrite a live lease (rule 4) exists for.
func (w *world) crashSome() {
	victims := 1
	if w.rng.Float64() < w.sc.storm {
		victims = w.sc.nodes/2 + 1
		if w.rng.IntN(2) == 0 || w.sc.wholeCluster {
			victims = w.sc.nodes
		}
	}
	if w.sc.oneAtATime && w.restarting() {
		victims = 0
	}
	var killed []int
	order := w.rng.Perm(w.sc.nodes)
	if w.sc.oneVictim {
		order, victims = []int{0}, min(victims, 1)
	}
	for _, i := range order[:victims] {
		w.endOfLife(w.nodes[i])
		if w.sc.minorityCrashes && !w.mayCrash(i) {
			break
		}
		if w.crash(i) > 0 {
			killed = append(killed, i)
		}
	}
	if len(killed) > 0 {
		w.recordNemesis("kill", w.names(killed), w.names(killed))
	}
	w.push(event{at: w.expDelay(w.sc.crash), kind: evCrash})
}

// restarting reports whether a node is down or in its boot wait.
func (w *world) restarting() bool {
	for _, n := range w.nodes {
		if n.core == nil || n.core.Booting(n.local(w.now)) {
			return true
		}
	}
	return false
}

// forgetting counts the nodes that are down or still recovering their
// ballot floor: the ones that remember no promise.
func (w *world) forgetting() int {
	k := 0
	for _, n := range w.nodes {
		if n.core == nil || n.core.Recovering() {
			k++
		}
	}
	return k
}

// crash kills node i, if it runs, and books its restart after a random
// downtime, which it returns (0 if the node was already down).
func (w *world) crash(i int) time.Duration {
	n := w.nodes[i]
	if n.core == nil {
		return 0
	}
	n.core, n.wakeAt, n.paused, n.backlog = nil, -1, false, nil
	lo, hi := w.sc.downMin, w.sc.downMax
	if hi == 0 {
		lo, hi = 50*time.Millisecond, time.Duration(50+2*w.sc.leaseMs)*time.Millisecond
	}
	down := lo + time.Duration(w.rng.Int64N(int64(hi-lo)+1))
	w.push(event{at: w.now + down, kind: evRestart, node: i})
	return down
}

// restart starts node i again with the boot wait M, or with none in the
// negative control's schedules.
func (w *world) restart(i int) {
	bootWaitMs := w.sc.leaseMs
	if w.sc.noBootWait {
		bootWaitMs = 0
	}
	if n := w.nodes[i]; w.sc.aheadFixed && n.wallSkew == w.sc.aheadSkew {
		n.wallSkew = 0 // its clock was set right while it was down
	}
	w.boot(i, bootWaitMs)
	w.restarts++
	w.recordNemesis("start", w.names([]int{i}), w.names([]int{i}))
}

// pauseOne stops a running node (SIGSTOP) for a random time, often past
// the clients' timeout: its timers do not fire and what reaches it waits
// in its backlog, to be handled late, in arrival order, when it resumes.
// Its clock keeps running, as a stopped process's monotonic clock does.
func (w *world) pauseOne() {
	w.push(event{at: w.expDelay(w.sc.pause), kind: evPause})
	i := w.rng.IntN(w.sc.nodes)
	n := w.nodes[i]
	if n.core == nil || n.paused {
		return
	}
	n.paused = true
	w.recordNemesis("pause", w.names([]int{i}), w.names([]int{i}))
	stop := time.Duration(w.rng.Int64N(int64(2*clientTimeout))) + time.Millisecond
	w.push(event{at: w.now + stop, kind: evResume, node: i})
}

// resume lets a paused node run: it handles its backlog, then its timers.
func (w *world) resume(i int) {
	n := w.nodes[i]
	if n.core == nil || !n.paused {
		return
	}
	n.paused = false
	w.recordNemesis("resume", w.names([]int{i}), w.names([]int{i}))
	backlog := n.backlog
	n.backlog = nil
	for _, e := range backlog {
		if n.core == nil {
			break
		}
		if e.kind == evRequest {
			w.clients.serve(e)
		} else {
			w.absorb(i, n.core.Receive(n.local(w.now), e.msg))
		}
	}
	if n.core != nil && !n.paused {
		n.wakeAt = -1
		w.absorb(i, n.core.Tick(n.local(w.now)))
	}
}

// TestLoadStormsTakeTheWholeCluster: the load profile's storms take every
// node down at once (its point: a whole-cluster restart after load),
// whatever crash limit the base schedule drew before the profile. Crashes
// come at exponential intervals, so a schedule may have none; the first
// kill of one that has any finds every node up (the profile has no other
// fault that stops nodes) and must take them all.
func TestLoadStormsTakeTheWholeCluster(t *testing.T) {
	base := baseSeed(t)
	t.Logf("base seed %d (-seed takes it back)", base)
	withKills := 0
	for i := uint64(0); withKills < 6 && i < 60; i++ {
		sc := drawProfile(base+i, "none", (*scenario).load)
		ops, err := history.ReadHistory(bytes.NewReader(newWorld(sc).run()))
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			var killed []string
			if op.Process != history.NemesisProcess || op.F != "kill" || op.Type != history.Info || json.Unmarshal(op.Value, &killed) != nil {
				continue
			}
			withKills++
			if len(killed) != sc.nodes {
				t.Errorf("schedule %d (%s): its first kill took %v, not all %d nodes", base+i, sc, killed, sc.nodes)
			}
			break
		}
	}
	if withKills < 6 {
		t.Errorf("only %d of 60 load schedules from %d crashed a node", withKills, base)
	}
}
