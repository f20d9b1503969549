package lease

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"chunklease/internal/testseed"
	"chunklease/workloads"
)

// randomChunks makes n chunk results with random op counts (ties
// included) and violations in about a third of them.
func randomChunks(rng *rand.Rand, n int) []ChunkResult {
	var out []ChunkResult
	for i := range n {
		c := ChunkResult{Chunk: fmt.Sprintf("ch_%d", rng.IntN(3*n)), Counts: ChunkCounts{Invoked: rng.IntN(8), Holdings: rng.IntN(4)}}
		if slices.ContainsFunc(out, func(o ChunkResult) bool { return o.Chunk == c.Chunk }) {
			continue
		}
		if rng.IntN(3) == 0 {
			for j := range 1 + rng.IntN(3) {
				c.Violations = append(c.Violations, Violation{Kind: TwoPrimaries, Chunk: c.Chunk, StartNs: int64(rng.IntN(20)), Ops: []int{i, j}})
			}
			c.Counts.Violations = len(c.Violations)
		}
		out = append(out, c)
	}
	return out
}

// offerSplit offers the chunks, shuffled, to k pickers and merges them.
func offerSplit(rng *rand.Rand, chunks []ChunkResult, lim TimelineLimits, k int) (*lanePicker, *earliestViolations) {
	pickers := make([]*lanePicker, k)
	early := make([]*earliestViolations, k)
	for i := range k {
		pickers[i], early[i] = newLanePicker(lim), &earliestViolations{limit: lim.ListedFindings}
	}
	for _, i := range rng.Perm(len(chunks)) {
		j := rng.IntN(k)
		pickers[j].offer(chunks[i], func() []string { return nil })
		early[j].offer(chunks[i], nil)
	}
	for i := 1; i < k; i++ {
		pickers[0].merge(pickers[i])
		early[0].merge(early[i])
	}
	return pickers[0], early[0]
}

// bruteLanes chooses lanes as the timeline did from a whole result: the
// chunks of the first violations (in the checker's order: natural, then
// each chunk's), then the busiest others in natural order; and the sums of
// the rest.
func bruteLanes(chunks []ChunkResult, lim TimelineLimits) ([]string, RestCounts) {
	sorted := slices.Clone(chunks)
	slices.SortFunc(sorted, func(a, b ChunkResult) int { return workloads.CompareNatural(a.Chunk, b.Chunk) })
	var lanes []string
	for _, c := range sorted {
		if len(c.Violations) > 0 && len(lanes) < lim.ViolationLanes {
			lanes = append(lanes, c.Chunk)
		}
	}
	var others []ChunkResult
	for _, c := range sorted {
		if !slices.Contains(lanes, c.Chunk) {
			others = append(others, c)
		}
	}
	slices.SortStableFunc(others, func(a, b ChunkResult) int { return cmp.Compare(b.Counts.Invoked, a.Counts.Invoked) })
	busy := others[:min(len(others), lim.BusiestLanes)]
	var names []string
	for _, c := range busy {
		names = append(names, c.Chunk)
	}
	slices.SortFunc(names, workloads.CompareNatural)
	var rest RestCounts
	for _, c := range others[len(busy):] {
		rest.Chunks++
		rest.Holdings += c.Counts.Holdings
		rest.Invoked += c.Counts.Invoked
	}
	return append(lanes, names...), rest
}

// TestLanePickerMatchesWholeHistoryChoice: offered chunk by chunk, in any
// order, to pickers merged afterwards, the picker chooses the lanes the
// timeline chose from a whole result; and the earliest violations are
// the first of the checker's list sorted stably by start.
func TestLanePickerMatchesWholeHistoryChoice(t *testing.T) {
	seed := int64(testseed.Get(t))
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for range 300 {
		lim := TimelineLimits{ViolationLanes: rng.IntN(6), BusiestLanes: rng.IntN(6), ListedFindings: rng.IntN(8)}
		chunks := randomChunks(rng, rng.IntN(40))
		picker, early := offerSplit(rng, chunks, lim, 1+rng.IntN(4))
		lanes, rest := picker.lanes()
		var got []string
		for _, l := range lanes {
			got = append(got, l.Chunk)
		}
		want, wantRest := bruteLanes(chunks, lim)
		if !slices.Equal(got, want) || rest != wantRest {
			t.Fatalf("limits %+v: lanes %v rest %+v, want %v rest %+v", lim, got, rest, want, wantRest)
		}
		sorted := slices.Clone(chunks)
		slices.SortFunc(sorted, func(a, b ChunkResult) int { return workloads.CompareNatural(a.Chunk, b.Chunk) })
		var all []Violation
		for _, c := range sorted {
			all = append(all, c.Violations...)
		}
		slices.SortStableFunc(all, func(a, b Violation) int { return cmp.Compare(a.StartNs, b.StartNs) })
		if wantEarly := all[:min(len(all), lim.ListedFindings)]; !reflect.DeepEqual(early.violations(), slices.Clip(wantEarly)) &&
			!(len(wantEarly) == 0 && len(early.violations()) == 0) {
			t.Fatalf("earliest %v, want %v", early.violations(), wantEarly)
		}
	}
}
