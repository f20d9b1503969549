package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// coresRun is one BenchmarkMemberCores run as scripts/bench_net.sh's
// cores part stores it: its round, its GOMAXPROCS, ops/s and the CPUs
// it got.
type coresRun struct {
	round, cpu int
	opsPerSec  float64
	cpus       float64
}

// line is r as a stored line of op.
func (r coresRun) line(op string) string {
	name := "BenchmarkMemberCores/op=" + op
	if r.cpu > 1 {
		name += fmt.Sprintf("-%d", r.cpu)
	}
	return fmt.Sprintf("%d %s \t 1000000\t 1000 ns/op\t 1.300 cpu-us/op\t %.4f cpus\t 0.002 handed-over/op\t %d.000 loops\t %.0f ops/s\t 16 B/op\t 1 allocs/op",
		r.round, name, r.cpus, r.cpu, r.opsPerSec)
}

// coresRounds is rounds rounds of the cores part for one op: in each,
// pairs (1, 2) and (2, 1) of runs, the one-core runs at one(round, pair)
// ops/s and the two-core runs at ratio times that, every run with its
// cores unless shared(round, pair) says which core count was shared
// (0: none).
func coresRounds(rounds int, one func(r, p int) float64, ratio float64, shared func(r, p int) int) []coresRun {
	var runs []coresRun
	for r := 1; r <= rounds; r++ {
		for p := range 2 {
			pair := []coresRun{{r, 1, one(r, p), 1.008}, {r, 2, ratio * one(r, p), 1.99}}
			if p == 1 {
				pair[0], pair[1] = pair[1], pair[0]
			}
			for i := range pair {
				if pair[i].cpu == shared(r, p) {
					pair[i].cpus *= 0.6
				}
			}
			runs = append(runs, pair...)
		}
	}
	return runs
}

// coresGoal runs scripts/cores_goal.awk on runs of lease_renew, with
// two one-core processes at once of 750 000 ops/s each in every round,
// and returns its goal line.
func coresGoal(t *testing.T, runs []coresRun) string {
	t.Helper()
	dir := t.TempDir()
	var out, machine strings.Builder
	for _, r := range runs {
		fmt.Fprintln(&out, r.line("lease_renew"))
	}
	for r := 1; r <= 7; r++ {
		for range 2 {
			fmt.Fprintln(&machine, coresRun{r, 1, 750000, 1.0}.line("lease_renew"))
		}
	}
	runsFile, pairsFile, goals := filepath.Join(dir, "cores.txt"), filepath.Join(dir, "pairs.txt"), filepath.Join(dir, "goals.txt")
	if err := os.WriteFile(runsFile, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pairsFile, []byte(machine.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("awk", "-v", "goals="+goals, "-v", "pairs="+pairsFile, "-f", "scripts/cores_goal.awk", runsFile)
	printed, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cores_goal.awk: %v\n%s", err, printed)
	}
	written, err := os.ReadFile(goals)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(written))
	if !strings.Contains(string(printed), line) || strings.Count(line, "\n") != 0 {
		t.Fatalf("the goal file holds %q, not the one goal line printed:\n%s", line, printed)
	}
	return line
}

// TestCoresGoal: the cores part's goal is the median of adjacent pairs'
// ratios, and leaves out a pair whose run did not get its cores.
func TestCoresGoal(t *testing.T) {
	steady := func(r, p int) float64 { return 780000 }
	none := func(r, p int) int { return 0 }
	// The machine slows down by 1.7x for whole pairs at a time (as this
	// virtual machine's CPUs do), 8 pairs of 14: each pair keeps the
	// member's ratio.
	slowPairs := func(r, p int) float64 {
		if (r+p)%2 == 0 || r == 7 {
			return 780000 / 1.7
		}
		return 780000
	}
	// Every one-core run of rounds 1-4 shared with another process: such
	// a run measures the sharing, and its pair's ratio comes out high
	// (counted, these 8 pairs of 14 would make the median 2.5x).
	oneShared := func(r, p int) int { return 1 }
	cases := []struct {
		name string
		runs []coresRun
		want string
	}{
		{"scales 1.85x", coresRounds(7, steady, 1.85, none), "PASS  member cores: lease_renew 1 -> 2 cores 1.85x"},
		{"a slow machine in whole pairs", coresRounds(7, slowPairs, 1.80, none), "PASS  member cores: lease_renew 1 -> 2 cores 1.80x (goal >= 1.7x; median of 14 adjacent pairs, 0 left out"},
		// Negative controls: each must miss.
		{"scales 1.5x", coresRounds(7, steady, 1.5, none), "MISS  member cores: lease_renew 1 -> 2 cores 1.50x"},
		{"shared runs left out", append(coresRounds(4, steady, 2.5, oneShared), coresRounds(7, steady, 1.6, none)[16:]...), "MISS  member cores: lease_renew 1 -> 2 cores 1.60x (goal >= 1.7x; median of 6 adjacent pairs, 8 left out"},
		{"the two-core runs shared", coresRounds(7, steady, 1.85, func(r, p int) int { return 2 }), "MISS  member cores: lease_renew 1 -> 2 cores: only 0 of 14 pairs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := coresGoal(t, c.runs); !strings.Contains(got, c.want) {
				t.Errorf("goal line %q, want it to contain %q", got, c.want)
			}
		})
	}
}
