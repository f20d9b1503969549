package workloads

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"chunklease/history"
)

// withNemesis adds nemesis steps (an invoke and a completion each, as the
// harness writes them) at random times: partitions, kills and pauses with
// their heals, keeping real-time order and dense indices.
func withNemesis(ops []history.Op, rng *rand.Rand, steps int) []history.Op {
	if len(ops) == 0 {
		return ops
	}
	end := ops[len(ops)-1].Time
	kinds := []struct{ begin, heal, beginInv, beginDone, healInv, healDone string }{
		{StartPartition, StopPartition, `"majority"`, `["isolated",{"n1":["n3","n4","n5"],"n2":["n3","n4","n5"],"n3":["n1","n2"],"n4":["n1","n2"],"n5":["n1","n2"]}]`, `null`, `"network-healed"`},
		{NemesisKill, NemesisStart, `null`, `["n2"]`, `"all"`, `["n2"]`},
		{NemesisPause, NemesisResume, `"one"`, `["n4"]`, `"all"`, `["n4"]`},
	}
	out := slices.Clone(ops)
	t := int64(0)
	for range steps {
		k := kinds[rng.IntN(len(kinds))]
		t += rng.Int64N(max(end/int64(steps), 1))
		heal := t + rng.Int64N(max(end/int64(steps), 1))
		for _, s := range []struct {
			f, inv, done string
			at           int64
		}{{k.begin, k.beginInv, k.beginDone, t}, {k.heal, k.healInv, k.healDone, heal}} {
			out = append(out,
				history.Op{Time: s.at, Process: history.NemesisProcess, Type: history.Info, F: s.f, Value: json.RawMessage(s.inv)},
				history.Op{Time: s.at + 1000, Process: history.NemesisProcess, Type: history.Info, F: s.f, Value: json.RawMessage(s.done)})
		}
		t = heal
	}
	return inTimeOrder(out)
}

// writeHistoryFile writes ops as dir/history.jsonl.
func writeHistoryFile(t *testing.T, dir string, ops []history.Op) string {
	t.Helper()
	path := filepath.Join(dir, "history.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := history.WriteHistory(f, ops); err != nil {
		t.Fatal(err)
	}
	return path
}

// analyze runs w's analysis over ops written to a file in dir, with many
// small shards and two goroutines.
func analyze(t *testing.T, w Workload, ops []history.Op, dir string, messages int) Analyzed {
	t.Helper()
	path := writeHistoryFile(t, dir, ops)
	var a Analysis
	facts, err := history.ReadBack(path, func(nemesis []history.Op) ([]history.PairSink, error) {
		var err error
		a, err = w.(Analyzer).NewAnalysis(AnalysisEnv{Dir: dir, Nemesis: nemesis, Messages: messages,
			Parallel: 2, HistoryBytes: 40 * 8 << 20}) // 41 spill shards of 8 MiB
		return []history.PairSink{a}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := a.Finish(facts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonOf renders v for comparison.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// leaseSimHistory is a simulated lease run over 120 chunks against svc,
// with nemesis steps.
func leaseSimHistory(t *testing.T, svc *idealLeases, seed int64) []history.Op {
	opts := LeaseOptions{Servers: 4, Chunks: 120, LeaseMs: 400, Rate: 200, Workers: 10}
	ops := simulate(t, NewLease(opts, seed), svc, simCfg(opts.Workers, 20*time.Second))
	return withNemesis(ops, rand.New(rand.NewPCG(uint64(seed), 7)), 12)
}

// TestLeaseAnalysisMatchesCheckLease: the analysis of a history read back
// from disk, split over 41 shards checked on two goroutines, reaches
// CheckLease's verdict and LeaseStats's figures, lists in its detail file
// exactly CheckLease's chunks, holdings, violations and problems, draws
// the same timeline, and zooms in on FirstViolation; for a correct
// service and for each broken one.
func TestLeaseAnalysisMatchesCheckLease(t *testing.T) {
	cases := []struct {
		name string
		brk  func(*idealLeases)
	}{
		{"ideal", func(*idealLeases) {}},
		{"grant blindly", func(s *idealLeases) { s.grantBlindly = true }},
		{"shrink on renewal", func(s *idealLeases) { s.shrink = true }},
		{"tokens counted per server", func(s *idealLeases) { s.tokenPerServer = true }},
		{"no tokens", func(s *idealLeases) { s.noTokens = true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seed := testSeed(t)
			svc := newIdeal(seed)
			svc.lossRate, svc.failRate = 0.03, 0.05
			c.brk(svc)
			ops := leaseSimHistory(t, svc, seed)
			compareLeaseAnalysis(t, ops)
		})
	}
}

// TestLeaseAnalysisOfMalformedHistory: ops the checker cannot judge are
// problems in CheckLease's order, in results.json and the detail file.
func TestLeaseAnalysisOfMalformedHistory(t *testing.T) {
	seed := testSeed(t)
	svc := newIdeal(seed)
	ops := leaseSimHistory(t, svc, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 8))
	for i := range ops {
		switch op := &ops[i]; {
		case op.Process.Nemesis:
		case rng.IntN(300) == 0:
			op.F = "frob" // an unknown f (and a completion f that does not match)
		case rng.IntN(300) == 0 && op.Type == history.OK:
			op.Value = json.RawMessage(`{"chunk":"ch_1"}`) // an ok value without its fields
		case rng.IntN(300) == 0 && op.Type == history.Invoke:
			op.Value = json.RawMessage(`{}`) // no chunk
		case rng.IntN(500) == 0:
			op.Process.ID += 1000 // a completion without an invoke, an invoke never completed
		}
	}
	if res := CheckLease(ops); len(res.Problems) < 10 {
		t.Fatalf("the history has only %d problems", len(res.Problems))
	}
	compareLeaseAnalysis(t, ops)
}

func compareLeaseAnalysis(t *testing.T, ops []history.Op) {
	t.Helper()
	res := CheckLease(ops)
	dir := t.TempDir()
	got := analyze(t, NewLease(LeaseOptions{}, 1), ops, dir, 1234)
	want := SummarizeLease(res)
	want.Details = LeaseDetailsFile
	if g, w := jsonOf(t, got.Result.Details), jsonOf(t, want); g != w || got.Result.Valid != res.Valid {
		t.Errorf("summary (valid %v):\n%s\nwant (valid %v):\n%s", got.Result.Valid, g, res.Valid, w)
	}
	if g, w := jsonOf(t, got.Stats), jsonOf(t, LeaseStats(ops, res.Holdings, 1234)); g != w {
		t.Errorf("statistics:\n%s\nwant:\n%s", g, w)
	}
	compareDetails(t, filepath.Join(dir, LeaseDetailsFile), res)
	in := TimelineInputOf(ops, res, DefaultTimelineLimits)
	in.DetailsFile = LeaseDetailsFile
	var page bytes.Buffer
	if err := WriteTimelinePage(&page, in, DefaultTimelineLimits); err != nil {
		t.Fatal(err)
	}
	if drawn, err := os.ReadFile(filepath.Join(dir, LeaseTimelineFile)); err != nil || !bytes.Equal(drawn, page.Bytes()) {
		t.Errorf("the timeline differs from the one drawn from the history in memory (%v)", err)
	}
	if v, ok := FirstViolation(res); ok != (got.Focus != nil) || (ok && !reflect.DeepEqual(got.Focus.Violation, v)) {
		t.Errorf("focus %+v, want the first violation %+v", got.Focus, v)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the run directory holds %d entries, want the history, the details and the timeline (scratch removed)", len(entries))
	}
}

// compareDetails reads the detail file back and holds it to CheckLease.
func compareDetails(t *testing.T, path string, res LeaseResult) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var chunks []string
	var holdings []Holding
	var violations []Violation
	var problems []history.Problem
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var line struct {
			chunkDetail
			Problem *history.Problem `json:"problem"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		if line.Problem != nil {
			problems = append(problems, *line.Problem)
			continue
		}
		if line.Counts != res.Chunks[line.Chunk] {
			t.Errorf("chunk %s counts %+v, want %+v", line.Chunk, line.Counts, res.Chunks[line.Chunk])
		}
		chunks = append(chunks, line.Chunk)
		holdings = append(holdings, line.Holdings...)
		violations = append(violations, line.Violations...)
	}
	if want := slices.SortedFunc(mapsKeys(res.Chunks), compareNatural); !slices.Equal(chunks, want) {
		t.Errorf("chunks %v, want %v", chunks, want)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{{"holdings", holdings, res.Holdings}, {"violations", violations, res.Violations}, {"problems", problems, res.Problems}} {
		if g, w := jsonOf(t, c.got), jsonOf(t, c.want); g != w && !(g == "null" && w == "[]") {
			t.Errorf("%s differ:\n%.600s\nwant:\n%.600s", c.name, g, w)
		}
	}
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestMasterAnalysisMatchesCheckMaster: the master analysis of a history
// read back from disk reaches CheckMaster's verdict and MasterStats's
// figures.
func TestMasterAnalysisMatchesCheckMaster(t *testing.T) {
	seed := testSeed(t)
	svc := newIdealMaster(seed, 5)
	svc.lossRate, svc.failRate = 0.02, 0.02
	svc.outages = []Interval{{StartNs: 3e9, EndNs: 5e9}, {StartNs: 9e9, EndNs: 10e9}}
	ops := masterSimRun(t, svc, seed, 15*time.Second)
	got := analyze(t, NewMaster(MasterOptions{}, 1), ops, t.TempDir(), 99)
	res := CheckMaster(ops)
	if g, w := jsonOf(t, got.Result.Details), jsonOf(t, res); g != w {
		t.Errorf("result:\n%.800s\nwant:\n%.800s", g, w)
	}
	if g, w := jsonOf(t, got.Stats), jsonOf(t, MasterStats(ops, res.Tenures, 99)); g != w {
		t.Errorf("statistics:\n%s\nwant:\n%s", g, w)
	}
}

// TestEchoAnalysisMatchesCheckEcho: the same for echo, with broken echoes
// and a completion without an invoke.
func TestEchoAnalysisMatchesCheckEcho(t *testing.T) {
	ok := `{"type":"echo_ok","echo":$,"msg_id":1,"in_reply_to":1}`
	ops := echoHistory(ok, `{"type":"echo_ok","echo":"Please echo 99","in_reply_to":1}`, ok, history.Info, ok, "")
	ops = append(ops, history.Op{Index: len(ops), Time: ops[len(ops)-1].Time + 1, Process: history.Process{ID: 77}, Type: history.OK, F: "echo", Value: json.RawMessage(`{"echo":"x"}`)})
	got := analyze(t, NewEcho(EchoOptions{}, 1), ops, t.TempDir(), 5)
	if g, w := jsonOf(t, got.Result.Details), jsonOf(t, CheckEcho(ops)); g != w {
		t.Errorf("result:\n%s\nwant:\n%s", g, w)
	}
	if g, w := jsonOf(t, got.Stats), jsonOf(t, ComputeStats(ops, 5)); g != w {
		t.Errorf("statistics:\n%s\nwant:\n%s", g, w)
	}
}
