package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestMasterWorkloadIsRegistered: -w master runs the master workload end
// to end. The fake node answers master_* with error 10, so every op fails
// and Jepsen's stats checker makes the run invalid (exit 1), while the
// master checker, with no belief to judge, finds no overlap; the figures
// reach results.json.
func TestMasterWorkloadIsRegistered(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	code, out := runCLI(t, "test", "-w", "master", "--bin", fakeNode, "--node-count", "2", "--time-limit", "1",
		"--rate", "50", "--store", store, "--seed", testSeed(t), "--", "echo")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (every op failed)\n%s", code, out)
	}
	r := results(t, store)
	var check struct {
		Valid  bool                       `json:"valid"`
		Counts map[string]json.RawMessage `json:"counts"`
	}
	if string(r["workload"]) != `"master"` || json.Unmarshal(r["master"], &check) != nil || !check.Valid || len(check.Counts) == 0 {
		t.Errorf("results.json workload %s, master checker %s", r["workload"], r["master"])
	}
	var stats map[string]json.RawMessage
	if json.Unmarshal(r["workload_stats"], &stats) != nil || stats["mastership"] == nil || stats["failover"] == nil {
		t.Errorf("workload_stats %s lacks mastership or failover", r["workload_stats"])
	}
}
