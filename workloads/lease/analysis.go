package lease

import (
	"bufio"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"chunklease/history"
	"chunklease/workloads"
)

// LeaseDetailsFile is the lease analysis's detail file, beside
// results.json: one JSON object a line, first every chunk in natural order
// ({"chunk", "counts", "holdings", "violations"}), then every history
// problem ({"problem": {"index", "text"}}).
const LeaseDetailsFile = "lease-details.jsonl"

// Summary bounds: results.json names the earliest violations and the
// first problems, LeaseDetailsFile all of them.
const (
	SummaryViolations = 20
	SummaryProblems   = 20
)

// LeaseSummary is what results.json says about a lease history (under
// "lease"): the verdict, totals over the chunks, the earliest violations
// and the first problems. It stays a few kilobytes however long the run;
// Details names the file with every chunk's counts, holdings and
// violations and every problem.
type LeaseSummary struct {
	Valid      bool        `json:"valid"`
	ChunkCount int         `json:"chunk_count"` // chunks with at least one op
	Totals     ChunkCounts `json:"totals"`      // the chunks' counts summed: ops, holdings, reads, violations
	// ViolationsByKind counts the violations of each kind.
	ViolationsByKind map[string]int `json:"violations_by_kind"`
	// Violations are the earliest violations (by start, then in the
	// checker's order), SummaryViolations at most.
	Violations   []Violation       `json:"violations"`
	ProblemCount int               `json:"problem_count"`
	Problems     []history.Problem `json:"problems"` // the first SummaryProblems
	Details      string            `json:"details"`  // "" when no file was written
}

// SummarizeLease is the summary of a result CheckLease returned.
func SummarizeLease(res LeaseResult) LeaseSummary {
	s := LeaseSummary{Valid: res.Valid, ChunkCount: len(res.Chunks), ViolationsByKind: map[string]int{},
		ProblemCount: len(res.Problems), Problems: res.Problems[:min(len(res.Problems), SummaryProblems)]}
	early := earliestViolations{limit: SummaryViolations}
	for _, c := range slices.SortedFunc(maps.Keys(res.Chunks), workloads.CompareNatural) {
		s.Totals = s.Totals.plus(res.Chunks[c])
	}
	byChunk := map[string][]Violation{}
	for _, v := range res.Violations {
		s.ViolationsByKind[v.Kind]++
		byChunk[v.Chunk] = append(byChunk[v.Chunk], v)
	}
	for c, vs := range byChunk {
		early.offer(ChunkResult{Chunk: c, Violations: vs}, nil)
	}
	s.Violations = early.violations()
	return s
}

func (c ChunkCounts) plus(o ChunkCounts) ChunkCounts {
	return ChunkCounts{Invoked: c.Invoked + o.Invoked, OK: c.OK + o.OK, Fail: c.Fail + o.Fail, Info: c.Info + o.Info,
		Open: c.Open + o.Open, Holdings: c.Holdings + o.Holdings, Reads: c.Reads + o.Reads, Violations: c.Violations + o.Violations}
}

// NewAnalysis judges a lease history read back op by op (Analyzer), as
// Jepsen's independent checker does: it files each op under its chunk
// (RouteLeasePair) into spill files, one shard of chunks each, then checks
// the shards on Parallel goroutines, chunk by chunk (CheckLeaseChunk), and
// merges what they found. Memory holds one shard per goroutine and the few
// chunks the timeline draws, whatever the run's length. The verdict,
// violations, problems and statistics are CheckLease's and LeaseStats's;
// results.json gets a LeaseSummary, LeaseDetailsFile the rest, and the
// timeline is drawn from what the shards kept.
func (l *Lease) NewAnalysis(env workloads.AnalysisEnv) (workloads.Analysis, error) {
	scratch, err := history.SpillDir(env.Dir, "lease-spill")
	if err != nil {
		return nil, fmt.Errorf("lease analysis: %w", err)
	}
	a := &leaseAnalysis{env: env, scratch: scratch, stats: workloads.NewStatsBuilder(env.Nemesis)}
	a.env.Parallel = max(a.env.Parallel, 1)
	for i := range history.SpillShards(env.HistoryBytes) {
		w, err := history.CreateSpill(a.shardPath(i))
		if err != nil {
			a.abandon()
			return nil, err
		}
		a.shards = append(a.shards, w)
	}
	return a, nil
}

// leaseAnalysis is the lease workload's Analysis: spill files while the
// pairs stream by, then the shards' checks.
type leaseAnalysis struct {
	env      workloads.AnalysisEnv
	scratch  string
	shards   []*history.SpillWriter
	stats    *workloads.StatsBuilder
	problems []history.Problem // PairOps's
	routing  []pairProblem     // ops no chunk could be found for
}

func (a *leaseAnalysis) shardPath(i int) string {
	return filepath.Join(a.scratch, fmt.Sprintf("shard-%04d", i))
}

func (a *leaseAnalysis) partPath(i int) string {
	return filepath.Join(a.scratch, fmt.Sprintf("details-%04d", i))
}

// Abort closes and removes the spill files.
func (a *leaseAnalysis) Abort() { a.abandon() }

// abandon closes and removes the scratch files.
func (a *leaseAnalysis) abandon() {
	for _, w := range a.shards {
		_ = w.Close()
	}
	_ = os.RemoveAll(a.scratch)
}

func (a *leaseAnalysis) Pair(p history.Pair) error {
	a.stats.Add(p)
	chunk, prob, bad := RouteLeasePair(p)
	if bad {
		a.routing = append(a.routing, pairProblem{p.Invoke.Index, prob})
		return nil
	}
	return a.shards[history.ShardOf(chunk, len(a.shards))].Write(chunk, p)
}

func (a *leaseAnalysis) Problem(p history.Problem) { a.problems = append(a.problems, p) }

// Finish checks the shards and writes the detail file and the timeline.
func (a *leaseAnalysis) Finish(facts history.Facts) (workloads.Analyzed, error) {
	defer a.abandon()
	for _, w := range a.shards {
		if err := w.Close(); err != nil {
			return workloads.Analyzed{}, fmt.Errorf("lease analysis: %w", err)
		}
	}
	acc, err := a.checkShards(facts)
	if err != nil {
		return workloads.Analyzed{}, err
	}
	problems := append(slices.Clone(a.problems), orderPairProblems(append(a.routing, acc.problems...))...)
	sum := acc.summary(problems)
	out := workloads.Analyzed{Stats: acc.stats.result(a.stats.Result(a.env.Messages))}
	if a.env.Dir != "" {
		if err := a.writeDetails(problems); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s could not be written: %v", LeaseDetailsFile, err))
		} else {
			sum.Details = LeaseDetailsFile
			out.Reports = append(out.Reports, LeaseDetailsFile)
		}
		out.Pictures = append(out.Pictures, acc.timeline(sum, problems, facts))
	}
	out.Result = workloads.Result{Valid: sum.Valid, Details: sum}
	if len(acc.early.list) > 0 {
		first := acc.early.list[0]
		out.Focus = &workloads.Focus{Kind: first.v.Kind, Key: first.v.Chunk, StartNs: first.v.StartNs,
			FromNs: first.fromNs, ToNs: first.toNs, Ops: first.ops}
	}
	return out, nil
}

// checkShards checks every shard on Parallel goroutines, each gathering
// what its shards showed in its own leaseAcc (so memory follows the
// goroutines, not the shards), and merges those: every part of a leaseAcc
// merges in any order to the same result.
func (a *leaseAnalysis) checkShards(facts history.Facts) (*leaseAcc, error) {
	workers := min(a.env.Parallel, len(a.shards))
	accs := make([]*leaseAcc, workers)
	errs := make([]error, len(a.shards))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range workers {
		accs[w] = newLeaseAcc(facts.Nemesis)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = a.checkShard(i, accs[w])
			}
		}()
	}
	for i := range a.shards {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	total := newLeaseAcc(facts.Nemesis)
	for _, acc := range accs {
		total.merge(acc)
	}
	return total, nil
}

// checkShard checks the chunks of shard i, in natural order, into acc,
// and writes their detail lines to the shard's part file.
func (a *leaseAnalysis) checkShard(i int, acc *leaseAcc) error {
	recs, err := history.ReadSpill(a.shardPath(i))
	if err != nil {
		return err
	}
	_ = os.Remove(a.shardPath(i)) // read: give the disk back early
	byChunk := map[string][]history.Pair{}
	for _, r := range recs {
		byChunk[r.Key] = append(byChunk[r.Key], r.Pair)
	}
	var part *history.SpillWriter // the shard's detail lines, when there is a run directory
	if a.env.Dir != "" {
		if part, err = history.CreateSpill(a.partPath(i)); err != nil {
			return err
		}
		defer part.Close()
	}
	for _, chunk := range slices.SortedFunc(maps.Keys(byChunk), workloads.CompareNatural) {
		pairs := byChunk[chunk]
		r := CheckLeaseChunk(chunk, pairs)
		acc.add(r, pairs)
		if part != nil {
			if err := writeDetail(part, r); err != nil {
				return err
			}
		}
		delete(byChunk, chunk) // let its ops go
	}
	if part != nil {
		return part.Close()
	}
	return nil
}

// chunkDetail is one chunk's line of LeaseDetailsFile.
type chunkDetail struct {
	Chunk      string      `json:"chunk"`
	Counts     ChunkCounts `json:"counts"`
	Holdings   []Holding   `json:"holdings"`
	Violations []Violation `json:"violations"`
}

// writeDetail appends one chunk's detail line to part, filed under the
// chunk's name for the merge.
func writeDetail(part *history.SpillWriter, r ChunkResult) error {
	line, err := json.Marshal(chunkDetail{Chunk: r.Chunk, Counts: r.Counts,
		Holdings: workloads.NonNil(r.Holdings), Violations: workloads.NonNil(r.Violations)})
	if err != nil {
		return err
	}
	return part.WriteBytes(r.Chunk, line)
}

// writeDetails merges the shards' part files, each in natural chunk order,
// into LeaseDetailsFile, and appends the problems.
func (a *leaseAnalysis) writeDetails(problems []history.Problem) error {
	f, err := os.Create(filepath.Join(a.env.Dir, LeaseDetailsFile))
	if err != nil {
		return fmt.Errorf("lease details: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = a.mergeParts(w)
	for _, p := range problems {
		if err != nil {
			break
		}
		var line []byte
		line, err = json.Marshal(struct {
			Problem history.Problem `json:"problem"`
		}{p})
		if err == nil {
			_, err = w.Write(append(line, '\n'))
		}
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mergeParts writes the detail lines of every part file in natural chunk
// order (a k-way merge: each part is in that order already).
func (a *leaseAnalysis) mergeParts(w *bufio.Writer) error {
	var h partHeap
	for i := range a.shards {
		p, err := history.OpenByteRecords(a.partPath(i))
		if err != nil {
			return fmt.Errorf("lease details: %w", err)
		}
		defer p.Close()
		if p.Next() {
			h = append(h, p)
		} else if p.Err() != nil {
			return p.Err()
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		p := h[0]
		if _, err := w.Write(append(p.Data(), '\n')); err != nil {
			return err
		}
		if p.Next() {
			heap.Fix(&h, 0)
			continue
		}
		if p.Err() != nil {
			return p.Err()
		}
		heap.Pop(&h)
	}
	return nil
}

// partHeap orders the part files by their current chunk.
type partHeap []*history.ByteRecords

func (h partHeap) Len() int { return len(h) }
func (h partHeap) Less(i, j int) bool {
	return workloads.CompareNatural(string(h[i].Key()), string(h[j].Key())) < 0
}
func (h partHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *partHeap) Push(x any)   { *h = append(*h, x.(*history.ByteRecords)) }
func (h *partHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

// leaseAcc is what the chunks of one or more shards showed.
type leaseAcc struct {
	chunks   int
	totals   ChunkCounts
	byKind   map[string]int
	problems []pairProblem
	early    earliestViolations
	lanes    *lanePicker
	servers  map[string]bool
	endNs    int64 // the latest holding end
	stats    *leaseStatsAcc
}

func newLeaseAcc(nemesis []history.Op) *leaseAcc {
	return &leaseAcc{byKind: map[string]int{}, early: earliestViolations{limit: max(SummaryViolations, DefaultTimelineLimits.ListedFindings)},
		lanes: newLanePicker(DefaultTimelineLimits), servers: map[string]bool{}, stats: newLeaseStatsAcc(nemesis)}
}

// add takes one chunk's result and its ops.
func (acc *leaseAcc) add(r ChunkResult, pairs []history.Pair) {
	acc.chunks++
	acc.totals = acc.totals.plus(r.Counts)
	acc.problems = append(acc.problems, r.problems...)
	for _, v := range r.Violations {
		acc.byKind[v.Kind]++
	}
	if len(r.Violations) > 0 {
		byInvoke := make(map[int]history.Pair, len(pairs))
		for _, p := range pairs {
			byInvoke[p.Invoke.Index] = p
		}
		acc.early.offer(r, byInvoke)
	}
	acc.lanes.offer(r, func() []string {
		completions := map[int]json.RawMessage{}
		for _, p := range pairs {
			if p.Completion != nil {
				completions[p.Completion.Index] = p.Completion.Value
			}
		}
		return tokensOf(r.Holdings, completions)
	})
	for _, h := range r.Holdings {
		acc.servers[h.Server] = true
		if h.EndNs != math.MaxInt64 {
			acc.endNs = max(acc.endNs, h.EndNs)
		}
	}
	acc.stats.addChunk(r.Holdings)
}

func (acc *leaseAcc) merge(o *leaseAcc) {
	acc.chunks += o.chunks
	acc.totals = acc.totals.plus(o.totals)
	for k, n := range o.byKind {
		acc.byKind[k] += n
	}
	acc.problems = append(acc.problems, o.problems...)
	acc.early.merge(&o.early)
	acc.lanes.merge(o.lanes)
	for s := range o.servers {
		acc.servers[s] = true
	}
	acc.endNs = max(acc.endNs, o.endNs)
	acc.stats.merge(o.stats)
}

// summary is results.json's lease section; problems are every problem, in
// CheckLease's order.
func (acc *leaseAcc) summary(problems []history.Problem) LeaseSummary {
	s := LeaseSummary{ChunkCount: acc.chunks, Totals: acc.totals, ViolationsByKind: acc.byKind,
		ProblemCount: len(problems), Problems: workloads.NonNil(problems[:min(len(problems), SummaryProblems)])}
	vs := acc.early.violations()
	s.Violations = vs[:min(len(vs), SummaryViolations)]
	s.Valid = acc.totals.Violations == 0 && len(problems) == 0
	return s
}

// timeline is what the timeline page shows.
func (acc *leaseAcc) timeline(sum LeaseSummary, problems []history.Problem, facts history.Facts) TimelineInput {
	lim := DefaultTimelineLimits
	in := TimelineInput{Valid: sum.Valid, ChunkCount: acc.chunks, HoldingCount: acc.totals.Holdings,
		ViolationCount: acc.totals.Violations, ProblemCount: len(problems),
		Servers:  slices.SortedFunc(maps.Keys(acc.servers), workloads.CompareNatural),
		Problems: problems[:min(len(problems), lim.ListedFindings)], Faults: workloads.FaultsOf(facts.Nemesis, facts.Nodes),
		EndNs: max(facts.LastNs, acc.endNs, 1), DetailsFile: LeaseDetailsFile}
	vs := acc.early.violations()
	in.Earliest = vs[:min(len(vs), lim.ListedFindings)]
	in.Lanes, in.Rest = acc.lanes.lanes()
	return in
}
