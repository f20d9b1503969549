package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/lease"
)

// LeaseTimelineFile is the lease workload's timeline page.
const LeaseTimelineFile = "lease-timeline.html"

// serverPalette colours servers (and the master timeline's nodes) in
// natural order; it repeats past twenty.
var serverPalette = []string{"#4C78A8", "#59A14F", "#F28E2B", "#B07AA1", "#76B7B2",
	"#EDC948", "#9C755F", "#FF9DA7", "#BAB0AC", "#2F4B7C",
	"#A0CBE8", "#8CD17D", "#FFBE7D", "#D4A6C8", "#499894",
	"#B6992D", "#D37295", "#79706E", "#86BCB6", "#E15759"}

// faultColours shade each fault kind, on the page and in the plots.
var faultColours = map[string]string{workloads.FaultPartition: "#E9C46A", workloads.FaultKill: "#E76F51", workloads.FaultPause: "#8AB6D6",
	workloads.FaultPacket: "#B5A6D9"}

// FaultColour is the colour pictures shade a fault kind with.
func FaultColour(kind string) string { return faultColours[kind] }

// WriteLeaseTimelineFile writes LeaseTimelineFile into dir, drawn from
// what the lease analysis gathered (lease.TimelineInput).
func WriteLeaseTimelineFile(dir string, in lease.TimelineInput) error {
	return writePageFile(filepath.Join(dir, LeaseTimelineFile), func(w io.Writer) error {
		return WriteTimelinePage(w, in, lease.DefaultTimelineLimits)
	})
}

// writePageFile writes a page into path through a buffer.
func writePageFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteLeaseTimeline writes the timeline page with the default limits.
func WriteLeaseTimeline(w io.Writer, ops []history.Op, res lease.LeaseResult) error {
	return WriteLeaseTimelineLimited(w, ops, res, lease.DefaultTimelineLimits)
}

// WriteLeaseTimelineLimited writes the timeline page of a history held in
// memory and CheckLease's result on it.
func WriteLeaseTimelineLimited(w io.Writer, ops []history.Op, res lease.LeaseResult, lim lease.TimelineLimits) error {
	return WriteTimelinePage(w, lease.TimelineInputOf(ops, res, lim), lim)
}

// WriteTimelinePage writes a self-contained HTML page (no script,
// nothing loaded from the network, well-formed XML): a summary with the
// verdict and links to the violations' lanes, a legend, one lane per
// chosen chunk with a bar per holding coloured by server, partitions,
// kills and pauses shaded across every lane and named in their own rows,
// and a time axis at the top and bottom that stays on screen while
// scrolling. Holdings that overlap in time are drawn side by side, in
// sub-rows of their lane (subRows), so two servers holding a chunk at
// once show as two colours one above the other; a violation is a red
// strip above the lane over its interval, a faint red band behind it,
// and a red outline around the holdings it names. Positions are
// percentages, so the chart follows the window's width. Hovering any
// mark shows its details (servers, op indices, the node that answered
// each op, tokens).
func WriteTimelinePage(w io.Writer, in lease.TimelineInput, lim lease.TimelineLimits) error {
	t := newTimeline(in, lim)
	t.head(fmt.Sprintf("lease timeline: %s", t.verdictWord()), "")
	t.summary()
	t.legend()
	t.b.WriteString("<div class=\"chart\">\n")
	t.axis("top")
	t.faultRows()
	t.b.WriteString("<div class=\"lanes\">\n")
	t.shades()
	for i := range t.in.Lanes {
		t.lane(i)
	}
	t.b.WriteString("</div>\n")
	t.restLine()
	return t.end(w)
}

// timeline is the lease page: the frame, what it shows, and each
// server's colour.
type timeline struct {
	*frame
	in     lease.TimelineInput
	laneID map[string]string
	colour map[string]int // server -> palette index
	lim    lease.TimelineLimits
}

func newTimeline(in lease.TimelineInput, lim lease.TimelineLimits) *timeline {
	t := &timeline{frame: newFrame(in.Faults, in.EndNs), in: in, laneID: map[string]string{}, colour: map[string]int{}, lim: lim}
	for i, s := range in.Servers {
		t.colour[s] = i % len(serverPalette)
	}
	for i, l := range in.Lanes {
		t.laneID[l.Chunk] = fmt.Sprintf("lane-%d", i)
	}
	return t
}

func (t *timeline) verdictWord() string {
	if t.in.Valid {
		return "valid"
	}
	return "INVALID"
}

// summary states the verdict and the figures, lists the first violations
// with links to their lanes, and says what is not drawn.
func (t *timeline) summary() {
	cls := "verdict-valid"
	if !t.in.Valid {
		cls = "verdict-invalid"
	}
	fmt.Fprintf(&t.b, "<div class=\"summary\" id=\"summary\">\n<h1>Lease timeline: <span class=\"%s\">%s</span></h1>\n", cls, t.verdictWord())
	fmt.Fprintf(&t.b, "<p>%s of history; %s, %s by %s, %s, %s; %s.</p>\n",
		seconds(t.endNs), Plural(t.in.ChunkCount, "chunk"), Plural(t.in.HoldingCount, "holding"), Plural(len(t.in.Servers), "server"),
		Plural(t.in.ViolationCount, "violation"), Plural(t.in.ProblemCount, "history problem"), t.faultCounts())
	fmt.Fprintf(&t.b, "<p>Lanes: %s", t.lanesText())
	if t.in.Rest.Chunks > 0 {
		fmt.Fprintf(&t.b, "; the other %s summed up in one line at the bottom", Plural(t.in.Rest.Chunks, "chunk"))
	}
	t.b.WriteString(". Leases that overlap in time are drawn one above the other. Hover a bar for its details; a shaded band is a fault in force.</p>\n")
	t.findings()
	t.b.WriteString("</div>\n")
}

// lanesText says which chunks got a lane.
func (t *timeline) lanesText() string {
	v := t.violatingLanes()
	busy := len(t.in.Lanes) - v
	switch {
	case len(t.in.Lanes) == 0:
		return "none (no chunk had an op)"
	case v > 0 && busy > 0:
		return fmt.Sprintf("%d with violations, then the %s (most ops)", v, busiest(busy, "other chunk"))
	case v > 0:
		return fmt.Sprintf("the %s with violations", Plural(v, "chunk"))
	case t.in.Rest.Chunks == 0:
		return fmt.Sprintf("every chunk (%d)", busy)
	}
	return fmt.Sprintf("the %s (most ops)", busiest(busy, "chunk"))
}

// busiest writes "busiest chunk" or "3 busiest chunks".
func busiest(n int, noun string) string {
	if n == 1 {
		return "busiest " + noun
	}
	return fmt.Sprintf("%d busiest %ss", n, noun)
}

func (t *timeline) violatingLanes() int {
	n := 0
	for _, l := range t.in.Lanes {
		if len(l.Violations) > 0 {
			n++
		}
	}
	return n
}

// findings lists the first violations and history problems.
func (t *timeline) findings() {
	if t.in.ViolationCount > 0 {
		fmt.Fprintf(&t.b, "<p>Violations, earliest first:</p>\n<ol class=\"violations\">\n")
		for i, v := range t.in.Earliest {
			if i == t.lim.ListedFindings {
				break
			}
			link, lane := esc(v.Chunk), ""
			if id, ok := t.laneID[v.Chunk]; ok {
				link, lane = fmt.Sprintf("<a href=\"#%s\">%s</a>", id, esc(v.Chunk)), id
			}
			fmt.Fprintf(&t.b, "<li class=\"violation\" data-kind=\"%s\" data-lane=\"%s\" data-ops=\"%s\"><b>%s</b> on %s at %s: %s</li>\n",
				esc(v.Kind), lane, intsText(v.Ops), esc(v.Kind), link, seconds(v.StartNs), esc(v.Text))
		}
		if shown := min(len(t.in.Earliest), t.lim.ListedFindings); t.in.ViolationCount > shown {
			fmt.Fprintf(&t.b, "<li>... and %d more (%s lists every one)</li>\n", t.in.ViolationCount-shown, esc(t.in.DetailsFile))
		}
		t.b.WriteString("</ol>\n")
	}
	for i, p := range t.in.Problems {
		if i == t.lim.ListedFindings {
			break
		}
		raw, _ := json.Marshal(p) // a plain struct always marshals
		fmt.Fprintf(&t.b, "<p class=\"problem\">History problem: %s</p>\n", esc(string(raw)))
	}
}

// legend names each server's colour, the shade of each fault kind drawn,
// and the violation marks.
func (t *timeline) legend() {
	t.b.WriteString("<div class=\"legend\">\n")
	for _, s := range t.in.Servers {
		fmt.Fprintf(&t.b, "<span><i class=\"s%d\"></i>%s</span>", t.colour[s], esc(s))
	}
	t.faultLegend()
	t.b.WriteString(violationLegend + "</div>\n")
}

// violationLegend explains the violation marks of both timelines.
const violationLegend = `<span><i style="background:#e00;height:4px"></i>violation (the strip above a lane; the holdings it names are outlined in red)</span>` + "\n"

// Lane geometry (pixels): a violation strip on top, then sub-rows of
// holdings.
const (
	laneStripPx  = 5
	subRowPx     = 14 // a 12 px bar and a gap
	maxSubRows   = 6
	laneBottomPx = 3
)

// laneHeight is the height of a lane with rows sub-rows.
func laneHeight(rows int) int { return max(laneStripPx+rows*subRowPx+laneBottomPx, 22) }

// lane draws one chunk: its holdings (merged when there are too many to
// see) in sub-rows, and its violations.
func (t *timeline) lane(i int) {
	l := t.in.Lanes[i]
	c := l.Chunk
	cls := "row lane"
	if len(l.Violations) > 0 {
		cls += " violating"
	}
	marks := mergeHoldings(l.Holdings, l.Tokens, t.endNs, t.lim.MarksPerLane)
	rows, n := subRows(marks, t.endNs, maxSubRows)
	named := map[int]bool{} // invoke indices of the ops the violations name
	for _, v := range l.Violations {
		for k := 0; k < len(v.Ops); k += 2 {
			named[v.Ops[k]] = true
		}
	}
	cc := l.Counts
	fmt.Fprintf(&t.b, "<div class=\"%s\" id=\"%s\" data-chunk=\"%s\" style=\"height:%dpx\"><span class=\"label\" title=\"%s: %s, %s, %s\">%s</span><div class=\"track\">",
		cls, t.laneID[c], esc(c), laneHeight(n), esc(c), Plural(cc.Invoked, "op"), Plural(cc.Holdings, "holding"), Plural(cc.Violations, "violation"), esc(c))
	spans := violationSpans(l.Violations)
	for _, s := range spans {
		fmt.Fprintf(&t.b, "<i class=\"vb\" style=\"%s\"></i>", t.span(s.startNs, s.endNs))
	}
	for k, m := range marks {
		t.holding(m, rows[k], named[m.first.InvokeIndex])
	}
	for _, s := range spans {
		t.violation(s)
	}
	t.b.WriteString("</div></div>\n")
}

// mark is one bar: one holding, or back-to-back holdings of one server,
// with the tokens of the first and the last.
type mark struct {
	first, last           lease.Holding
	firstToken, lastToken string
	n                     int
}

// endNs is where the bar ends.
func (m mark) endNs() int64 { return max(m.first.EndNs, m.last.EndNs) }

// mergeHoldings returns one mark per holding while they fit the budget;
// beyond it, holdings of one server that follow each other with a gap
// under a growing share of the run become one mark.
func mergeHoldings(hs []lease.Holding, tokens []string, endNs int64, budget int) []mark {
	marks := make([]mark, len(hs))
	for i, h := range hs {
		tok := "?"
		if i < len(tokens) {
			tok = tokens[i]
		}
		marks[i] = mark{first: h, last: h, firstToken: tok, lastToken: tok, n: 1}
	}
	for gap := endNs / 2000; len(marks) > budget && gap <= endNs; gap *= 2 {
		marks = mergeMarks(marks, gap)
	}
	return marks
}

func mergeMarks(in []mark, gapNs int64) []mark {
	var out []mark
	open := map[string]int{} // server -> its latest mark in out
	for _, m := range in {
		if i, ok := open[m.first.Server]; ok && m.first.StartNs <= out[i].last.EndNs+gapNs {
			if m.last.EndNs > out[i].last.EndNs {
				out[i].last, out[i].lastToken = m.last, m.lastToken
			}
			out[i].n += m.n
			continue
		}
		open[m.first.Server] = len(out)
		out = append(out, m)
	}
	return out
}

// subRows places marks (by start) in sub-rows so that marks of different
// servers that overlap in time never share one: a mark joins the sub-row
// where its own server's bar still runs (a renewal overlaps the lease it
// extends: one server's leases stay in one row), else the first sub-row
// free at its start, else a new one; past maxRows, the sub-row that
// frees first. A valid lane needs one sub-row; two primaries at once
// need two. It returns each mark's sub-row and the number used.
func subRows(marks []mark, endNs int64, maxRows int) ([]int, int) {
	type rowState struct {
		endNs  int64
		server string
	}
	var rows []rowState
	out := make([]int, len(marks))
	for i, m := range marks {
		start, end := m.first.StartNs, min(m.endNs(), endNs)
		r := slices.IndexFunc(rows, func(s rowState) bool { return s.server == m.first.Server && s.endNs > start })
		if r < 0 {
			r = slices.IndexFunc(rows, func(s rowState) bool { return s.endNs <= start })
		}
		if r < 0 && len(rows) < maxRows {
			rows, r = append(rows, rowState{}), len(rows)
		}
		if r < 0 {
			r = 0
			for k := range rows {
				if rows[k].endNs < rows[r].endNs {
					r = k
				}
			}
		}
		if rows[r].endNs > start { // the row's bar still runs: this one joins it
			rows[r].endNs = max(rows[r].endNs, end)
		} else {
			rows[r].endNs = end
		}
		rows[r].server = m.first.Server
		out[i] = r
	}
	return out, max(len(rows), 1)
}

func (t *timeline) holding(m mark, row int, named bool) {
	h := m.first
	var title string
	if m.n == 1 {
		cut := ""
		if h.CutByIndex != nil {
			cut = fmt.Sprintf(", cut by release op %d", *h.CutByIndex)
		}
		title = fmt.Sprintf("%s holds %s [%s, %s) by %s %s, token %s%s", h.Server, h.Chunk,
			seconds(h.StartNs), seconds(h.EndNs), h.F, opsVia(h.InvokeIndex, h.CompletionIndex, h.Node), m.firstToken, cut)
	} else {
		title = fmt.Sprintf("%s holds %s [%s, %s): %d holdings drawn as one, tokens %s to %s", h.Server, h.Chunk,
			seconds(h.StartNs), seconds(m.endNs()), m.n, m.firstToken, m.lastToken)
	}
	cls := fmt.Sprintf("h s%d", t.colour[h.Server])
	if named {
		cls += " x"
	}
	fmt.Fprintf(&t.b, "<i class=\"%s\" data-server=\"%s\" data-op=\"%d\" data-row=\"%d\" style=\"%s;top:%dpx\" title=\"%s\"></i>",
		cls, esc(h.Server), h.InvokeIndex, row, t.span(h.StartNs, m.endNs()), laneStripPx+row*subRowPx, esc(title))
}

// opsVia names an op's indices and the node that answered it.
func opsVia(invoke, done int, node string) string {
	if node == "" {
		return fmt.Sprintf("ops %d-%d", invoke, done)
	}
	return fmt.Sprintf("ops %d-%d via %s", invoke, done, node)
}

// vspan is a stretch of a lane with violations: the union of their
// intervals where they overlap or touch, how many, their kinds, and the
// first of them.
type vspan struct {
	startNs, endNs int64
	count          int
	kinds          []string
	first          lease.Violation
}

// violationSpans merges a lane's violations into stretches, so a lane
// with a thousand overlaps draws a few marks, each naming its first.
func violationSpans(vs []lease.Violation) []vspan {
	sorted := slices.Clone(vs)
	slices.SortStableFunc(sorted, func(a, b lease.Violation) int { return cmp.Compare(a.StartNs, b.StartNs) })
	var out []vspan
	for _, v := range sorted {
		end := max(v.EndNs, v.StartNs)
		if n := len(out); n > 0 && v.StartNs <= out[n-1].endNs {
			s := &out[n-1]
			s.endNs, s.count = max(s.endNs, end), s.count+1
			if !slices.Contains(s.kinds, v.Kind) {
				s.kinds = append(s.kinds, v.Kind)
			}
			continue
		}
		out = append(out, vspan{startNs: v.StartNs, endNs: end, count: 1, kinds: []string{v.Kind}, first: v})
	}
	return out
}

// violation marks a stretch of violations as a red strip above the lane.
func (t *timeline) violation(s vspan) {
	v := s.first
	title := fmt.Sprintf("%s on %s, servers %s, ops %v, [%s, %s]: %s", v.Kind, v.Chunk,
		strings.Join(v.Servers, "/"), v.Ops, seconds(v.StartNs), seconds(v.EndNs), v.Text)
	if s.count > 1 {
		title = fmt.Sprintf("%d violations (%s) from %s to %s; the first: %s", s.count, strings.Join(s.kinds, ", "),
			seconds(s.startNs), seconds(s.endNs), title)
	}
	fmt.Fprintf(&t.b, "<b class=\"v\" data-kind=\"%s\" data-count=\"%d\" style=\"%s\" title=\"%s\"></b>",
		esc(strings.Join(s.kinds, " ")), s.count, t.span(s.startNs, s.endNs), esc(title))
}

// rest sums up the chunks without a lane.
func (t *timeline) restLine() {
	if t.in.Rest.Chunks == 0 {
		return
	}
	fmt.Fprintf(&t.b, "<div class=\"row rest\"><span class=\"label\">%s (not drawn): %d ops, %d holdings, no violations</span></div>\n",
		Plural(t.in.Rest.Chunks, "other chunk"), t.in.Rest.Invoked, t.in.Rest.Holdings)
}

// intsText writes integers separated by spaces.
func intsText(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, " ")
}
