package workloads

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Violation kinds reported by CheckLease.
const (
	TwoPrimaries    = "two-primaries"     // two servers' holdings overlap
	ReadWrongHolder = "read-wrong-holder" // a read named X while another server held the chunk throughout
	ReadNoHolder    = "read-no-holder"    // a read named nobody while some server held the chunk throughout
)

// LeaseResult is the lease checker's verdict.
type LeaseResult struct {
	Valid      bool                   `json:"valid"`
	Chunks     map[string]ChunkCounts `json:"chunks"`
	Violations []Violation            `json:"violations"`
	Holdings   []Holding              `json:"holdings"` // non-empty holdings, by chunk then start
	Problems   []HistoryProblem       `json:"problems"` // defects that make the history unjudgeable
}

// ChunkCounts counts one chunk's client ops and findings.
type ChunkCounts struct {
	Invoked    int `json:"invoked"`
	OK         int `json:"ok"`
	Fail       int `json:"fail"`
	Info       int `json:"info"`
	Open       int `json:"open"` // invoked, never completed
	Holdings   int `json:"holdings"`
	Reads      int `json:"reads"`
	Violations int `json:"violations"`
}

// Holding is an interval [StartNs, EndNs) during which, from a client's
// point of view, Server held Chunk: made by an ok grant naming the
// requester as primary, or an ok renew.
type Holding struct {
	Chunk           string `json:"chunk"`
	Server          string `json:"server"`
	F               string `json:"f"` // grant or renew
	StartNs         int64  `json:"start_ns"`
	EndNs           int64  `json:"end_ns"`
	InvokeNs        int64  `json:"invoke_ns"` // when the grant or renew was invoked
	InvokeIndex     int    `json:"invoke_index"`
	CompletionIndex int    `json:"completion_index"`
	CutByIndex      *int   `json:"cut_by_index"` // invoke index of the release that cut it; null if none
}

// Violation is one breach of the lease safety rules.
type Violation struct {
	Kind    string   `json:"kind"`
	Chunk   string   `json:"chunk"`
	Servers []string `json:"servers"` // two-primaries: both holders; reads: [reported ("" for none), actual holder]
	Ops     []int    `json:"ops"`     // op indices: invoke and completion of each op involved
	StartNs int64    `json:"start_ns"`
	EndNs   int64    `json:"end_ns"` // two-primaries: the overlap; reads: the read's interval
	Text    string   `json:"text"`
}

// leaseRead is an ok check, or an ok grant that answered with another
// primary: it reported Holder ("" for none) during [startNs, endNs].
type leaseRead struct {
	holder         string
	startNs, endNs int64
	invoke, done   int
	f              string
}

// leaseRelease is a release invoke: it cuts its server's holdings.
type leaseRelease struct {
	server string
	timeNs int64
	index  int
}

// chunkHistory is the part of a history that concerns one chunk.
type chunkHistory struct {
	holdings []Holding // uncut, before releases apply
	reads    []leaseRead
	releases []leaseRelease
}

// CheckLease judges a lease history chunk by chunk (Jepsen's independent
// checking; nemesis ops pass through). The rules are in doc.go: holdings
// of two different servers must never overlap, and no read may report a
// holder contradicted by a holding that covers the whole read.
func CheckLease(history []Op) LeaseResult {
	pairs, problems := PairOps(history)
	res := LeaseResult{Chunks: map[string]ChunkCounts{}, Violations: []Violation{}, Holdings: []Holding{}}
	chunks := map[string]*chunkHistory{}
	for _, p := range pairs {
		if prob, bad := collectPair(p, chunks, res.Chunks); bad {
			problems = append(problems, prob)
		}
	}
	names := slices.SortedFunc(maps.Keys(chunks), compareNatural)
	for _, name := range names {
		holdings, violations := checkChunk(name, chunks[name])
		res.Holdings = append(res.Holdings, holdings...)
		res.Violations = append(res.Violations, violations...)
		counts := res.Chunks[name]
		counts.Holdings, counts.Reads, counts.Violations = len(holdings), len(chunks[name].reads), len(violations)
		res.Chunks[name] = counts
	}
	res.Problems = problems
	if res.Problems == nil {
		res.Problems = []HistoryProblem{}
	}
	res.Valid = len(res.Violations) == 0 && len(res.Problems) == 0
	return res
}

// collectPair files one client op under its chunk. The value of an ok
// completion mirrors the request's fields, so only that value is decoded;
// the invoke value is decoded for other ops, or when the completion's
// value lacks the chunk or server.
func collectPair(p Pair, chunks map[string]*chunkHistory, counts map[string]ChunkCounts) (HistoryProblem, bool) {
	inv := p.Invoke
	switch inv.F {
	case FGrant, FRenew, FCheck, FRelease:
	default:
		return HistoryProblem{inv.Index, fmt.Sprintf("lease history has an op with f %q", inv.F)}, true
	}
	ok := p.Completion != nil && p.Completion.Type == OK
	var v LeaseValue
	if ok {
		var err error
		if v, err = decodeLeaseValue(p.Completion.Value); err != nil {
			return HistoryProblem{p.Completion.Index, fmt.Sprintf("ok %s value %s: %v", inv.F, p.Completion.Value, err)}, true
		}
	}
	if v.Chunk == "" || (inv.F != FCheck && v.Server == "") {
		req, err := decodeLeaseValue(inv.Value)
		if err != nil || req.Chunk == "" {
			return HistoryProblem{inv.Index, fmt.Sprintf("%s invoke value %s has no chunk", inv.F, inv.Value)}, true
		}
		v.Chunk, v.Server = req.Chunk, req.Server
	}
	ch := chunks[v.Chunk]
	if ch == nil {
		ch = &chunkHistory{}
		chunks[v.Chunk] = ch
	}
	countPair(p, v.Chunk, counts)
	if inv.F == FRelease {
		ch.releases = append(ch.releases, leaseRelease{server: v.Server, timeNs: inv.Time, index: inv.Index})
	}
	if !ok {
		return HistoryProblem{}, false // info and fail ops create no holding and no read
	}
	return collectOK(p, v, ch)
}

func countPair(p Pair, chunk string, counts map[string]ChunkCounts) {
	c := counts[chunk]
	c.Invoked++
	switch {
	case p.Completion == nil:
		c.Open++
	case p.Completion.Type == OK:
		c.OK++
	case p.Completion.Type == Fail:
		c.Fail++
	default:
		c.Info++
	}
	counts[chunk] = c
}

// collectOK turns an ok grant, renew or check into a holding or a read;
// v is the decoded completion value.
func collectOK(p Pair, v LeaseValue, ch *chunkHistory) (HistoryProblem, bool) {
	done := *p.Completion
	read := leaseRead{startNs: p.Invoke.Time, endNs: done.Time, invoke: p.Invoke.Index, done: done.Index, f: done.F}
	hold := Holding{Chunk: v.Chunk, Server: v.Server, F: done.F, StartNs: done.Time,
		InvokeNs: p.Invoke.Time, InvokeIndex: p.Invoke.Index, CompletionIndex: done.Index}
	missing := func(field string) (HistoryProblem, bool) {
		return HistoryProblem{done.Index, fmt.Sprintf("ok %s value %s lacks %s", done.F, done.Value, field)}, true
	}
	switch done.F {
	case FGrant:
		if v.Primary == nil || v.ExpiresInMs == nil {
			return missing("primary or expires_in_ms")
		}
		if *v.Primary != v.Server {
			read.holder = *v.Primary
			ch.reads = append(ch.reads, read)
			return HistoryProblem{}, false
		}
		hold.EndNs = p.Invoke.Time + *v.ExpiresInMs*1e6
		ch.holdings = append(ch.holdings, hold)
	case FRenew:
		if v.NewExpiresInMs == nil {
			return missing("new_expires_in_ms")
		}
		hold.EndNs = p.Invoke.Time + *v.NewExpiresInMs*1e6
		ch.holdings = append(ch.holdings, hold)
	case FCheck:
		if v.Expired == nil {
			return missing("expired")
		}
		if !*v.Expired && v.Primary != nil {
			read.holder = *v.Primary
		}
		ch.reads = append(ch.reads, read)
	}
	return HistoryProblem{}, false
}

// checkChunk cuts the chunk's holdings at releases and finds violations.
func checkChunk(chunk string, ch *chunkHistory) ([]Holding, []Violation) {
	holdings := cutHoldings(ch.holdings, ch.releases)
	violations := overlaps(chunk, holdings)
	for _, r := range ch.reads {
		if v, bad := judgeRead(chunk, r, holdings); bad {
			violations = append(violations, v)
		}
	}
	return holdings, violations
}

// cutHoldings ends each holding at the invoke of the first release by the
// same server invoked at or after the holding op's invoke (whatever that
// release's outcome), drops the holdings left empty, and sorts the rest by
// start.
func cutHoldings(raw []Holding, releases []leaseRelease) []Holding {
	slices.SortStableFunc(releases, func(a, b leaseRelease) int { return cmp.Compare(a.timeNs, b.timeNs) })
	out := make([]Holding, 0, len(raw))
	for _, h := range raw {
		if rel, ok := firstReleaseFrom(releases, h.Server, h.InvokeNs); ok && rel.timeNs < h.EndNs {
			h.EndNs = rel.timeNs
			idx := rel.index
			h.CutByIndex = &idx
		}
		if h.StartNs < h.EndNs {
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, byStart)
	return out
}

// byStart orders holdings by start, then by invoke index.
func byStart(a, b Holding) int {
	return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.InvokeIndex, b.InvokeIndex))
}

// firstReleaseFrom finds the earliest release by server invoked at or
// after fromNs; releases are sorted by invoke time.
func firstReleaseFrom(releases []leaseRelease, server string, fromNs int64) (leaseRelease, bool) {
	i := sort.Search(len(releases), func(i int) bool { return releases[i].timeNs >= fromNs })
	for ; i < len(releases); i++ {
		if releases[i].server == server {
			return releases[i], true
		}
	}
	return leaseRelease{}, false
}

// overlaps reports every pair of holdings of different servers that
// overlap: max(starts) < min(ends). holdings are sorted by start, so for
// h[i] the candidates are the h[j], j > i, that start before h[i] ends.
func overlaps(chunk string, holdings []Holding) []Violation {
	var out []Violation
	for i, a := range holdings {
		for _, b := range holdings[i+1:] {
			if b.StartNs >= a.EndNs {
				break
			}
			if a.Server == b.Server {
				continue
			}
			end := min(a.EndNs, b.EndNs)
			out = append(out, Violation{
				Kind: TwoPrimaries, Chunk: chunk, Servers: []string{a.Server, b.Server},
				Ops:     []int{a.InvokeIndex, a.CompletionIndex, b.InvokeIndex, b.CompletionIndex},
				StartNs: b.StartNs, EndNs: end,
				Text: fmt.Sprintf("%s (%s ops %d-%d) and %s (%s ops %d-%d) both held %s for %.3f ms",
					a.Server, a.F, a.InvokeIndex, a.CompletionIndex, b.Server, b.F, b.InvokeIndex,
					b.CompletionIndex, chunk, nsToMs(end-b.StartNs)),
			})
		}
	}
	return out
}

// judgeRead finds a holding that covers the whole read, [start, end]
// inside [StartNs, EndNs), and contradicts what the read reported.
func judgeRead(chunk string, r leaseRead, holdings []Holding) (Violation, bool) {
	for _, h := range holdings {
		if h.StartNs > r.startNs {
			break
		}
		if r.endNs >= h.EndNs || h.Server == r.holder {
			continue
		}
		v := Violation{Chunk: chunk, Servers: []string{r.holder, h.Server},
			Ops: []int{r.invoke, r.done, h.InvokeIndex, h.CompletionIndex}, StartNs: r.startNs, EndNs: r.endNs}
		if r.holder == "" {
			v.Kind = ReadNoHolder
			v.Text = fmt.Sprintf("%s (ops %d-%d) reported no holder of %s while %s held it throughout (%s ops %d-%d)",
				r.f, r.invoke, r.done, chunk, h.Server, h.F, h.InvokeIndex, h.CompletionIndex)
		} else {
			v.Kind = ReadWrongHolder
			v.Text = fmt.Sprintf("%s (ops %d-%d) reported %s as holder of %s while %s held it throughout (%s ops %d-%d)",
				r.f, r.invoke, r.done, r.holder, chunk, h.Server, h.F, h.InvokeIndex, h.CompletionIndex)
		}
		return v, true
	}
	return Violation{}, false
}
