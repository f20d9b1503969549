package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeaseBenchWorkloadIsRegistered: -w lease-bench runs the benchmark
// end to end against the fake single-authority lease node, which is valid,
// and results.json carries the measured ops.
func TestLeaseBenchWorkloadIsRegistered(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	code, out := runCLI(t, "test", "-w", "lease-bench", "--bench-op", "release", "--ops", "20", "--chunks", "10",
		"--nodes", "n1", "--concurrency", "2", "--lease-ms", "60000", "--time-limit", "2",
		"--bin", fakeNode, "--store", store, "--seed", testSeed(t), "--", "lease")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	var stats struct {
		Op      string `json:"op"`
		Summary struct {
			Rows []struct {
				Op string `json:"op"`
				OK int    `json:"ok"`
			} `json:"rows"`
		} `json:"summary"`
	}
	r := results(t, store)
	if err := json.Unmarshal(r["workload_stats"], &stats); err != nil || stats.Op != "release" ||
		len(stats.Summary.Rows) != 1 || stats.Summary.Rows[0].OK != 20 {
		t.Errorf("workload_stats %s, want 20 ok releases", r["workload_stats"])
	}
}

func TestLeaseBenchBadOptions(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bench-op", "write"}, "bench op must be grant, renew, check, release or mixed"},
		{[]string{"--ops", "0"}, "ops must be >= 1"},
		{[]string{"--chunks", "1", "--concurrency", "2"}, "every worker needs its own chunk"},
	} {
		args := append([]string{"test", "-w", "lease-bench", "--bin", fakeNode, "--store", store}, c.args...)
		if code, out := runCLI(t, args...); code != 254 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want 254 and %q", c.args, code, out, c.want)
		}
	}
}
