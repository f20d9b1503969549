package simnet

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/nemesis"
	"chunklease/workloads/lease"
)

// leaseRequest is the part of a lease request the fake lease node reads.
type leaseRequest struct {
	Chunk   string `json:"chunk_handle"`
	Server  string `json:"server"`
	LeaseMs int64  `json:"lease_ms"`
	Token   int64  `json:"token"`
}

// leaseScript is an in-process single-authority lease node: one table in
// this incarnation's memory, so it is correct as the only node and
// forgets every lease when killed. For LEASE_BOOT_WAIT_MS after it starts
// it answers every lease request with error 11, as the real node's
// acceptor stays silent. Each grant or renew is an instance with its own
// token (the wall clock in microseconds, so tokens grow across restarts);
// a holder's instances are kept until they end, and release ends the one
// its token names.
func leaseScript(env []string) script {
	type lease struct {
		holder    string
		instances map[int64]time.Time // token -> end
	}
	table := map[string]*lease{}
	var lastToken int64
	bootUntil := time.Now().Add(time.Duration(envInt(env, "LEASE_BOOT_WAIT_MS")) * time.Millisecond)
	end := func(l *lease) time.Time {
		var e time.Time
		for _, t := range l.instances {
			if t.After(e) {
				e = t
			}
		}
		return e
	}
	return func(self string, m inMsg) ([]string, bool) {
		if m.body.Type == "init" {
			return echoScript(self, m)
		}
		var req leaseRequest
		_ = json.Unmarshal(m.Body, &req)
		now := time.Now()
		if now.Before(bootUntil) {
			return []string{reply(self, m, `"type":"error","code":11,"text":"booting"`)}, false
		}
		l := table[req.Chunk]
		live := l != nil && now.Before(end(l))
		remaining := func(t time.Time) int64 { return max(0, int64(t.Sub(now)/time.Millisecond)) }
		switch m.body.Type {
		case "lease_grant", "lease_renew":
			if live && l.holder != req.Server {
				if m.body.Type == "lease_renew" {
					return []string{reply(self, m, `"type":"error","code":22,"text":"held"`)}, false
				}
				return []string{reply(self, m, fmt.Sprintf(`"type":"lease_grant_ok","chunk_handle":%q,"primary":%q,"expires_in_ms":%d`, req.Chunk, l.holder, remaining(end(l))))}, false
			}
			if !live {
				l = &lease{holder: req.Server, instances: map[int64]time.Time{}}
				table[req.Chunk] = l
			}
			lastToken = max(lastToken+1, now.UnixMicro())
			ends := now.Add(time.Duration(req.LeaseMs) * time.Millisecond)
			l.instances[lastToken] = ends
			if m.body.Type == "lease_renew" {
				return []string{reply(self, m, fmt.Sprintf(`"type":"lease_renew_ok","new_expires_in_ms":%d,"token":%d`, remaining(ends), lastToken))}, false
			}
			return []string{reply(self, m, fmt.Sprintf(`"type":"lease_grant_ok","chunk_handle":%q,"primary":%q,"expires_in_ms":%d,"token":%d`, req.Chunk, req.Server, remaining(ends), lastToken))}, false
		case "lease_check":
			if l == nil {
				return []string{reply(self, m, `"type":"lease_check_ok","primary":null,"remaining_ms":0,"expired":true`)}, false
			}
			return []string{reply(self, m, fmt.Sprintf(`"type":"lease_check_ok","primary":%q,"remaining_ms":%d,"expired":%t`, l.holder, remaining(end(l)), !live))}, false
		case "lease_release":
			if live && l.holder == req.Server {
				delete(l.instances, req.Token)
			}
			return []string{reply(self, m, fmt.Sprintf(`"type":"lease_release_ok","chunk_handle":%q`, req.Chunk))}, false
		}
		return []string{reply(self, m, `"type":"error","code":10,"text":"unsupported"`)}, false
	}
}

// envInt reads KEY=value from a launch's extra environment (0 if absent).
func envInt(env []string, key string) int64 {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// leaseSimOptions runs the fake lease node on one node, the only
// authority, with the lease workload (2 s leases) and the given faults.
// A request to a killed node times out only after 5 s, so the workers
// outnumber the ops a downtime can hold up: some are free when the node
// comes back. The nemesis interval is the caller's: a boot wait of 2 s
// needs the node up long enough between kills for every op to succeed
// some time (the stats checker), the negative control frequent kills.
func leaseSimOptions(t *testing.T, faults nemesis.Faults, interval time.Duration, seed uint64) (testRun, *fakeNet) {
	t.Helper()
	launch, log := fakeLauncherEnv(leaseScript)
	o, _, _ := simOptions(t, echoScript, 1, 20, seed)
	o.Launch = launch
	o.Workload = lease.NewLease(lease.LeaseOptions{LeaseMs: 2000, Rate: 10, Workers: 20}, harness.WorkloadSeed(seed))
	o.Faults, o.NemesisInterval, o.TimeLimit = faults, interval, 40*time.Second
	return o, log
}

// nemesisSteps pairs the nemesis ops of a history (invoke, completion).
func nemesisSteps(t *testing.T, h []history.Op) [][2]history.Op {
	t.Helper()
	var nem []history.Op
	for _, op := range h {
		if op.Process.Nemesis {
			nem = append(nem, op)
		}
	}
	if len(nem)%2 != 0 {
		t.Fatalf("%d nemesis ops: an op without its completion", len(nem))
	}
	var steps [][2]history.Op
	for i := 0; i < len(nem); i += 2 {
		if nem[i].F != nem[i+1].F || nem[i].Type != history.Info || nem[i+1].Type != history.Info {
			t.Fatalf("nemesis ops %+v and %+v are no invoke/completion pair", nem[i], nem[i+1])
		}
		steps = append(steps, [2]history.Op{nem[i], nem[i+1]})
	}
	return steps
}

func nodesOf(t *testing.T, v json.RawMessage) []string {
	t.Helper()
	var nodes []string
	if err := json.Unmarshal(v, &nodes); err != nil {
		t.Fatalf("value %s is not a node list", v)
	}
	return nodes
}

// TestSimKillRestartsWithBootWait: kill and start alternate; a kill's
// completion lists the nodes it killed and the next start's the same
// nodes, each started again with LEASE_MAX_MS, LEASE_MS and
// LEASE_BOOT_WAIT_MS = the longest lease and sent a fresh init (msg_id 1,
// from a client never used before). The single-authority node with its
// boot wait stays valid, and the final phase heals and reads every chunk.
func TestSimKillRestartsWithBootWait(t *testing.T) {
	// From the test's seed, the first seed whose first kill hits the one
	// node: otherwise a run may kill nothing at all.
	seed := firstSeedHitting(t, testSeed(t), []string{"n1"}, nemesis.Faults{Kill: true}, 4*time.Second, nemesis.KillOp)
	t.Logf("running with seed %d", seed)
	synctest.Test(t, func(t *testing.T) {
		o, log := leaseSimOptions(t, nemesis.Faults{Kill: true}, 4*time.Second, seed)
		out := runSim(context.Background(), o)
		checkLeaseValid(t, out)
		h := readHistory(t, out.Dir)
		checkHistoryDiscipline(t, h, o.Options)
		steps := nemesisSteps(t, h)
		killed, restarts := 0, 0
		down := []string{}
		for i, st := range steps {
			switch st[0].F {
			case nemesis.KillOp:
				if len(down) > 0 {
					t.Fatalf("step %d: a kill while %v are down", i, down)
				}
				down = nodesOf(t, st[1].Value)
				killed += len(down)
			case nemesis.StartOp:
				if got := nodesOf(t, st[1].Value); !slices.Equal(got, down) || string(st[0].Value) != `"all"` {
					t.Fatalf("step %d: start %s -> %v, want all -> %v", i, st[0].Value, got, down)
				}
				restarts += len(down)
				down = nil
			default:
				t.Fatalf("step %d: unexpected %s", i, st[0].F)
			}
		}
		if killed == 0 || restarts != killed {
			t.Fatalf("%d nodes killed, %d restarted; want some, all restarted by the end", killed, restarts)
		}
		envs := log.envs("n1")
		if len(envs) != 1+restarts {
			t.Fatalf("%d launches of n1, want %d", len(envs), 1+restarts)
		}
		if want := []string{"LEASE_MAX_MS=2000", "LEASE_MS=2000"}; !slices.Equal(envs[0], want) {
			t.Errorf("first launch env %v, want %v", envs[0], want)
		}
		for _, env := range envs[1:] {
			if want := []string{"LEASE_MAX_MS=2000", "LEASE_MS=2000", "LEASE_BOOT_WAIT_MS=2000"}; !slices.Equal(env, want) {
				t.Errorf("restart env %v, want %v", env, want)
			}
		}
		checkReinits(t, log.of("n1"), 1+restarts)
		if f := out.Results.Final; !f.Ran || f.Invoked != 3 || f.OK != 3 || f.Valid != true {
			t.Errorf("final phase %+v, want 3 of 3 checks ok", f)
		}
		if n := out.Results.Nemesis; n.NodesKilled != killed || n.NodesRestarted != restarts || n.Ops["kill"] == 0 {
			t.Errorf("nemesis figures %+v", n)
		}
	})
}

// checkLeaseValid: the run completed and the lease checker found no
// violation. (On one node that is killed and paused this often, an op
// such as renew may never succeed, which the stats checker would call
// invalid; that is not what these tests judge.)
func checkLeaseValid(t *testing.T, out harness.Outcome) {
	t.Helper()
	if out.Exit == harness.ExitFailed || out.Results == nil || out.Results.Checks.Workload == nil || !*out.Results.Checks.Workload {
		t.Fatalf("exit %d (%v): the lease checker must find the history valid", out.Exit, out.Err)
	}
	if out.Exit != harness.ExitValid && out.Results.Stats.Valid {
		t.Fatalf("exit %d with a valid history and stats", out.Exit)
	}
}

// checkReinits: every incarnation got exactly one init, msg_id 1, each
// from its own client, and no client was used before its init.
func checkReinits(t *testing.T, got []inMsg, incarnations int) {
	t.Helper()
	seen := map[string]bool{}
	inits := 0
	for _, m := range got {
		if m.body.Type == "init" {
			inits++
			if seen[m.Src] || m.body.MsgID != 1 {
				t.Errorf("init from %s (msg_id %d): want a fresh client and msg_id 1", m.Src, m.body.MsgID)
			}
		}
		seen[m.Src] = true
	}
	if inits != incarnations {
		t.Errorf("%d inits for %d incarnations", inits, incarnations)
	}
}

// TestSimKillWithoutBootWaitIsCaught is the kill nemesis's negative
// control: the same runs with restarts that skip the boot wait let the
// restarted authority forget the leases its earlier incarnation granted
// while they still run: it reports no holder (read-no-holder) or grants
// the chunk to another server (two-primaries). The control is run on
// fixed seeds (replayed exactly: time is virtual) and must be caught on
// each.
func TestSimKillWithoutBootWaitIsCaught(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		synctest.Test(t, func(t *testing.T) {
			o, log := leaseSimOptions(t, nemesis.Faults{Kill: true}, time.Second, seed)
			o.KillWithoutBootWait = true
			out := runSim(context.Background(), o)
			res, _ := out.Results.Checker.(lease.LeaseSummary)
			if out.Exit != harness.ExitInvalid || len(res.Violations) == 0 {
				t.Fatalf("seed %d: exit %d (%v), violations %+v; want violations", seed, out.Exit, out.Err, res.Violations)
			}
			kinds := map[string]int{}
			for _, v := range res.Violations {
				kinds[v.Kind]++
			}
			t.Logf("seed %d: caught: %v", seed, kinds)
			for _, env := range log.envs("n1")[1:] {
				if envInt(env, "LEASE_BOOT_WAIT_MS") != 0 || !slices.Contains(env, "LEASE_BOOT_WAIT_MS=0") {
					t.Errorf("seed %d: restart env %v, want LEASE_BOOT_WAIT_MS=0", seed, env)
				}
			}
		})
	}
}

// TestSimPauseDelaysAndDropsLateReplies: pauses and resumes alternate;
// requests sent to a paused node are answered only after its resume
// (they came out late); replies the node then sends to clients that
// already timed out and were closed are dropped and counted, not a
// failure of the run, even in strict mode.
func TestSimPauseDelaysAndDropsLateReplies(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _, console := simOptions(t, echoScript, 3, 6, seed)
		o.Faults, o.NemesisInterval, o.TimeLimit = nemesis.Faults{Pause: true}, 4*time.Second, 120*time.Second
		out := runSim(context.Background(), o)
		if out.Exit == harness.ExitFailed {
			t.Fatalf("the run failed: %v\n%s", out.Err, console)
		}
		h := readHistory(t, out.Dir)
		checkHistoryDiscipline(t, h, o.Options)
		late := 0
		paused := map[string]int64{} // node -> when its pause began
		for _, op := range h {
			switch {
			case op.Process.Nemesis && op.F == nemesis.PauseOp && op.Value[0] == '[':
				for _, n := range nodesOf(t, op.Value) {
					paused[n] = op.Time
				}
			case op.Process.Nemesis && op.F == nemesis.ResumeOp && op.Value[0] == '[':
				clear(paused)
			case !op.Process.Nemesis && op.Type == history.OK:
				if since, ok := paused[op.Node]; ok && op.Time > since {
					t.Fatalf("op %d completed ok at %v from %s, paused since %v", op.Index, op.Time, op.Node, since)
				}
			}
		}
		pairs, _ := history.PairOps(h)
		for _, p := range pairs {
			if p.Completion.Type == history.OK && p.Completion.Time-p.Invoke.Time > int64(time.Second) {
				late++
			}
		}
		if late == 0 {
			t.Error("no op came out late: pauses did not hold requests back")
		}
		// Echo has no final phase: the last pause may still be in force.
		if n := out.Results.Nemesis; n.NodesPaused == 0 || n.NodesResumed < n.NodesPaused-len(o.Nodes) || n.LateRepliesDropped == 0 {
			t.Errorf("nemesis figures %+v: want pauses, resumes, and late replies dropped", n)
		}
	})
}

// TestSimFinalPhaseHealsEverything: with every fault on, the final phase
// records stop-partition, resume and start (in that order), every node
// is up and unpaused when the final reads begin, and each chunk is
// checked once, after the recovery wait.
func TestSimFinalPhaseHealsEverything(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _ := leaseSimOptions(t, nemesis.Faults{Partition: true, Kill: true, Pause: true}, 4*time.Second, seed)
		out := runSim(context.Background(), o)
		checkLeaseValid(t, out)
		h := readHistory(t, out.Dir)
		checkHistoryDiscipline(t, h, o.Options)
		steps := nemesisSteps(t, h)
		last := steps[len(steps)-3:]
		for i, f := range []string{nemesis.StopPartition, nemesis.ResumeOp, nemesis.StartOp} {
			if last[i][0].F != f {
				t.Fatalf("final nemesis ops %s, %s, %s; want stop-partition, resume, start", last[0][0].F, last[1][0].F, last[2][0].F)
			}
		}
		healed := last[2][1].Time
		if healed != out.Results.Final.HealedAtNs {
			t.Errorf("healed at %d, results say %d", healed, out.Results.Final.HealedAtNs)
		}
		var finals []history.Op
		for _, op := range h {
			if op.Time > healed && op.Type == history.Invoke {
				finals = append(finals, op)
			}
		}
		if len(finals) != 3 {
			t.Fatalf("%d ops after the heal, want one check per chunk", len(finals))
		}
		for i, op := range finals {
			if op.F != lease.FCheck || op.Time < healed+int64(harness.DefaultRecoveryTime(2000)) || string(op.Value) != fmt.Sprintf(`{"chunk":"ch_%d"}`, i+1) {
				t.Errorf("final op %+v: want check ch_%d after the recovery wait", op, i+1)
			}
		}
	})
}

// TestSimFinalPhaseWithoutFaults: a run without a nemesis has nothing to
// heal, so its final phase reads at once (no recovery wait) and keeps
// finalWorkersPerNode reads in flight on its one node although the main
// phase had two workers: the added workers are new processes, numbered
// after every process of the main phase, and each chunk is checked once.
func TestSimFinalPhaseWithoutFaults(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _ := leaseSimOptions(t, nemesis.Faults{}, 0, seed)
		o.Concurrency, o.TimeLimit = 2, 10*time.Second
		o.Workload = lease.NewLease(lease.LeaseOptions{LeaseMs: 2000, Rate: 20, Chunks: 40, Workers: 2}, harness.WorkloadSeed(seed))
		out := runSim(context.Background(), o)
		checkLeaseValid(t, out)
		h := readHistory(t, out.Dir)
		checkHistoryDiscipline(t, h, o.Options)
		f := out.Results.Final
		if !f.Ran || f.RecoveryWaitS != 0 || f.Workers != 8 || f.Invoked < 8 || f.OK != f.Invoked {
			t.Fatalf("final phase %+v, want at least 8 checks, all ok, on 8 workers, no recovery wait", f)
		}
		first := len(h) - 2*f.Invoked // the final ops end the history
		mainEnd, mainTop := h[first-1].Time, 0
		for _, op := range h[:first] {
			mainTop = max(mainTop, op.Process.ID)
		}
		open, most, chunks := map[int]bool{}, 0, map[string]bool{}
		for _, op := range h[first:] {
			if op.Type != history.Invoke {
				delete(open, op.Process.ID)
				continue
			}
			if op.F != lease.FCheck || chunks[string(op.Value)] {
				t.Fatalf("final op %+v: want one check per chunk", op)
			}
			chunks[string(op.Value)] = true
			if op.Process.ID >= 2 && op.Process.ID <= mainTop {
				t.Errorf("final op %+v: an added worker's process must come after the main phase's (up to %d)", op, mainTop)
			}
			open[op.Process.ID] = true
			most = max(most, len(open))
		}
		if most != 8 {
			t.Errorf("at most %d final checks in flight, want 8", most)
		}
		if start := h[first].Time; start-mainEnd >= int64(time.Second) {
			t.Errorf("final reads began %v after the main phase ended: no fault, no recovery wait", time.Duration(start-mainEnd))
		}
	})
}

// TestSimNoFinalPhaseForEcho: a workload without final ops ends with the
// main phase, faults in force, as Maelstrom's echo does.
func TestSimNoFinalPhaseForEcho(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _, _ := simOptions(t, gossipScript, 5, 5, seed)
		o.Faults, o.NemesisInterval, o.TimeLimit = nemesis.Faults{Partition: true}, time.Second, 5*time.Second
		out := runSim(context.Background(), o)
		if out.Results.Final.Ran || out.Results.Final.Valid != nil || out.Results.Checks.Final != nil {
			t.Errorf("final phase %+v for echo", out.Results.Final)
		}
	})
}

// TestSimPacketFault: start-packet and stop-packet alternate; each start
// records the drawn settings with its node specification and completes
// with the same settings on the nodes picked (netsim took them), each
// stop names the links it restored, and the final phase ends with
// stop-packet (after a stop too: it heals whether or not a fault is in
// force) before the reads. The run stays valid.
func TestSimPacketFault(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _ := leaseSimOptions(t, nemesis.Faults{Packet: true}, 2*time.Second, seed)
		out := runSim(context.Background(), o)
		checkLeaseValid(t, out)
		steps := nemesisSteps(t, readHistory(t, out.Dir))
		applied := []string{} // the nodes of the packet fault in force
		for i, st := range steps {
			want := []string{nemesis.StartPacket, nemesis.StopPacket}[i%2]
			final := i == len(steps)-1 && st[0].F == nemesis.StopPacket // the final phase's, in force or not
			if st[0].F != want && !final {
				t.Fatalf("nemesis step %d is %s, want %s", i, st[0].F, want)
			}
			if st[0].F == nemesis.StopPacket {
				if got := nodesOf(t, st[1].Value); !slices.Equal(got, applied) {
					t.Errorf("stop-packet restored %v, want %v", got, applied)
				}
				applied = []string{}
				continue
			}
			var drawn, done struct {
				Nodes json.RawMessage `json:"nodes"`
				nemesis.PacketSettings
			}
			if json.Unmarshal(st[0].Value, &drawn) != nil || json.Unmarshal(st[1].Value, &done) != nil {
				t.Fatalf("start-packet values %s, %s", st[0].Value, st[1].Value)
			}
			applied = nodesOf(t, done.Nodes)
			drawn.PacketSettings.Nodes, done.PacketSettings.Nodes = nil, nil
			if !reflect.DeepEqual(drawn.PacketSettings, done.PacketSettings) || (len(applied) > 0 && !slices.Equal(applied, []string{"n1"})) {
				t.Errorf("start-packet drew %s and applied %s", st[0].Value, st[1].Value)
			}
		}
		if len(steps) < 4 || steps[len(steps)-1][0].F != nemesis.StopPacket || out.Results.Nemesis.Ops[nemesis.StartPacket] < 2 {
			t.Errorf("%d nemesis steps, the last %s; want several packet faults, healed at the end", len(steps), steps[len(steps)-1][0].F)
		}
	})
}
