package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/lease"
)

// LeaseTimelineFile is the lease workload's timeline page.
const LeaseTimelineFile = "lease-timeline.html"

// serverPalette colours servers in natural order; it repeats past twenty.
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
	return writeTimelineFile(dir, in, lease.DefaultTimelineLimits)
}

// writeTimelineFile writes the page for in into dir.
func writeTimelineFile(dir string, in lease.TimelineInput, lim lease.TimelineLimits) error {
	f, err := os.Create(filepath.Join(dir, LeaseTimelineFile))
	if err != nil {
		return fmt.Errorf("lease timeline: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = WriteTimelinePage(bw, in, lim)
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
// violations in red, and a time axis at the top and bottom that stays on
// screen while scrolling. Positions are percentages, so the chart follows
// the window's width. Hovering any mark shows its details (tokens too).
func WriteTimelinePage(w io.Writer, in lease.TimelineInput, lim lease.TimelineLimits) error {
	t := newTimeline(in, lim)
	t.head()
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
	t.axis("bottom")
	t.b.WriteString("</div>\n</body>\n</html>\n")
	_, err := io.WriteString(w, t.b.String())
	return err
}

// timeline is what the page shows and how time maps to a percentage.
type timeline struct {
	b      strings.Builder
	in     lease.TimelineInput
	faults []workloads.Fault
	endNs  int64 // the right edge
	laneID map[string]string
	colour map[string]int // server -> palette index
	lim    lease.TimelineLimits
}

func newTimeline(in lease.TimelineInput, lim lease.TimelineLimits) *timeline {
	t := &timeline{in: in, faults: in.Faults, endNs: max(in.EndNs, 1), laneID: map[string]string{}, colour: map[string]int{}, lim: lim}
	for i, s := range in.Servers {
		t.colour[s] = i % len(serverPalette)
	}
	for i, l := range in.Lanes {
		t.laneID[l.Chunk] = fmt.Sprintf("lane-%d", i)
	}
	return t
}

// pct maps nanoseconds to a percentage of the track, clamped.
func (t *timeline) pct(ns int64) float64 {
	return float64(min(max(ns, 0), t.endNs)) / float64(t.endNs) * 100
}

// span writes the left and width of [from, to) as CSS.
func (t *timeline) span(from, to int64) string {
	l := t.pct(from)
	return fmt.Sprintf("left:%.3f%%;width:%.3f%%", l, max(t.pct(to)-l, 0))
}

const timelineCSS = `body{font:13px/1.4 sans-serif;margin:0 12px 24px;color:#222}
h1{font-size:20px;margin:12px 0 4px}
.verdict-valid{color:#1a7f37}.verdict-invalid{color:#c00}
.summary p{margin:4px 0}.summary ol{margin:4px 0;padding-left:34px;max-height:10.5em;overflow:auto;border:1px solid #eee}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:8px 0}
.legend span{display:inline-flex;align-items:center;gap:4px}
.legend i{display:inline-block;width:12px;height:12px}
.chart{position:relative}
.row{display:flex;height:22px;margin:2px 0}
.label{flex:none;width:120px;padding-right:6px;text-align:right;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.track{position:relative;flex:1;min-width:0}
.lane .track{background:#f4f4f4;border:1px solid #ddd}
.lane.violating .label{color:#c00;font-weight:bold}
.axis{position:sticky;z-index:4;background:#fff;height:20px;margin:0}
.axis.top{top:0;border-bottom:1px solid #888}.axis.bottom{bottom:0;border-top:1px solid #888}
.tick{position:absolute;top:2px;transform:translateX(-50%);font-size:11px;white-space:nowrap}
.tick:first-child{transform:none}
.lanes{position:relative}
.shades{position:absolute;top:0;bottom:0;left:126px;right:0;pointer-events:none;z-index:1}
.shade{position:absolute;top:0;bottom:0;opacity:.28}
.grid{position:absolute;top:0;bottom:0;border-left:1px solid #e2e2e2}
.h{position:absolute;top:3px;bottom:3px;min-width:1px;opacity:.9;z-index:2}
.h:hover,.f:hover{outline:2px solid #000}
.v{position:absolute;top:0;bottom:0;min-width:3px;background:rgba(224,0,0,.35);border:1px solid #e00;z-index:3}
.f{position:absolute;top:2px;bottom:2px;overflow:hidden;white-space:nowrap;font-size:11px;padding:0 2px;box-sizing:border-box}
.rest .label{width:auto;text-align:left;color:#555}
`

func (t *timeline) head() {
	fmt.Fprintf(&t.b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head><meta charset=\"utf-8\"/>"+
		"<meta name=\"viewport\" content=\"width=device-width\"/><title>lease timeline: %s</title>\n<style>\n%s", t.verdictWord(), timelineCSS)
	for i, c := range serverPalette {
		fmt.Fprintf(&t.b, ".s%d{background:%s}", i, c)
	}
	for _, k := range workloads.FaultKinds {
		fmt.Fprintf(&t.b, ".k-%s{background:%s}", k, faultColours[k])
	}
	t.b.WriteString("\n</style></head>\n<body>\n")
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
	fmt.Fprintf(&t.b, "<p>%s of history; %d chunks, %d holdings by %d servers, %d violations, %d history problems; %s.</p>\n",
		seconds(t.endNs), t.in.ChunkCount, t.in.HoldingCount, len(t.in.Servers), t.in.ViolationCount, t.in.ProblemCount, t.faultCounts())
	fmt.Fprintf(&t.b, "<p>Lanes: %d with violations, then the %d busiest other chunks (most ops)", t.violatingLanes(), len(t.in.Lanes)-t.violatingLanes())
	if t.in.Rest.Chunks > 0 {
		fmt.Fprintf(&t.b, "; the other %d chunks are summed up in one line at the bottom", t.in.Rest.Chunks)
	}
	t.b.WriteString(". Hover a bar for its details; a shaded band is a fault in force.</p>\n")
	t.findings()
	t.b.WriteString("</div>\n")
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

func (t *timeline) faultCounts() string {
	if len(t.faults) == 0 {
		return "no faults"
	}
	var parts []string
	for _, k := range workloads.FaultKinds {
		n := 0
		for _, f := range t.faults {
			if f.Kind == k {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s periods", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

// findings lists the first violations and history problems.
func (t *timeline) findings() {
	if t.in.ViolationCount > 0 {
		fmt.Fprintf(&t.b, "<p>Violations, earliest first:</p>\n<ol class=\"violations\">\n")
		for i, v := range t.in.Earliest {
			if i == t.lim.ListedFindings {
				break
			}
			link := esc(v.Chunk)
			if id, ok := t.laneID[v.Chunk]; ok {
				link = fmt.Sprintf("<a href=\"#%s\">%s</a>", id, esc(v.Chunk))
			}
			fmt.Fprintf(&t.b, "<li><b>%s</b> on %s at %s: %s</li>\n", esc(v.Kind), link, seconds(v.StartNs), esc(v.Text))
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

// legend names each server's colour, the shade of each fault kind that
// occurred, and the violation mark.
func (t *timeline) legend() {
	t.b.WriteString("<div class=\"legend\">\n")
	for _, s := range t.in.Servers {
		fmt.Fprintf(&t.b, "<span><i class=\"s%d\"></i>%s</span>", t.colour[s], esc(s))
	}
	for _, k := range workloads.FaultKinds {
		if slices.ContainsFunc(t.faults, func(f workloads.Fault) bool { return f.Kind == k }) {
			fmt.Fprintf(&t.b, "<span><i class=\"k-%s\"></i>%s</span>", k, k)
		}
	}
	t.b.WriteString("<span><i style=\"background:rgba(224,0,0,.35);border:1px solid #e00\"></i>violation</span>\n</div>\n")
}

// axis draws about ten round ticks, in seconds; it sticks to the top or
// the bottom of the window while the lanes scroll.
func (t *timeline) axis(where string) {
	fmt.Fprintf(&t.b, "<div class=\"row axis %s\"><span class=\"label\">time</span><div class=\"track\">", where)
	for _, s := range t.ticks() {
		fmt.Fprintf(&t.b, "<span class=\"tick\" style=\"left:%.3f%%\">%gs</span>", t.pct(int64(s*1e9)), s)
	}
	t.b.WriteString("</div></div>\n")
}

func (t *timeline) ticks() []float64 {
	step := NiceStep(float64(t.endNs) / 1e9 / 10)
	var out []float64
	for i := 0; float64(i)*step*1e9 <= float64(t.endNs); i++ {
		out = append(out, math.Round(float64(i)*step*1e6)/1e6)
	}
	return out
}

// NiceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func NiceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// faultRows gives each fault kind present its own row, each period a bar
// naming the nodes cut off, killed or paused.
func (t *timeline) faultRows() {
	for _, k := range workloads.FaultKinds {
		var fs []workloads.Fault
		for _, f := range t.faults {
			if f.Kind == k {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			continue
		}
		fmt.Fprintf(&t.b, "<div class=\"row faults\" data-kind=\"%s\"><span class=\"label\">%s</span><div class=\"track\">", k, k)
		for _, f := range fs {
			fmt.Fprintf(&t.b, "<span class=\"f k-%s\" style=\"%s\" title=\"%s\">%s</span>", k, t.span(f.StartNs, f.EndNs),
				esc(t.faultTitle(f)), esc(strings.Join(f.Nodes, " ")))
		}
		t.b.WriteString("</div></div>\n")
	}
}

func (t *timeline) faultTitle(f workloads.Fault) string {
	end := "the end (not healed in the history)"
	if f.EndNs != math.MaxInt64 {
		end = seconds(f.EndNs)
	}
	return fmt.Sprintf("%s from %s to %s: %s", f.Kind, seconds(f.StartNs), end, f.Detail)
}

// shades draws the fault bands and grid lines behind every lane.
func (t *timeline) shades() {
	t.b.WriteString("<div class=\"shades\">")
	for _, s := range t.ticks() {
		fmt.Fprintf(&t.b, "<i class=\"grid\" style=\"left:%.3f%%\"></i>", t.pct(int64(s*1e9)))
	}
	for _, f := range t.faults {
		fmt.Fprintf(&t.b, "<i class=\"shade k-%s\" style=\"%s\"></i>", f.Kind, t.span(f.StartNs, f.EndNs))
	}
	t.b.WriteString("</div>\n")
}

// lane draws one chunk: its holdings (merged when there are too many to
// see) and its violations.
func (t *timeline) lane(i int) {
	l := t.in.Lanes[i]
	c := l.Chunk
	cls := "row lane"
	if len(l.Violations) > 0 {
		cls += " violating"
	}
	cc := l.Counts
	fmt.Fprintf(&t.b, "<div class=\"%s\" id=\"%s\" data-chunk=\"%s\"><span class=\"label\" title=\"%s: %d ops, %d holdings, %d violations\">%s</span><div class=\"track\">",
		cls, t.laneID[c], esc(c), esc(c), cc.Invoked, cc.Holdings, cc.Violations, esc(c))
	for _, m := range mergeHoldings(l.Holdings, l.Tokens, t.endNs, t.lim.MarksPerLane) {
		t.holding(m)
	}
	for _, v := range l.Violations {
		t.violation(v)
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

func (t *timeline) holding(m mark) {
	h := m.first
	var title string
	if m.n == 1 {
		cut := ""
		if h.CutByIndex != nil {
			cut = fmt.Sprintf(", cut by release op %d", *h.CutByIndex)
		}
		title = fmt.Sprintf("%s holds %s [%s, %s) by %s ops %d-%d, token %s%s", h.Server, h.Chunk,
			seconds(h.StartNs), seconds(h.EndNs), h.F, h.InvokeIndex, h.CompletionIndex, m.firstToken, cut)
	} else {
		title = fmt.Sprintf("%s holds %s [%s, %s): %d holdings drawn as one, tokens %s to %s", h.Server, h.Chunk,
			seconds(h.StartNs), seconds(m.last.EndNs), m.n, m.firstToken, m.lastToken)
	}
	fmt.Fprintf(&t.b, "<i class=\"h s%d\" style=\"%s\" title=\"%s\"></i>", t.colour[h.Server], t.span(h.StartNs, m.last.EndNs), esc(title))
}

// violation marks the violating interval in red over the whole lane.
func (t *timeline) violation(v lease.Violation) {
	title := fmt.Sprintf("%s on %s, servers %s, ops %v, [%s, %s]: %s", v.Kind, v.Chunk,
		strings.Join(v.Servers, "/"), v.Ops, seconds(v.StartNs), seconds(v.EndNs), v.Text)
	fmt.Fprintf(&t.b, "<b class=\"v\" data-kind=\"%s\" style=\"%s\" title=\"%s\"></b>", esc(v.Kind), t.span(v.StartNs, v.EndNs), esc(title))
}

// rest sums up the chunks without a lane.
func (t *timeline) restLine() {
	if t.in.Rest.Chunks == 0 {
		return
	}
	fmt.Fprintf(&t.b, "<div class=\"row rest\"><span class=\"label\">%d other chunks (not drawn): %d ops, %d holdings, no violations</span></div>\n",
		t.in.Rest.Chunks, t.in.Rest.Invoked, t.in.Rest.Holdings)
}

func seconds(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }

// FirstViolation is the earliest violation in a lease checker's details
