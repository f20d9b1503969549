package workloadtest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"chunklease/history"
	"chunklease/workloads"
)

// WithNemesis adds nemesis steps (an invoke and a completion each, as the
// harness writes them) at random times: partitions, kills and pauses with
// their heals, keeping real-time order and dense indices.
func WithNemesis(ops []history.Op, rng *rand.Rand, steps int) []history.Op {
	if len(ops) == 0 {
		return ops
	}
	end := ops[len(ops)-1].Time
	kinds := []struct{ begin, heal, beginInv, beginDone, healInv, healDone string }{
		{workloads.StartPartition, workloads.StopPartition, `"majority"`, `["isolated",{"n1":["n3","n4","n5"],"n2":["n3","n4","n5"],"n3":["n1","n2"],"n4":["n1","n2"],"n5":["n1","n2"]}]`, `null`, `"network-healed"`},
		{workloads.NemesisKill, workloads.NemesisStart, `null`, `["n2"]`, `"all"`, `["n2"]`},
		{workloads.NemesisPause, workloads.NemesisResume, `"one"`, `["n4"]`, `"all"`, `["n4"]`},
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
	return InTimeOrder(out)
}

// WriteHistoryFile writes ops as dir/history.jsonl.
func WriteHistoryFile(t testing.TB, dir string, ops []history.Op) string {
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

// Analyze runs w's analysis over ops written to a file in dir, with many
// small shards and two goroutines.
func Analyze(t testing.TB, w workloads.Workload, ops []history.Op, dir string, messages int) workloads.Analyzed {
	t.Helper()
	path := WriteHistoryFile(t, dir, ops)
	var a workloads.Analysis
	facts, err := history.ReadBack(path, func(nemesis []history.Op) ([]history.PairSink, error) {
		var err error
		a, err = w.(workloads.Analyzer).NewAnalysis(workloads.AnalysisEnv{Dir: dir, Nemesis: nemesis, Messages: messages,
			Parallel: 2, HistoryBytes: 40 * 2 << 20}) // 41 spill shards of 2 MiB
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

// JSONOf renders v for comparison.
func JSONOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// HistoryBytes is ops as history.jsonl.
func HistoryBytes(t testing.TB, ops []history.Op) string {
	var b bytes.Buffer
	if err := history.WriteHistory(&b, ops); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
