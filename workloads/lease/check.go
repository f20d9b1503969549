package lease

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"chunklease/history"
	"chunklease/workloads"
)

// Violation kinds reported by CheckLease.
const (
	TwoPrimaries    = "two-primaries"     // two servers' holdings overlap
	ReadWrongHolder = "read-wrong-holder" // a read named X while another server held the chunk throughout
	ReadNoHolder    = "read-no-holder"    // a read named nobody while some server held the chunk throughout
	// Fencing: tokens let storage refuse a deposed
	// primary's writes only if each names one server and they grow.
	TokenMissing    = "token-missing"     // an ok grant to itself or ok renew without a valid token
	TokenTwoServers = "token-two-servers" // one token value named leases of two servers
	TokenOrder      = "token-order"       // a token not larger than a token completed before the request
	// The remaining time a holding is built from must be one the node
	// could know: a whole number of ms in 0..2^53, at most the lease_ms
	// asked for (the proposer's timer starts before it sends propose).
	ExpiresOutOfRange = "expires-out-of-range" // an ok grant to itself or ok renew told a time outside that range
)

// LeaseResult is the lease checker's verdict.
type LeaseResult struct {
	Valid      bool                   `json:"valid"`
	Chunks     map[string]ChunkCounts `json:"chunks"`
	Violations []Violation            `json:"violations"`
	Holdings   []Holding              `json:"holdings"` // non-empty holdings, by chunk then start
	Problems   []history.Problem      `json:"problems"` // defects that make the history unjudgeable
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
	Chunk  string `json:"chunk"`
	Server string `json:"server"`
	F      string `json:"f"` // grant or renew
	// Node is the node that answered the grant or renew (the op's node in
	// the history; "" when the history names none).
	Node            string `json:"node"`
	StartNs         int64  `json:"start_ns"`
	EndNs           int64  `json:"end_ns"`
	InvokeNs        int64  `json:"invoke_ns"` // when the grant or renew was invoked
	InvokeIndex     int    `json:"invoke_index"`
	CompletionIndex int    `json:"completion_index"`
	CutByIndex      *int   `json:"cut_by_index"` // invoke index of the release that cut it; null if none
	// Token is the lease instance's fencing token, the only name a release
	// can cut it by; 0 when the reply carried none or one outside
	// 0 < token < 2^53 (a token-missing violation).
	Token int64 `json:"token"`
}

// Violation is one breach of the lease safety rules.
type Violation struct {
	Kind  string `json:"kind"`
	Chunk string `json:"chunk"`
	// Servers: two-primaries: both holders; reads: [reported ("" for
	// none), actual holder]; token-missing: the server; token-two-servers
	// and token-order: the earlier op's server, then the later op's.
	Servers []string `json:"servers"`
	Ops     []int    `json:"ops"` // op indices: invoke and completion of each op involved
	// Nodes are the nodes that answered the ops involved, one per op (so
	// half as many as Ops), in the same order; "" where the history names
	// none.
	Nodes   []string `json:"nodes"`
	StartNs int64    `json:"start_ns"`
	// EndNs: two-primaries: the overlap; reads and token-missing: the op's
	// interval; token-two-servers and token-order: from the first op's
	// invoke to the last op's completion.
	EndNs int64  `json:"end_ns"`
	Text  string `json:"text"`
}

// leaseRead is an ok check, or an ok grant that answered with another
// primary: it reported Holder ("" for none) during [startNs, endNs].
type leaseRead struct {
	holder         string
	startNs, endNs int64
	invoke, done   int
	f              string
	node           string // the node that answered
}

// leaseRelease is a release invoke: it cuts its server's holdings whose
// tokens are at most its token.
type leaseRelease struct {
	server string
	token  int64 // 0: none, or one no lease can carry; cuts nothing
	timeNs int64
	index  int
}

// chunkHistory is the part of a history that concerns one chunk.
type chunkHistory struct {
	holdings []Holding // every ok grant to itself and ok renew, uncut, in invoke order
	reads    []leaseRead
	releases []leaseRelease
	missing  []Violation // token-missing and expires-out-of-range, found while collecting
}

// CheckLease judges a lease history chunk by chunk (Jepsen's independent
// checking; nemesis ops pass through). The rules are in doc.go: holdings
// of two different servers must never overlap, no read may report a
// holder contradicted by a holding that covers the whole read, and tokens
// must fence (present, one server each, growing across servers).
//
// It holds the whole history; the harness judges a long run with the same
// pieces in bounded memory (Lease.NewAnalysis): RouteLeasePair files each op
// under its chunk, CheckLeaseChunk judges one chunk's ops.
func CheckLease(ops []history.Op) LeaseResult {
	pairs, problems := history.PairOps(ops)
	res := LeaseResult{Chunks: map[string]ChunkCounts{}, Violations: []Violation{}, Holdings: []Holding{}}
	chunks := map[string]*chunkCheck{}
	var pairProblems []pairProblem
	for _, p := range pairs {
		lp, prob, bad := decodeLeasePair(p)
		if bad {
			pairProblems = append(pairProblems, pairProblem{p.Invoke.Index, prob})
			continue
		}
		c := chunks[lp.v.Chunk]
		if c == nil {
			c = &chunkCheck{}
			chunks[lp.v.Chunk] = c
		}
		c.add(lp)
	}
	for _, name := range slices.SortedFunc(maps.Keys(chunks), workloads.CompareNatural) {
		c := chunks[name].result(name)
		res.Chunks[name] = c.Counts
		res.Holdings = append(res.Holdings, c.Holdings...)
		res.Violations = append(res.Violations, c.Violations...)
		pairProblems = append(pairProblems, c.problems...)
	}
	res.Problems = append(append([]history.Problem{}, problems...), orderPairProblems(pairProblems)...)
	res.Valid = len(res.Violations) == 0 && len(res.Problems) == 0
	return res
}

// pairProblem is a problem found in one pair, with the pair's invoke
// index: CheckLease lists such problems in pair order.
type pairProblem struct {
	invoke  int
	problem history.Problem
}

// orderPairProblems sorts problems into pair order; never nil.
func orderPairProblems(ps []pairProblem) []history.Problem {
	slices.SortStableFunc(ps, func(a, b pairProblem) int { return cmp.Compare(a.invoke, b.invoke) })
	out := make([]history.Problem, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.problem)
	}
	return out
}

// ChunkResult is the lease checker's finding on one chunk.
type ChunkResult struct {
	Chunk      string
	Counts     ChunkCounts
	Holdings   []Holding   // cut, non-empty, by start
	Violations []Violation // two-primaries, reads, then fencing, as CheckLease lists them
	// problems are the chunk's ops whose values lack the fields their f
	// needs (CheckLease lists them among its Problems, in op order).
	problems []pairProblem
}

// RouteLeasePair names the chunk a client op of the lease workload
// belongs to: the chunk of its ok completion's value, else its invoke's.
// An op that cannot be filed under a chunk (an unknown f, an ok value
// that does not decode, an invoke value without a chunk) is a problem.
func RouteLeasePair(p history.Pair) (string, history.Problem, bool) {
	lp, prob, bad := decodeLeasePair(p)
	return lp.v.Chunk, prob, bad
}

// CheckLeaseChunk judges the ops of one chunk (those RouteLeasePair files
// under it), given in invoke order: holdings cut at releases, then
// two-primaries, reads and fencing, exactly as CheckLease does for that
// chunk.
func CheckLeaseChunk(chunk string, pairs []history.Pair) ChunkResult {
	var c chunkCheck
	for _, p := range pairs {
		lp, prob, bad := decodeLeasePair(p)
		if bad {
			c.problems = append(c.problems, pairProblem{p.Invoke.Index, prob})
			continue
		}
		c.add(lp)
	}
	return c.result(chunk)
}

// chunkCheck gathers one chunk's ops for CheckLeaseChunk.
type chunkCheck struct {
	ch       chunkHistory
	counts   ChunkCounts
	problems []pairProblem
}

// add counts one op of the chunk and files its release, holding or read.
func (c *chunkCheck) add(lp leasePair) {
	if prob, bad := c.ch.add(lp, &c.counts); bad {
		c.problems = append(c.problems, pairProblem{lp.p.Invoke.Index, prob})
	}
}

// result checks what add gathered.
func (c *chunkCheck) result(chunk string) ChunkResult {
	res := ChunkResult{Chunk: chunk, Counts: c.counts, problems: c.problems}
	res.Holdings, res.Violations = checkChunk(chunk, &c.ch)
	res.Counts.Holdings, res.Counts.Reads, res.Counts.Violations = len(res.Holdings), len(c.ch.reads), len(res.Violations)
	return res
}

// leasePair is a client op with the values the checker reads: v is the
// ok completion's value (zero otherwise) with the chunk and server of the
// invoke when it lacks them, req the invoke's value when it was decoded
// (always for a release: its token is there).
type leasePair struct {
	p      history.Pair
	ok     bool
	v, req LeaseValue
}

// decodeLeasePair decodes what the checker reads from a pair. The value of
// an ok completion mirrors the request's fields, so only that value is
// decoded; the invoke value is decoded for other ops, or when the
// completion's value lacks the chunk or server.
func decodeLeasePair(p history.Pair) (leasePair, history.Problem, bool) {
	inv := p.Invoke
	switch inv.F {
	case FGrant, FRenew, FCheck, FRelease:
	default:
		return leasePair{}, history.Problem{Index: inv.Index, Text: fmt.Sprintf("lease history has an op with f %q", inv.F)}, true
	}
	lp := leasePair{p: p, ok: p.Completion != nil && p.Completion.Type == history.OK}
	if lp.ok {
		var err error
		if lp.v, err = decodeLeaseValue(p.Completion.Value); err != nil {
			return leasePair{}, history.Problem{Index: p.Completion.Index, Text: fmt.Sprintf("ok %s value %s: %v", inv.F, p.Completion.Value, err)}, true
		}
	}
	if lp.v.Chunk == "" || (inv.F != FCheck && lp.v.Server == "") || inv.F == FRelease {
		var err error
		lp.req, err = decodeLeaseValue(inv.Value)
		if err != nil || lp.req.Chunk == "" {
			return leasePair{}, history.Problem{Index: inv.Index, Text: fmt.Sprintf("%s invoke value %s has no chunk", inv.F, inv.Value)}, true
		}
		if lp.v.Chunk == "" || (inv.F != FCheck && lp.v.Server == "") {
			lp.v.Chunk, lp.v.Server = lp.req.Chunk, lp.req.Server
		}
	}
	return lp, history.Problem{}, false
}

// add counts one op of the chunk and files its release, holding or read.
func (ch *chunkHistory) add(lp leasePair, counts *ChunkCounts) (history.Problem, bool) {
	countPair(lp.p, counts)
	inv := lp.p.Invoke
	if inv.F == FRelease {
		// The token a release sent is in its invoke, whatever its outcome.
		ch.releases = append(ch.releases, leaseRelease{server: lp.v.Server, token: tokenOf(lp.req.Token), timeNs: inv.Time, index: inv.Index})
	}
	if !lp.ok {
		return history.Problem{}, false // info and fail ops create no holding and no read
	}
	return collectOK(lp.p, lp.v, ch)
}

func countPair(p history.Pair, c *ChunkCounts) {
	c.Invoked++
	switch {
	case p.Completion == nil:
		c.Open++
	case p.Completion.Type == history.OK:
		c.OK++
	case p.Completion.Type == history.Fail:
		c.Fail++
	default:
		c.Info++
	}
}

// collectOK turns an ok grant, renew or check into a holding or a read;
// v is the decoded completion value.
func collectOK(p history.Pair, v LeaseValue, ch *chunkHistory) (history.Problem, bool) {
	done := *p.Completion
	node := answeringNode(p)
	read := leaseRead{startNs: p.Invoke.Time, endNs: done.Time, invoke: p.Invoke.Index, done: done.Index, f: done.F, node: node}
	hold := Holding{Chunk: v.Chunk, Server: v.Server, F: done.F, Node: node, StartNs: done.Time,
		InvokeNs: p.Invoke.Time, InvokeIndex: p.Invoke.Index, CompletionIndex: done.Index}
	missing := func(field string) (history.Problem, bool) {
		return history.Problem{Index: done.Index, Text: fmt.Sprintf("ok %s value %s lacks %s", done.F, done.Value, field)}, true
	}
	switch done.F {
	case FGrant:
		if v.Primary == nil || v.ExpiresInMs == nil {
			return missing("primary or expires_in_ms")
		}
		if *v.Primary != v.Server {
			read.holder = *v.Primary
			ch.reads = append(ch.reads, read)
			return history.Problem{}, false
		}
		hold.EndNs = workloads.EndAfterMs(p.Invoke.Time, *v.ExpiresInMs)
		ch.addHolding(hold, v.Token)
		ch.checkTold(hold, *v.ExpiresInMs, v.LeaseMs)
	case FRenew:
		if v.NewExpiresInMs == nil {
			return missing("new_expires_in_ms")
		}
		hold.EndNs = workloads.EndAfterMs(p.Invoke.Time, *v.NewExpiresInMs)
		ch.addHolding(hold, v.Token)
		ch.checkTold(hold, *v.NewExpiresInMs, v.LeaseMs)
	case FCheck:
		if v.Expired == nil {
			return missing("expired")
		}
		if !*v.Expired && v.Primary != nil {
			read.holder = *v.Primary
		}
		ch.reads = append(ch.reads, read)
	}
	return history.Problem{}, false
}

// tokenOf is a token as the checker uses it: 0 for none or for a value
// no lease may carry.
func tokenOf(t *int64) int64 {
	if t == nil || !validToken(*t) {
		return 0
	}
	return *t
}

// addHolding files an ok grant to itself or ok renew with the token its
// reply carried; one without a valid token is a token-missing violation.
func (ch *chunkHistory) addHolding(h Holding, token *int64) {
	h.Token = tokenOf(token)
	ch.holdings = append(ch.holdings, h)
	if h.Token != 0 {
		return
	}
	got := "no token"
	if token != nil {
		got = fmt.Sprintf("token %d", *token)
	}
	ch.missing = append(ch.missing, Violation{Kind: TokenMissing, Chunk: h.Chunk, Servers: []string{h.Server},
		Ops: []int{h.InvokeIndex, h.CompletionIndex}, Nodes: []string{h.Node}, StartNs: h.InvokeNs, EndNs: h.StartNs,
		Text: fmt.Sprintf("%s %s (%s) of %s was ok with %s; every ok grant or renew must carry an integer token, "+
			"0 < token < 2^53, or storage cannot refuse that server's writes once it is deposed",
			h.Server, h.F, h.opsText(), h.Chunk, got)})
}

// checkTold files an expires-out-of-range violation when holding h was
// built from a remaining time toldMs no node could honestly give: below
// 0, at or beyond 2^53, or longer than the lease_ms the request asked for
// (askedMs, nil when the request named none). The holding itself is kept
// as told (endAfterMs saturates), so an absurd time makes it longer, and
// its overlaps are reported too, never hidden.
func (ch *chunkHistory) checkTold(h Holding, toldMs int64, askedMs *int64) {
	bound := ""
	switch {
	case toldMs < 0 || toldMs >= maxToken:
		bound = "a whole number of ms in 0..2^53"
	case askedMs != nil && toldMs > *askedMs:
		bound = fmt.Sprintf("at most the %d ms the request asked for (the proposer's timer starts before it sends propose)", *askedMs)
	default:
		return
	}
	ch.missing = append(ch.missing, Violation{Kind: ExpiresOutOfRange, Chunk: h.Chunk, Servers: []string{h.Server},
		Ops: []int{h.InvokeIndex, h.CompletionIndex}, Nodes: []string{h.Node}, StartNs: h.InvokeNs, EndNs: h.StartNs,
		Text: fmt.Sprintf("%s %s (%s) of %s was ok with %d ms remaining; a remaining time must be %s",
			h.Server, h.F, h.opsText(), h.Chunk, toldMs, bound)})
}

// checkChunk cuts the chunk's holdings at releases and finds violations:
// two-primaries, then reads, then fencing.
func checkChunk(chunk string, ch *chunkHistory) ([]Holding, []Violation) {
	holdings := cutHoldings(ch.holdings, ch.releases)
	violations := overlaps(chunk, holdings)
	violations = append(violations, judgeReads(chunk, ch.reads, holdings)...)
	violations = append(violations, ch.missing...)
	violations = append(violations, tokensOfTwoServers(chunk, ch.holdings)...)
	return holdings, append(violations, tokenOrder(chunk, ch.holdings)...)
}

// cutHoldings ends each holding at the invoke of the first release by the
// same server carrying a token >= the holding's token, invoked at or after
// the holding op's invoke (whatever that release's outcome): a release
// gives back every instance of its server up to its token (rule 6 of
// package lease). It drops the holdings left empty and sorts the rest by start.
// A release of another server, with a smaller token, or with none, cuts
// nothing.
func cutHoldings(raw []Holding, releases []leaseRelease) []Holding {
	byServer := map[string][]leaseRelease{}
	for _, r := range releases {
		if r.token != 0 {
			byServer[r.server] = append(byServer[r.server], r)
		}
	}
	out := make([]Holding, 0, len(raw))
	order := make([]int, len(raw)) // holdings by server, latest invoke first
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(raw[a].Server, raw[b].Server), cmp.Compare(raw[b].InvokeNs, raw[a].InvokeNs))
	})
	for i := 0; i < len(order); {
		j := i
		for j < len(order) && raw[order[j]].Server == raw[order[i]].Server {
			j++
		}
		out = cutServer(out, raw, order[i:j], byServer[raw[order[i]].Server])
		i = j
	}
	slices.SortStableFunc(out, byStart)
	return out
}

// cutServer cuts one server's holdings (idx, latest invoke first) at its
// releases, appending the non-empty ones to out. It sweeps back in time,
// keeping the releases invoked at or after the current holding's invoke
// as a stack whose tokens and invoke times both grow from top to bottom
// (a release that is later and carries no larger token than another can
// never be the first to cut anything), so the first release that cuts a
// holding is found by a binary search: O((h + r) log r).
func cutServer(out []Holding, raw []Holding, idx []int, releases []leaseRelease) []Holding {
	slices.SortStableFunc(releases, func(a, b leaseRelease) int { return cmp.Compare(b.timeNs, a.timeNs) })
	var stack []leaseRelease // stack[len-1] is the top: the earliest
	next := 0
	for _, k := range idx {
		h := raw[k]
		for ; next < len(releases) && releases[next].timeNs >= h.InvokeNs; next++ {
			r := releases[next]
			for len(stack) > 0 && stack[len(stack)-1].token <= r.token {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, r)
		}
		// stack's tokens fall from bottom to top: those >= h.Token are a prefix.
		if j := sort.Search(len(stack), func(i int) bool { return stack[i].token < h.Token }) - 1; j >= 0 && stack[j].timeNs < h.EndNs {
			h.EndNs = stack[j].timeNs
			cut := stack[j].index
			h.CutByIndex = &cut
		}
		if h.StartNs < h.EndNs {
			out = append(out, h)
		}
	}
	return out
}

// byStart orders holdings by start, then by invoke index.
func byStart(a, b Holding) int {
	return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.InvokeIndex, b.InvokeIndex))
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
				Nodes:   []string{a.Node, b.Node},
				StartNs: b.StartNs, EndNs: end,
				Text: fmt.Sprintf("%s (%s %s) and %s (%s %s) both held %s for %s",
					a.Server, a.F, a.opsText(), b.Server, b.F, b.opsText(), chunk, formatSpan(end-b.StartNs)),
			})
		}
	}
	return out
}

// opsText names an op's invoke and completion indices and the node that
// answered it: "ops 6-7 via n0" ("ops 6-7" when the history names no
// node), so a reader can find it in the history and in that node's log.
func opsText(invoke, done int, node string) string {
	if node == "" {
		return fmt.Sprintf("ops %d-%d", invoke, done)
	}
	return fmt.Sprintf("ops %d-%d via %s", invoke, done, node)
}

// opsText names the grant or renew that made h (opsText).
func (h Holding) opsText() string { return opsText(h.InvokeIndex, h.CompletionIndex, h.Node) }

// answeringNode is the node that answered an op: its completion's node,
// else its invoke's; "" when the history names none.
func answeringNode(p history.Pair) string {
	if p.Completion != nil && p.Completion.Node != "" {
		return p.Completion.Node
	}
	return p.Invoke.Node
}

// formatSpan writes a duration in milliseconds, exact down to the
// nanosecond, so that an overlap of 1 ns does not read as 0.000 ms.
func formatSpan(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e6, 'f', -1, 64) + " ms"
}

// topByServer keeps, over the entries added, the largest value and the
// largest value of any server other than that one's, so that "the largest
// value of a server other than S" is answered in O(1) for any S. Ties keep
// the entry added first.
type topByServer struct {
	first, second ranked
}

// ranked is one entry: a value (an end time, a token) of a holding.
type ranked struct {
	value int64
	h     *Holding
}

func (t *topByServer) add(value int64, h *Holding) {
	e := ranked{value, h}
	switch {
	case t.first.h == nil:
		t.first = e
	case h.Server == t.first.h.Server:
		if value > t.first.value {
			t.first = e
		}
	case value > t.first.value:
		t.second, t.first = t.first, e
	case t.second.h == nil || value > t.second.value:
		t.second = e
	}
}

// otherThan returns the entry with the largest value among servers other
// than server.
func (t *topByServer) otherThan(server string) (ranked, bool) {
	if t.first.h != nil && t.first.h.Server != server {
		return t.first, true
	}
	return t.second, t.second.h != nil
}

// judgeReads finds, for each read, a holding that covers the whole read,
// [start, end] inside [StartNs, EndNs), and contradicts what the read
// reported. It sweeps reads and holdings by start: a holding that started
// by the read's invoke covers it when it ends after the read completed,
// so only the latest end of a server other than the one reported counts.
func judgeReads(chunk string, reads []leaseRead, holdings []Holding) []Violation {
	slices.SortStableFunc(reads, func(a, b leaseRead) int { return cmp.Compare(a.startNs, b.startNs) })
	var out []Violation
	var top topByServer
	next := 0
	for _, r := range reads {
		for ; next < len(holdings) && holdings[next].StartNs <= r.startNs; next++ {
			top.add(holdings[next].EndNs, &holdings[next])
		}
		if e, ok := top.otherThan(r.holder); ok && e.value > r.endNs {
			out = append(out, readViolation(chunk, r, *e.h))
		}
	}
	return out
}

// readViolation reports read r contradicted by holding h, which covers it.
func readViolation(chunk string, r leaseRead, h Holding) Violation {
	v := Violation{Chunk: chunk, Servers: []string{r.holder, h.Server},
		Ops: []int{r.invoke, r.done, h.InvokeIndex, h.CompletionIndex}, Nodes: []string{r.node, h.Node},
		StartNs: r.startNs, EndNs: r.endNs}
	read := opsText(r.invoke, r.done, r.node)
	if r.holder == "" {
		v.Kind = ReadNoHolder
		v.Text = fmt.Sprintf("%s (%s) reported no holder of %s while %s held it throughout (%s %s)",
			r.f, read, chunk, h.Server, h.F, h.opsText())
	} else {
		v.Kind = ReadWrongHolder
		v.Text = fmt.Sprintf("%s (%s) reported %s as holder of %s while %s held it throughout (%s %s)",
			r.f, read, r.holder, chunk, h.Server, h.F, h.opsText())
	}
	return v
}

// tokensOfTwoServers reports every token value that ok grants or renews of
// two different servers carried: once per token and other server, naming
// the first op of each. Ops are grouped by sorting on the token.
func tokensOfTwoServers(chunk string, ops []Holding) []Violation {
	byToken := tokened(ops)
	slices.SortStableFunc(byToken, func(a, b *Holding) int { return cmp.Compare(a.Token, b.Token) })
	var out []Violation
	for i := 0; i < len(byToken); {
		j := i + 1
		for j < len(byToken) && byToken[j].Token == byToken[i].Token {
			j++
		}
		seen := []string{byToken[i].Server}
		for _, b := range byToken[i+1 : j] {
			if slices.Contains(seen, b.Server) {
				continue
			}
			seen = append(seen, b.Server)
			a := byToken[i]
			out = append(out, tokenViolation(TokenTwoServers, chunk, a, b, fmt.Sprintf(
				"token %d names leases of two servers on %s: %s %s (%s) and %s %s (%s); "+
					"storage fencing by token cannot tell their writes apart",
				a.Token, chunk, a.Server, a.F, a.opsText(), b.Server, b.F, b.opsText())))
		}
		i = j
	}
	return out
}

// tokenOrder reports every ok grant or renew invoked after another ok
// grant or renew completed whose token is not larger: another server's
// op (storage must refuse the deposed holder) or the same server's (a
// renew or re-grant gets a new, larger token). One sweep in invoke order,
// adding ops as they complete before the current invoke, keeps the
// largest token at hand.
func tokenOrder(chunk string, ops []Holding) []Violation {
	byInvoke := tokened(ops)
	byDone := slices.Clone(byInvoke)
	slices.SortStableFunc(byInvoke, func(a, b *Holding) int { return cmp.Compare(a.InvokeNs, b.InvokeNs) })
	slices.SortStableFunc(byDone, func(a, b *Holding) int { return cmp.Compare(a.StartNs, b.StartNs) })
	var out []Violation
	var top topByServer
	next := 0
	for _, b := range byInvoke {
		for ; next < len(byDone) && byDone[next].StartNs < b.InvokeNs; next++ {
			top.add(byDone[next].Token, byDone[next])
		}
		e := top.first
		if e.h == nil || b.Token > e.value {
			continue
		}
		a := e.h
		out = append(out, tokenViolation(TokenOrder, chunk, a, b, fmt.Sprintf(
			"%s %s (%s) of %s got token %d, but %s %s (%s) had completed with token %d %s before it was invoked; "+
				"a token must exceed every token of a lease completed before the request, "+
				"or storage that saw %d refuses the holder's writes",
			b.Server, b.F, b.opsText(), chunk, b.Token, a.Server, a.F, a.opsText(), a.Token,
			formatSpan(b.InvokeNs-a.StartNs), a.Token)))
	}
	return out
}

// tokened points at the ops that carry a valid token (the others are
// token-missing already).
func tokened(ops []Holding) []*Holding {
	out := make([]*Holding, 0, len(ops))
	for i := range ops {
		if ops[i].Token != 0 {
			out = append(out, &ops[i])
		}
	}
	return out
}

// tokenViolation is a fencing violation between op a and the later op b.
func tokenViolation(kind, chunk string, a, b *Holding, text string) Violation {
	return Violation{Kind: kind, Chunk: chunk, Servers: []string{a.Server, b.Server},
		Ops:     []int{a.InvokeIndex, a.CompletionIndex, b.InvokeIndex, b.CompletionIndex},
		Nodes:   []string{a.Node, b.Node},
		StartNs: min(a.InvokeNs, b.InvokeNs), EndNs: max(a.StartNs, b.StartNs), Text: text}
}
