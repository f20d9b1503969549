package lease

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

// leaseSimHistory is a simulated lease run over 120 chunks against svc,
// with nemesis steps.
func leaseSimHistory(t *testing.T, svc *workloadtest.IdealLeases, seed int64) []history.Op {
	opts := LeaseOptions{Servers: 4, Chunks: 120, LeaseMs: 400, Rate: 200, Workers: 10}
	ops := workloadtest.Simulate(t, NewLease(opts, seed), svc, simCfg(opts.Workers, 20*time.Second))
	return workloadtest.WithNemesis(ops, rand.New(rand.NewPCG(uint64(seed), 7)), 12)
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
		brk  func(*workloadtest.IdealLeases)
	}{
		{"ideal", func(*workloadtest.IdealLeases) {}},
		{"grant blindly", func(s *workloadtest.IdealLeases) { s.GrantBlindly = true }},
		{"shrink on renewal", func(s *workloadtest.IdealLeases) { s.Shrink = true }},
		{"tokens counted per server", func(s *workloadtest.IdealLeases) { s.TokenPerServer = true }},
		{"no tokens", func(s *workloadtest.IdealLeases) { s.NoTokens = true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seed := int64(testseed.Get(t))
			svc := workloadtest.NewIdealLeases(seed)
			svc.LossRate, svc.FailRate = 0.03, 0.05
			c.brk(svc)
			ops := leaseSimHistory(t, svc, seed)
			compareLeaseAnalysis(t, ops)
		})
	}
}

// TestLeaseAnalysisOfMalformedHistory: ops the checker cannot judge are
// problems in CheckLease's order, in results.json and the detail file.
func TestLeaseAnalysisOfMalformedHistory(t *testing.T) {
	seed := int64(testseed.Get(t))
	svc := workloadtest.NewIdealLeases(seed)
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
	got := workloadtest.Analyze(t, NewLease(LeaseOptions{}, 1), ops, dir, 1234)
	want := SummarizeLease(res)
	want.Details = LeaseDetailsFile
	if g, w := workloadtest.JSONOf(t, got.Result.Details), workloadtest.JSONOf(t, want); g != w || got.Result.Valid != res.Valid {
		t.Errorf("summary (valid %v):\n%s\nwant (valid %v):\n%s", got.Result.Valid, g, res.Valid, w)
	}
	if g, w := workloadtest.JSONOf(t, got.Stats), workloadtest.JSONOf(t, LeaseStats(ops, res.Holdings, 1234)); g != w {
		t.Errorf("statistics:\n%s\nwant:\n%s", g, w)
	}
	compareDetails(t, filepath.Join(dir, LeaseDetailsFile), res)
	in := TimelineInputOf(ops, res, DefaultTimelineLimits)
	in.DetailsFile = LeaseDetailsFile
	if len(got.Pictures) != 1 {
		t.Fatalf("%d pictures, want the timeline's input", len(got.Pictures))
	}
	drawn, _ := got.Pictures[0].(TimelineInput)
	for _, x := range []*TimelineInput{&drawn, &in} { // the page shows nil and empty alike
		x.Problems = workloads.NonNil(x.Problems)
		for i := range x.Lanes {
			l := &x.Lanes[i]
			l.Holdings, l.Tokens, l.Violations = workloads.NonNil(l.Holdings), workloads.NonNil(l.Tokens), workloads.NonNil(l.Violations)
		}
	}
	if g, w := workloadtest.JSONOf(t, drawn), workloadtest.JSONOf(t, in); g != w {
		t.Errorf("the timeline input differs from the one gathered from the history in memory:\n%.600s\nwant:\n%.600s", g, w)
	}
	if v, ok := FirstViolation(res); ok != (got.Focus != nil) || (ok && !reflect.DeepEqual(*got.Focus, workloads.Focus{Kind: v.Kind, Key: v.Chunk,
		StartNs: v.StartNs, FromNs: got.Focus.FromNs, ToNs: got.Focus.ToNs, Ops: FocusOf(ops, res).Ops})) {
		t.Errorf("focus %+v, want the first violation %+v", got.Focus, v)
	}
	if v, ok := FirstViolation(res); ok && len(got.Focus.Ops) != len(v.Ops)/2 {
		t.Errorf("focus %+v, want each of the %d ops the violation names", got.Focus, len(v.Ops)/2)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the run directory holds %d entries, want the history and the details (scratch removed)", len(entries))
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
	if want := slices.SortedFunc(mapsKeys(res.Chunks), workloads.CompareNatural); !slices.Equal(chunks, want) {
		t.Errorf("chunks %v, want %v", chunks, want)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{{"holdings", holdings, res.Holdings}, {"violations", violations, res.Violations}, {"problems", problems, res.Problems}} {
		if g, w := workloadtest.JSONOf(t, c.got), workloadtest.JSONOf(t, c.want); g != w && !(g == "null" && w == "[]") {
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
