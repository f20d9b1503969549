package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// TestMasterLeaseMsReachesTheNodes: the master requests carry no lease
// length, so --lease-ms (default 1000) is the workload's lease bound and
// every node starts with it as LEASE_MS and LEASE_MAX_MS, with no
// nemesis at all (the fake node logs the LEASE_* variables it was given).
func TestMasterLeaseMsReachesTheNodes(t *testing.T) {
	t.Setenv("LEASE_MS", "") // the harness's own environment names no lease
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, " LEASE_MS=1000 LEASE_MAX_MS=1000\n"},
		{[]string{"--lease-ms", "450"}, " LEASE_MS=450 LEASE_MAX_MS=450\n"},
	} {
		store := filepath.Join(t.TempDir(), "store")
		args := append([]string{"test", "-w", "master", "--bin", fakeNode, "--node-count", "2", "--time-limit", "1",
			"--rate", "10", "--store", store, "--seed", testSeed(t)}, c.args...)
		code, out := runCLI(t, append(args, "--", "echo")...)
		if code == 254 || code == 255 {
			t.Fatalf("%v: exit %d\n%s", c.args, code, out)
		}
		for _, id := range []string{"n0", "n1"} {
			log, err := os.ReadFile(filepath.Join(store, "latest", "node-logs", id+".log"))
			if err != nil || strings.Count(string(log), "started echo ") != 1 || !strings.Contains(string(log), c.want) {
				t.Errorf("%v: %s's log (%v) lacks one start with%s:\n%s", c.args, id, err, strings.TrimSuffix(c.want, "\n"), log)
			}
		}
	}
}
