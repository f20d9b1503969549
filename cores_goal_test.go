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
// cores part stores it: its round, its GOMAXPROCS, ops/s, the CPUs it
// got and its CPU per op.
type coresRun struct {
	round, cpu int
	opsPerSec  float64
	cpus       float64
	usPerOp    float64
}

// line is r as a stored line of op.
func (r coresRun) line(op string) string {
	name := "BenchmarkMemberCores/op=" + op
	if r.cpu > 1 {
		name += fmt.Sprintf("-%d", r.cpu)
	}
	return fmt.Sprintf("%d %s \t 1000000\t 1000 ns/op\t %.3f cpu-us/op\t %.4f cpus\t 0.002 handed-over/op\t %d.000 loops\t %.0f ops/s\t 16 B/op\t 1 allocs/op",
		r.round, name, r.usPerOp, r.cpus, r.cpu, r.opsPerSec)
}

// coresRounds is rounds rounds of the cores part for one op: in each,
// pairs (1, 2) and (2, 1) of runs, the one-core runs at one(round, pair)
// ops/s (their CPU per op in proportion: 1.3 us at 780 000 ops/s) and
// the two-core runs at ratio times that (at 1.4 us), every run with its
// cores unless shared(round, pair) says which core count was shared
// (0: none).
func coresRounds(rounds int, one func(r, p int) float64, ratio float64, shared func(r, p int) int) []coresRun {
	return coresRoundsBy(rounds, one, func(int, int) float64 { return ratio }, shared)
}

// coresRoundsBy is coresRounds with a ratio of each pair's own.
func coresRoundsBy(rounds int, one func(r, p int) float64, ratio func(r, p int) float64, shared func(r, p int) int) []coresRun {
	var runs []coresRun
	for r := 1; r <= rounds; r++ {
		for p := range 2 {
			pair := []coresRun{{r, 1, one(r, p), 1.008, 1.3 * 780000 / one(r, p)}, {r, 2, ratio(r, p) * one(r, p), 1.99, 1.4}}
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

// coresGoal runs scripts/cores_goal.awk on runs of lease_renew (7
// rounds expected), with
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
			fmt.Fprintln(&machine, coresRun{r, 1, 750000, 1.0, 1.3}.line("lease_renew"))
		}
	}
	runsFile, pairsFile, goals := filepath.Join(dir, "cores.txt"), filepath.Join(dir, "pairs.txt"), filepath.Join(dir, "goals.txt")
	if err := os.WriteFile(runsFile, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pairsFile, []byte(machine.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The program is read here, not by awk, so that the test's cached
	// result goes with the program's text (go test caches by the files
	// the test itself opens).
	program, err := os.ReadFile("scripts/cores_goal.awk")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("awk", "-v", "rounds=7", "-v", "want=lease_renew", "-v", "goals="+goals, "-v", "pairs="+pairsFile, string(program), runsFile)
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
// ratios, and leaves out a pair whose run did not get its cores or whose
// one-core run ran on a slow machine.
func TestCoresGoal(t *testing.T) {
	steady := func(r, p int) float64 { return 780000 }
	none := func(r, p int) int { return 0 }
	// The one-core run of 8 pairs of 14 ran on a machine 1.7x slower
	// (this virtual machine's spells), at its CPU per op too; the
	// two-core run beside it less so, and their ratio came out 2.5x.
	// Counted, these pairs would make the median 2.5x.
	slowOne := func(r, p int) float64 {
		if (r+p)%2 == 0 || r == 7 {
			return 780000 / 1.7
		}
		return 780000
	}
	slowRuns := coresRounds(7, slowOne, 1.6, none)
	for i := range slowRuns {
		if r := &slowRuns[i]; r.cpu == 2 && r.opsPerSec < 1.6*780000/1.5 {
			r.opsPerSec = 2.5 * 780000 / 1.7
		}
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
		{"the machine 1.2x slower in odd rounds", coresRounds(7, func(r, p int) float64 { return 780000 / (1 + 0.2*float64(r%2)) }, 1.80, none), "PASS  member cores: lease_renew 1 -> 2 cores 1.80x (goal >= 1.7x; median of 14 adjacent pairs; left out: 0 without their cores, 0 slow, 0 missing"},
		// Negative controls: each must miss.
		{"scales 1.5x", coresRounds(7, steady, 1.5, none), "MISS  member cores: lease_renew 1 -> 2 cores 1.50x"},
		{"shared runs left out", append(coresRounds(4, steady, 2.5, oneShared), coresRounds(7, steady, 1.6, none)[16:]...), "MISS  member cores: lease_renew 1 -> 2 cores 1.60x (goal >= 1.7x; median of 6 adjacent pairs; left out: 8 without their cores, 0 slow, 0 missing"},
		{"slow one-core runs left out", slowRuns, "MISS  member cores: lease_renew 1 -> 2 cores 1.60x (goal >= 1.7x; median of 6 adjacent pairs; left out: 0 without their cores, 8 slow, 0 missing"},
		{"the two-core runs shared", coresRounds(7, steady, 1.85, func(r, p int) int { return 2 }), "MISS  member cores: lease_renew 1 -> 2 cores: 0 pairs counted, 5 needed (left out: 14 without their cores, 0 slow, 0 missing)"},
	}
	// The ratios differ from pair to pair (median 1.6x, mean 1.71x,
	// largest 2.0x), and the machine's speed by up to 1.2x (no pair
	// slow), so that the median of the pairs' ratios differs from the
	// mean, the largest, and the ratio of the medians of the runs.
	spread := []float64{1.5, 1.8, 2.0, 1.6, 2.0, 1.9, 1.5, 1.6, 1.5, 1.9, 1.6, 1.5, 1.6, 1.9}
	eachRatio := func(r, p int) float64 { return spread[2*(r-1)+p] }
	speeds := []float64{1, 1.2, 1.1, 1, 1.2, 1, 1.1, 1.2, 1, 1.05, 1.2, 1, 1.15, 1}
	varied := func(r, p int) float64 { return 780000 / speeds[2*(r-1)+p] }
	// Pairs 1-5 of 14 counted, the rest shared: 5 is the least the goal
	// takes, 4 too few.
	firstCounted := func(n int) func(r, p int) int {
		return func(r, p int) int {
			if 2*(r-1)+p < n {
				return 0
			}
			return 2
		}
	}
	// At 0.94 of its cores a run shared the machine.
	barely := coresRounds(7, steady, 2.5, none)
	for i := range barely {
		if barely[i].round <= 4 && barely[i].cpu == 2 {
			barely[i].cpus = 0.94 * 2
		}
	}
	barely = append(barely[:16:16], coresRounds(7, steady, 1.6, none)[16:]...)
	cases = append(cases, []struct {
		name string
		runs []coresRun
		want string
	}{
		{"the median of the pairs", coresRoundsBy(7, varied, eachRatio, none), "MISS  member cores: lease_renew 1 -> 2 cores 1.60x (goal >= 1.7x; median of 14"},
		{"five pairs are enough", coresRounds(7, steady, 1.8, firstCounted(5)), "PASS  member cores: lease_renew 1 -> 2 cores 1.80x (goal >= 1.7x; median of 5 adjacent pairs; left out: 9 without their cores"},
		{"four pairs are too few", coresRounds(7, steady, 1.8, firstCounted(4)), "MISS  member cores: lease_renew 1 -> 2 cores: 4 pairs counted, 5 needed (left out: 10 without their cores, 0 slow, 0 missing)"},
		{"0.94 of the cores", barely, "MISS  member cores: lease_renew 1 -> 2 cores 1.60x (goal >= 1.7x; median of 6 adjacent pairs; left out: 8 without their cores"},
		{"a run missing", append(coresRounds(7, steady, 1.85, none)[:27:27], coresRounds(7, steady, 1.85, none)[28:]...), "PASS  member cores: lease_renew 1 -> 2 cores 1.85x (goal >= 1.7x; median of 13 adjacent pairs; left out: 0 without their cores, 0 slow, 1 missing"},
		{"no runs", nil, "MISS  member cores: lease_renew: no runs"},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := coresGoal(t, c.runs); !strings.Contains(got, c.want) {
				t.Errorf("goal line %q, want it to contain %q", got, c.want)
			}
		})
	}
}
