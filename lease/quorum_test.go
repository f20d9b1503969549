package lease

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"
)

var quorumSeed = flag.Uint64("quorum-seed", 0, "seed for the quorum property tests (0: a fresh one, printed)")

func propertySeed(t *testing.T) uint64 {
	seed := *quorumSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (replay with -quorum-seed %d)", seed, seed)
	return seed
}

// TestTallyAgainstOracle feeds random response streams, duplicates
// included, to a tally and to a map of distinct acceptors; the counts must
// agree, and a quorum is reached exactly when a majority of distinct
// acceptors answered.
func TestTallyAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t), 1))
	for round := 0; round < 2000; round++ {
		n := 1 + rng.IntN(maxAcceptors)
		var tl tally
		oracle := map[int]bool{}
		for k := rng.IntN(3 * n); k > 0; k-- {
			i := rng.IntN(n)
			added := tl.add(i)
			if added == oracle[i] {
				t.Fatalf("n=%d: add(%d) = %v but the oracle had it: %v", n, i, added, oracle[i])
			}
			oracle[i] = true
			if tl.count() != len(oracle) || !tl.has(i) {
				t.Fatalf("n=%d: tally counts %d, oracle %d", n, tl.count(), len(oracle))
			}
			if (tl.count() >= majority(n)) != (2*len(oracle) > n) {
				t.Fatalf("n=%d: quorum %d disagrees with the majority of %d distinct", n, majority(n), len(oracle))
			}
		}
	}
}

// TestTallyPerMessageWeakeningCountsDuplicates shows the weakening bites:
// one acceptor answering three times makes a quorum of five.
func TestTallyPerMessageWeakeningCountsDuplicates(t *testing.T) {
	tl := tally{perMessage: true}
	for range 3 {
		tl.add(2)
	}
	if tl.count() != 3 || tl.count() < majority(5) {
		t.Fatalf("per-message tally counted %d for three copies of one answer", tl.count())
	}
}

// readOracle is the definition judgeRead implements, checked by brute
// force: server s may have held the chunk throughout the read iff some
// majority M of acceptors exists such that every acceptor of M that
// answered reported s (the others kept s's lease but did not answer).
func readOracle(reports map[int]string, n int, s string) bool {
	q := majority(n)
	for m := uint64(0); m < 1<<uint(n); m++ {
		if popcount(m) < q {
			continue
		}
		ok := true
		for i := 0; i < n && ok; i++ {
			if m&(1<<uint(i)) != 0 {
				if r, answered := reports[i]; answered && r != s {
					ok = false
				}
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func popcount(m uint64) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

// TestJudgeReadAgainstOracle: for random reads of up to 9 acceptors,
// judgeRead names the holder iff exactly one server may hold, says "none"
// iff no server may hold, and is undecided otherwise.
func TestJudgeReadAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t), 2))
	servers := []string{"", "s1", "s2", "s3"}
	for round := 0; round < 5000; round++ {
		n := 1 + rng.IntN(9)
		reports := map[int]string{}
		var answers []string
		for _, i := range rng.Perm(n)[:majority(n)+rng.IntN(n-majority(n)+1)] {
			reports[i] = servers[rng.IntN(len(servers))]
			answers = append(answers, reports[i])
		}
		var possible []string
		for _, s := range servers[1:] {
			if readOracle(reports, n, s) {
				possible = append(possible, s)
			}
		}
		holder, decided := judgeRead(answers, n, majority(n))
		switch {
		case len(possible) > 1 && decided:
			t.Fatalf("n=%d answers=%q: possible holders %q but judgeRead decided %q", n, answers, possible, holder)
		case len(possible) == 1 && (!decided || holder != possible[0]):
			t.Fatalf("n=%d answers=%q: only %q may hold, judgeRead said %q decided=%v", n, answers, possible[0], holder, decided)
		case len(possible) == 0 && (!decided || holder != ""):
			t.Fatalf("n=%d answers=%q: nobody may hold, judgeRead said %q decided=%v", n, answers, holder, decided)
		}
	}
}

// TestJudgeReadExamples pins the cases the contract names, including the
// one where the highest ballot would be wrong.
func TestJudgeReadExamples(t *testing.T) {
	tests := []struct {
		name    string
		answers []string
		n       int
		holder  string
		decided bool
	}{
		{"too few answers", []string{"s1", "s1"}, 5, "", false},
		{"unanimous majority", []string{"s1", "s1", "s1"}, 5, "s1", true},
		{"holder and a phantom, 3 of 5", []string{"s1", "s2", ""}, 5, "", false},
		{"holder and a phantom, 4 of 5", []string{"s1", "s1", "s2", ""}, 5, "s1", true},
		{"every answer, no majority", []string{"s1", "s1", "s2", "", ""}, 5, "", true},
		{"nothing live", []string{"", "", ""}, 5, "", true},
		{"one of one", []string{"s1"}, 1, "s1", true},
		{"2 of 3, one each", []string{"s1", "s2"}, 3, "", false},
	}
	for _, tt := range tests {
		holder, decided := judgeRead(tt.answers, tt.n, majority(tt.n))
		if holder != tt.holder || decided != tt.decided {
			t.Errorf("%s: judgeRead(%q) = %q, %v; want %q, %v", tt.name, tt.answers, holder, decided, tt.holder, tt.decided)
		}
	}
}

// TestProtectedMsAgainstOracle checks protectedMs against brute force: for
// n acceptors each protecting the holder for some time (0: not at all),
// the chunk stays closed to other servers until a majority is free, the
// q-th smallest time. From any r >= q answers (the others unknown, so
// possibly 0), protectedMs must never exceed that for any value of the
// unknown ones, and must equal it once all n answered.
func TestProtectedMsAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(propertySeed(t), 3))
	for range 20_000 {
		n := 1 + rng.IntN(7)
		q := majority(n)
		truth := make([]int64, n)
		for i := range truth {
			if rng.IntN(3) > 0 {
				truth[i] = rng.Int64N(1000)
			}
		}
		order := rng.Perm(n)
		r := q + rng.IntN(n-q+1)
		var samples []sample
		for _, i := range order[:r] {
			s := sample{}
			if truth[i] > 0 {
				s = sample{server: "s1", remainingMs: truth[i]}
			}
			samples = append(samples, s)
		}
		got := protectedMs(samples, "s1", n, q)
		// The worst case for the unknown answers is 0: the q-th smallest of
		// the known times with the unknown ones at 0.
		worst := make([]int64, n)
		for k, i := range order[:r] {
			worst[k] = truth[i]
		}
		slices.Sort(worst)
		if got > worst[q-1] {
			t.Fatalf("n=%d r=%d truth=%v answered=%v: protectedMs %d exceeds the q-th smallest %d", n, r, truth, order[:r], got, worst[q-1])
		}
		if r == n {
			all := slices.Clone(truth)
			slices.Sort(all)
			if got != all[q-1] {
				t.Fatalf("n=%d truth=%v: protectedMs %d, want the q-th smallest %d", n, truth, got, all[q-1])
			}
		}
	}
}
