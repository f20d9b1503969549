package simnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netsim"
	"chunklease/workloads"
	"chunklease/workloads/echo"
)

// simOptions runs in-process fake nodes following s with the echo
// workload; call Run inside a synctest bubble, where time is virtual.
func simOptions(t *testing.T, s script, nodes, concurrency int, seed uint64) (testRun, *fakeNet, *bytes.Buffer) {
	t.Helper()
	launch, log := fakeLauncher(s)
	var out bytes.Buffer
	ids := make([]string, nodes)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i+1)
	}
	return testRun{Options: harness.Options{
		Workload:    echo.NewEcho(echo.EchoOptions{Rate: 50}, harness.WorkloadSeed(seed)),
		Nodes:       ids,
		TimeLimit:   10 * time.Second,
		Concurrency: concurrency,
		Seed:        seed,
		StoreDir:    filepath.Join(t.TempDir(), "store"),
		Stdout:      &out,
		Stderr:      &out,
	}, Config: Config{
		Launch:  launch,
		Latency: netsim.Latency{MeanMs: 10, Dist: netsim.Exponential},
		Strict:  true,
	}}, log, &out
}

// readHistory reads the run's history.jsonl back.
func readHistory(t *testing.T, dir string) []history.Op {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops, err := history.ReadHistory(f)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

func clientOps(h []history.Op) []history.Op {
	return slices.DeleteFunc(slices.Clone(h), func(op history.Op) bool { return op.Process.Nemesis })
}

func TestSimEchoRun(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, log, console := simOptions(t, echoScript, 3, 6, seed)
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitValid {
			t.Fatalf("exit %d: %v\n%s", out.Exit, out.Err, console)
		}
		h := readHistory(t, out.Dir)
		checkHistoryDiscipline(t, h, o.Options)
		checkInits(t, log, o.Nodes)
		if n := len(clientOps(h)); n < 2*400 {
			t.Errorf("%d client ops in 10 s at rate 50, want about 1000", n)
		}
		// Ops rotate over the workers (Jepsen's context does), so every
		// worker, and so every node, gets a fair share.
		perWorker := make([]int, o.Concurrency)
		for _, op := range clientOps(h) {
			if op.Type == history.Invoke {
				perWorker[op.Process.ID%o.Concurrency]++
			}
		}
		for w, n := range perWorker {
			if n < 400/o.Concurrency {
				t.Errorf("worker %d got %d ops of about %d: %v", w, n, 500/o.Concurrency, perWorker)
			}
		}
	})
}

// checkHistoryDiscipline: times never go back; each worker talks to node
// worker mod n; every invoke completes (PairOps finds no problem); no op
// is invoked at or after the first op's time + the time limit.
func checkHistoryDiscipline(t *testing.T, h []history.Op, o harness.Options) {
	t.Helper()
	for i := 1; i < len(h); i++ {
		if h[i].Time < h[i-1].Time || h[i].Index != i {
			t.Fatalf("op %d (time %d) after op %d (time %d): history not in real-time order", i, h[i].Time, i-1, h[i-1].Time)
		}
	}
	pairs, problems := history.PairOps(h)
	if len(problems) > 0 {
		t.Fatalf("history problems: %+v", problems)
	}
	retired := map[int]bool{} // a process ends with its first info (Jepsen)
	for _, op := range h {
		if op.Process.Nemesis {
			continue
		}
		if retired[op.Process.ID] {
			t.Fatalf("op %d: process %d used again after its info", op.Index, op.Process.ID)
		}
		retired[op.Process.ID] = op.Type == history.Info
	}
	if f, ok := o.Workload.(workloads.Finisher); ok {
		pairs = pairs[:len(pairs)-len(f.FinalOps())] // the final phase comes after the cutoff
	}
	cutoff := h[0].Time + int64(o.TimeLimit)
	for _, p := range pairs {
		worker := p.Invoke.Process.ID % o.Concurrency
		if want := o.Nodes[worker%len(o.Nodes)]; p.Invoke.Node != want {
			t.Errorf("process %d (worker %d) talked to %s, want %s", p.Invoke.Process.ID, worker, p.Invoke.Node, want)
		}
		if p.Completion == nil {
			t.Errorf("op %d never completed", p.Invoke.Index)
		}
		if p.Invoke.Time >= cutoff {
			t.Errorf("op %d invoked at %v, after the cutoff %v", p.Invoke.Index, time.Duration(p.Invoke.Time), time.Duration(cutoff))
		}
	}
}

// checkInits: each node got exactly one init, msg_id 1, its own id, the
// node list in CLI order, node i from client c(i-1); worker requests come
// from c(2n) on.
func checkInits(t *testing.T, log *fakeNet, nodes []string) {
	t.Helper()
	for i, id := range nodes {
		var inits []inMsg
		for _, m := range log.of(id) {
			if m.body.Type == "init" {
				inits = append(inits, m)
			} else if clientNumber(m.Src) < 2*len(nodes) {
				t.Errorf("%s got %s from %s, want worker clients from c%d on", id, m.body.Type, m.Src, 2*len(nodes))
			}
		}
		if len(inits) != 1 {
			t.Fatalf("%s got %d inits", id, len(inits))
		}
		var b initRequest
		json.Unmarshal(inits[0].Body, &b)
		if inits[0].body.MsgID != 1 || b.NodeID != id || !slices.Equal(b.NodeIDs, nodes) || inits[0].Src != fmt.Sprintf("c%d", i) {
			t.Errorf("%s init %s from %s", id, inits[0].Body, inits[0].Src)
		}
	}
}

func clientNumber(name string) int {
	var k int
	fmt.Sscanf(name, "c%d", &k)
	return k
}

// TestSimTimeoutIsInfo: an unanswered echo completes info after exactly
// 5 s with error net-timeout; the worker's next op uses process +
// concurrency and a fresh client.
func TestSimTimeoutIsInfo(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		silent := withEcho(func(string, inMsg) []string { return nil })
		o, log, _ := simOptions(t, silent, 1, 2, seed)
		o.TimeLimit = 12 * time.Second
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitInvalid {
			t.Fatalf("exit %d (%v): timed-out echoes must make the history invalid", out.Exit, out.Err)
		}
		pairs, _ := history.PairOps(readHistory(t, out.Dir))
		if len(pairs) < 4 {
			t.Fatalf("only %d ops", len(pairs))
		}
		for _, p := range pairs {
			c := p.Completion
			if c.Type != history.Info || c.Error != workloads.TimeoutError || c.Time-p.Invoke.Time != int64(harness.ClientTimeout) {
				t.Errorf("op %+v completed %+v, want info net-timeout after exactly 5 s", p.Invoke, *c)
			}
		}
		srcByProcess := map[int]string{}
		for _, m := range log.of("n1") {
			if m.body.Type == "echo" {
				srcByProcess[len(srcByProcess)] = m.Src
			}
		}
		workerProcesses := map[int][]int{}
		for _, p := range pairs {
			w := p.Invoke.Process.ID % 2
			workerProcesses[w] = append(workerProcesses[w], p.Invoke.Process.ID)
		}
		for w, ps := range workerProcesses {
			for i, p := range ps {
				if p != w+2*i {
					t.Errorf("worker %d's processes %v, want %d, %d, ...", w, ps, w, w+2)
				}
			}
		}
		srcs := map[string]bool{}
		for _, s := range srcByProcess {
			srcs[s] = true
		}
		if len(srcs) != len(pairs) {
			t.Errorf("%d echo requests came from %d clients: each op after an info needs a fresh client", len(pairs), len(srcs))
		}
	})
}

// errorCases are error codes (as JSON) and the completion type each must
// give an echo op (echo has no idempotent op).
var errorCases = []struct {
	code string
	want string
}{
	{"11", history.Fail}, {"12", history.Fail}, {"22", history.Fail}, {"10", history.Fail}, {"1", history.Fail},
	{"13", history.Info}, {"0", history.Info}, {"1000", history.Info}, {"11.0", history.Info},
	{`"11"`, history.Info}, {"null", history.Info},
}

// echoNumber is N in "Please echo N".
func echoNumber(value json.RawMessage) int {
	var s string
	var n int
	json.Unmarshal(value, &s)
	fmt.Sscanf(s, "Please echo %d", &n)
	return n
}

// TestSimErrorMapping: definite error codes complete fail (same process),
// indefinite ones info (next process). The node picks the code from the
// echo text, so one run covers every code.
func TestSimErrorMapping(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		failing := withEcho(func(self string, m inMsg) []string {
			code := errorCases[echoNumber(m.body.Echo)%len(errorCases)].code
			return []string{reply(self, m, `"type":"error","code":`+code+`,"text":"nope"`)}
		})
		o, _, _ := simOptions(t, failing, 1, 1, seed)
		o.TimeLimit = 4 * time.Second
		out := runSim(context.Background(), o)
		pairs, _ := history.PairOps(readHistory(t, out.Dir))
		seen := map[string]bool{}
		process := 0
		for _, p := range pairs {
			c := errorCases[echoNumber(p.Invoke.Value)%len(errorCases)]
			seen[c.code] = true
			if p.Completion.Type != c.want || !strings.Contains(p.Completion.Error, "nope") {
				t.Errorf("code %s completed %s (%q), want %s", c.code, p.Completion.Type, p.Completion.Error, c.want)
			}
			if p.Invoke.Process.ID != process {
				t.Fatalf("op %d has process %d, want %d", p.Invoke.Index, p.Invoke.Process.ID, process)
			}
			if p.Completion.Type == history.Info {
				process++ // + concurrency (1)
			}
		}
		if len(seen) != len(errorCases) {
			t.Errorf("only codes %v came up; run longer", seen)
		}
	})
}

// gossipScript answers echo and also sends a message to every peer, so
// partitions have something to drop.
func gossipScript(self string, m inMsg) ([]string, bool) {
	lines, exit := echoScript(self, m)
	if m.body.Type == "echo" {
		for _, peer := range []string{"n1", "n2", "n3", "n4", "n5"} {
			if peer != self {
				lines = append(lines, fmt.Sprintf(`{"src":%q,"dest":%q,"body":{"type":"gossip"}}`, self, peer))
			}
		}
	}
	return lines, exit
}

// TestSimNemesis: nemesis ops alternate start/stop from about t=0, each
// an invoke (the target) and a completion (["isolated", grudge] or
// "network-healed"), never after the cutoff; partitions drop messages.
func TestSimNemesis(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _, console := simOptions(t, gossipScript, 5, 5, seed)
		o.Faults.Partition, o.NemesisInterval, o.TimeLimit = true, time.Second, 20*time.Second
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitValid {
			t.Fatalf("exit %d: %v\n%s", out.Exit, out.Err, console)
		}
		h := readHistory(t, out.Dir)
		checkNemesisOps(t, h, o.Options)
		if d := out.Results.Net.Servers.DropCount; d == 0 {
			t.Error("no message dropped: partitions were not applied")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		o, _, _ := simOptions(t, gossipScript, 5, 5, seed)
		out := runSim(context.Background(), o)
		if d := out.Results.Net.Servers.DropCount; d != 0 || out.Exit != harness.ExitValid {
			t.Errorf("without a nemesis: %d drops, exit %d", d, out.Exit)
		}
	})
}

func checkNemesisOps(t *testing.T, h []history.Op, o harness.Options) {
	t.Helper()
	var nem []history.Op
	for _, op := range h {
		if op.Process.Nemesis {
			nem = append(nem, op)
		}
	}
	if len(nem) < 8 || len(nem)%2 != 0 {
		t.Fatalf("%d nemesis ops in 20 s with interval 1 s", len(nem))
	}
	if nem[0].Time > int64(time.Millisecond) || nem[0].F != nemesis.StartPartition {
		t.Errorf("first nemesis op %+v, want start-partition at t=0", nem[0])
	}
	cutoff := h[0].Time + int64(o.TimeLimit)
	for i := 0; i < len(nem); i += 2 {
		inv, done := nem[i], nem[i+1]
		wantF := nemesis.StartPartition
		if i%4 == 2 {
			wantF = nemesis.StopPartition
		}
		if inv.F != wantF || done.F != wantF || inv.Type != history.Info || done.Type != history.Info || inv.Time >= cutoff {
			t.Fatalf("nemesis ops %d, %d: %+v %+v, want %s invoke and completion before the cutoff", i, i+1, inv, done, wantF)
		}
		if wantF == nemesis.StopPartition {
			if string(inv.Value) != "null" || string(done.Value) != `"network-healed"` {
				t.Errorf("stop values %s -> %s", inv.Value, done.Value)
			}
			continue
		}
		var target string
		var isolated []json.RawMessage
		var grudge map[string][]string
		if json.Unmarshal(inv.Value, &target) != nil || !slices.Contains(nemesis.Targets, nemesis.Target(target)) {
			t.Errorf("start invoke value %s is not a target", inv.Value)
		}
		if json.Unmarshal(done.Value, &isolated) != nil || len(isolated) != 2 || string(isolated[0]) != `"isolated"` ||
			json.Unmarshal(isolated[1], &grudge) != nil || len(grudge) != len(o.Nodes) {
			t.Errorf("start completion value %s, want [\"isolated\", grudge over every node]", done.Value)
		}
	}
}

// TestSimSameSeedSameSchedule: a seed fixes the nemesis ops (shapes,
// grudges, node specs, the nodes hit, times) and the workload's choices.
// The one time it does not fix is when a start completes: that waits for
// the restarted nodes to answer init, whose messages queue behind other
// traffic in an order the goroutines' scheduling decides; and so the
// next op, when it was due before that completion (ops run one at a
// time), runs at a time the seed does not fix either.
func TestSimSameSeedSameSchedule(t *testing.T) {
	seed := testSeed(t)
	var runs [2][]string
	for i := range runs {
		synctest.Test(t, func(t *testing.T) {
			o, _, _ := simOptions(t, gossipScript, 5, 5, seed)
			o.Faults, o.NemesisInterval = nemesis.Faults{Partition: true, Kill: true, Pause: true}, time.Second
			out := runSim(context.Background(), o)
			afterStart := 0 // records left of the op after a start's completion (its invoke and completion)
			for _, op := range readHistory(t, out.Dir) {
				if op.Process.Nemesis {
					at := fmt.Sprint(op.Time)
					started := op.F == "start" && strings.HasPrefix(string(op.Value), "[")
					if started {
						at = "(when the nodes answered)"
					} else if afterStart > 0 {
						at = "(due then, or when the start completed)"
					}
					afterStart--
					if started {
						afterStart = 2
					}
					runs[i] = append(runs[i], fmt.Sprintf("%s %s %s", at, op.F, op.Value))
				}
			}
		})
	}
	if !slices.Equal(runs[0], runs[1]) || len(runs[0]) == 0 {
		t.Errorf("same seed, different nemesis ops:\n%v\n%v", runs[0], runs[1])
	}
}

func TestSimInitTimeout(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		silent := func(string, inMsg) ([]string, bool) { return nil, false }
		o, _, _ := simOptions(t, silent, 2, 2, seed)
		start := time.Now()
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitFailed || !strings.Contains(fmt.Sprint(out.Err), "did not respond") {
			t.Fatalf("exit %d, err %v", out.Exit, out.Err)
		}
		if d := time.Since(start); d != InitTimeout {
			t.Errorf("init gave up after %v, want %v", d, InitTimeout)
		}
	})
}

// TestSimSlowStartNamesInitTimeout: a node that takes 5 s to answer init
// (a slow interpreter, a loaded machine) fails a run whose init timeout
// is 3 s, and the error names the slow start and --init-timeout with a
// longer value; the same node passes with the default 10 s.
func TestSimSlowStartNamesInitTimeout(t *testing.T) {
	seed := testSeed(t)
	slowStart := func(self string, m inMsg) ([]string, bool) {
		if m.body.Type == "init" {
			time.Sleep(5 * time.Second) // virtual time: the bubble's clock
		}
		return echoScript(self, m)
	}
	for _, c := range []struct {
		timeout time.Duration
		exit    int
	}{{3 * time.Second, harness.ExitFailed}, {InitTimeout, harness.ExitValid}} {
		synctest.Test(t, func(t *testing.T) {
			o, _, _ := simOptions(t, slowStart, 2, 2, seed)
			o.TimeLimit = time.Second
			o.InitTimeout = c.timeout
			out := runSim(context.Background(), o)
			if out.Exit != c.exit {
				t.Fatalf("init timeout %v: exit %d, want %d (%v)", c.timeout, out.Exit, c.exit, out.Err)
			}
			if c.exit == harness.ExitValid {
				return
			}
			msg := fmt.Sprint(out.Err)
			for _, want := range []string{"did not respond", "within 3s (--init-timeout)", "starts slowly (a loaded machine, a slow interpreter)",
				"rerun with --init-timeout 9", `its last stderr line: "fake n`, "nothing on stdout"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the init error does not say %q:\n%s", want, msg)
				}
			}
		})
	}
}

// TestSimWrongInReplyTo: a node whose replies carry the wrong in_reply_to
// looks silent to its clients, as in Maelstrom; the harness says so. At
// init the failure quotes the stray reply; later, the run warns once and
// results.json counts the strays.
func TestSimWrongInReplyTo(t *testing.T) {
	seed := testSeed(t)
	wrong := func(self string, m inMsg, fields string) string {
		return fmt.Sprintf(`{"src":%q,"dest":%q,"body":{%s,"in_reply_to":%d}}`, self, m.Src, fields, m.body.MsgID+1000)
	}
	synctest.Test(t, func(t *testing.T) {
		atInit := func(self string, m inMsg) ([]string, bool) {
			return []string{wrong(self, m, `"type":"init_ok"`)}, false
		}
		o, _, _ := simOptions(t, atInit, 1, 1, seed)
		out := runSim(context.Background(), o)
		if err := fmt.Sprint(out.Err); out.Exit != harness.ExitFailed || !strings.Contains(err, "answer no request") || !strings.Contains(err, `"in_reply_to":1001`) {
			t.Fatalf("exit %d, err %v; want an init failure quoting the stray reply", out.Exit, out.Err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		later := withEcho(func(self string, m inMsg) []string {
			return []string{wrong(self, m, `"type":"echo_ok","echo":`+string(m.body.Echo))}
		})
		o, _, console := simOptions(t, later, 1, 1, seed)
		o.TimeLimit = 7 * time.Second
		out := runSim(context.Background(), o)
		if out.Exit == harness.ExitValid {
			t.Fatalf("a node whose every reply is stray was judged valid")
		}
		if n := strings.Count(console.String(), "answers no request in flight"); n != 1 {
			t.Errorf("%d stray warnings, want 1:\n%s", n, console.String())
		}
		raw, err := os.ReadFile(filepath.Join(out.Dir, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Net struct {
				StrayReplies int64 `json:"stray_replies"`
			} `json:"net"`
		}
		if err := json.Unmarshal(raw, &res); err != nil || res.Net.StrayReplies < 1 {
			t.Errorf("results.json net.stray_replies = %d (%v), want >= 1", res.Net.StrayReplies, err)
		}
	})
}

// TestSimLateReplyToClosedClient: a reply that arrives after its client
// timed out and was replaced is a reply to a closed client: in strict
// mode the run fails, naming the node.
func TestSimLateReplyToClosedClient(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		slow := withEcho(func(self string, m inMsg) []string {
			time.Sleep(harness.ClientTimeout + time.Second) // a node that answers too late
			return []string{reply(self, m, `"type":"echo_ok","echo":`+string(m.body.Echo))}
		})
		o, _, _ := simOptions(t, slow, 1, 1, seed)
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitFailed || !strings.Contains(fmt.Sprint(out.Err), "client is closed") ||
			!strings.Contains(fmt.Sprint(out.Err), "node n1") {
			t.Fatalf("exit %d, err %v; want a reply-to-closed-client failure naming n1", out.Exit, out.Err)
		}
	})
}

// TestSimMuteMode: without strict mode a bad line mutes the node, as
// Maelstrom does: the run goes on, its requests time out.
func TestSimMuteMode(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		bad := withEcho(func(self string, m inMsg) []string {
			if self == "n1" {
				return []string{"panic: something went wrong"}
			}
			return []string{reply(self, m, `"type":"echo_ok","echo":`+string(m.body.Echo))}
		})
		o, _, console := simOptions(t, bad, 2, 2, seed)
		o.Strict = false
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitInvalid {
			t.Fatalf("exit %d (%v), want invalid (n1's echoes time out)", out.Exit, out.Err)
		}
		if !strings.Contains(console.String(), "WARN node n1 printed") || !strings.Contains(console.String(), "ignores everything n1 prints") {
			t.Errorf("console lacks the muting warning:\n%s", console)
		}
		oks := out.Results.Stats.OKCount
		if oks == 0 {
			t.Error("n2 kept working, but no op completed ok")
		}
	})
}

// TestSimWrongInReplyToTimesOut: a reply whose in_reply_to is a float is
// not a reply (Maelstrom compares integers): the op times out.
func TestSimWrongInReplyToTimesOut(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		float := withEcho(func(self string, m inMsg) []string {
			return []string{fmt.Sprintf(`{"src":%q,"dest":%q,"body":{"type":"echo_ok","echo":%s,"in_reply_to":%d.0}}`,
				self, m.Src, m.body.Echo, m.body.MsgID)}
		})
		o, _, _ := simOptions(t, float, 1, 1, seed)
		o.TimeLimit = time.Second
		out := runSim(context.Background(), o)
		if out.Results.Stats.OKCount != 0 || out.Results.Stats.InfoCount == 0 {
			t.Errorf("stats %+v: want every op timed out", out.Results.Stats)
		}
	})
}

func TestSimRateZeroInvokesNothing(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _, _ := simOptions(t, echoScript, 2, 2, seed)
		o.Workload = echo.NewEcho(echo.EchoOptions{Rate: 0}, 1)
		start := time.Now()
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitValid || len(readHistory(t, out.Dir)) != 0 {
			t.Errorf("exit %d, %d ops; want valid and empty", out.Exit, len(readHistory(t, out.Dir)))
		}
		if d := time.Since(start); d < o.TimeLimit {
			t.Errorf("run took %v, want the time limit %v", d, o.TimeLimit)
		}
	})
}

// panickyChecker is a workload whose checker crashes.
type panickyChecker struct{ workloads.Workload }

func (panickyChecker) Check([]history.Op) workloads.Result { panic("boom") }

func TestSimCheckerCrashFailsTheRun(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _, _ := simOptions(t, echoScript, 1, 1, seed)
		o.Workload = panickyChecker{o.Workload}
		o.TimeLimit = time.Second
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitFailed || !strings.Contains(fmt.Sprint(out.Err), "checker crashed: boom") {
			t.Errorf("exit %d, err %v", out.Exit, out.Err)
		}
	})
}

// panickyAnalyzer is the lease workload whose streamed analysis crashes
// at its tenth op, after it made its spill files.
type panickyAnalyzer struct{ workloads.Workload }

func (p panickyAnalyzer) NewAnalysis(env workloads.AnalysisEnv) (workloads.Analysis, error) {
	a, err := p.Workload.(workloads.Analyzer).NewAnalysis(env)
	return &panickyAnalysis{Analysis: a}, err
}

type panickyAnalysis struct {
	workloads.Analysis
	n int
}

func (p *panickyAnalysis) Pair(pair history.Pair) error {
	if p.n++; p.n == 10 {
		panic("boom")
	}
	return p.Analysis.Pair(pair)
}

// TestSimStreamedCheckerCrashFailsTheRun: a crash while the history is
// read back fails the run as a checker crash does, results.json is still
// written, and no spill file is left behind.
func TestSimStreamedCheckerCrashFailsTheRun(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _ := leaseSimOptions(t, nemesis.Faults{}, time.Second, seed)
		o.Workload = panickyAnalyzer{o.Workload}
		o.TimeLimit = 2 * time.Second
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitFailed || !strings.Contains(fmt.Sprint(out.Err), "checker crashed: boom") {
			t.Errorf("exit %d, err %v", out.Exit, out.Err)
		}
		if _, err := os.Stat(filepath.Join(out.Dir, "results.json")); err != nil {
			t.Error(err)
		}
		if entries, _ := filepath.Glob(filepath.Join(out.Dir, ".*")); len(entries) != 0 {
			t.Errorf("scratch left behind: %v", entries)
		}
	})
}

// countedEcho is the echo workload limited to n ops.
type countedEcho struct {
	workloads.Workload
	left int
}

func (c *countedEcho) Next(now time.Duration, worker int) (workloads.Invocation, bool) {
	if c.left == 0 {
		return workloads.Invocation{}, false
	}
	inv, ok := c.Workload.Next(now, worker)
	if ok {
		c.left--
	}
	return inv, ok
}

func (c *countedEcho) Wake() time.Duration {
	if c.left == 0 {
		return workloads.Never
	}
	return c.Workload.Wake()
}

// TestSimNetStatsLikeMaelstrom: 12 echo ops on one node are 26 messages
// (12 round trips and init's), as in Maelstrom's echo tutorial.
func TestSimNetStatsLikeMaelstrom(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _, _ := simOptions(t, echoScript, 1, 1, seed)
		o.Workload = &countedEcho{Workload: o.Workload, left: 12}
		out := runSim(context.Background(), o)
		n := out.Results.Net
		if out.Exit != harness.ExitValid || n.All.MsgCount != 26 || n.Clients.MsgCount != 26 || n.Servers.MsgCount != 0 {
			t.Fatalf("exit %d, net %+v", out.Exit, n)
		}
		if *n.All.MsgsPerOp != 26.0/12 || *n.Servers.MsgsPerOp != 0 || n.Clients.MsgsPerOp != nil {
			t.Errorf("msgs per op: all %v servers %v clients %v", *n.All.MsgsPerOp, *n.Servers.MsgsPerOp, n.Clients.MsgsPerOp)
		}
	})
}

func TestSimLogStderr(t *testing.T) {
	seed := testSeed(t)
	synctest.Test(t, func(t *testing.T) {
		o, _, console := simOptions(t, echoScript, 2, 2, seed)
		o.TimeLimit = time.Second
		o.LogStderr = true
		out := runSim(context.Background(), o)
		if out.Exit != harness.ExitValid || !strings.Contains(console.String(), "n2 stderr: fake n2 started\n") {
			t.Errorf("exit %d; console lacks the mirrored stderr line:\n%s", out.Exit, console)
		}
		log, _ := os.ReadFile(filepath.Join(out.Dir, "node-logs", "n2.log"))
		if string(log) != "fake n2 started\n" {
			t.Errorf("n2.log = %q", log)
		}
	})
}
