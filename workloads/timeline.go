package workloads

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LeaseTimelineFile is the report file the lease workload writes.
const LeaseTimelineFile = "lease-timeline.html"

// Timeline geometry, in SVG pixels.
const (
	tlLabelW  = 80 // lane labels on the left
	tlPlotW   = 1100
	tlAxisH   = 36 // time axis on top
	tlLaneH   = 24
	tlLaneGap = 6
	tlLegendH = 28
)

// serverPalette colours servers in order; it repeats past ten servers.
var serverPalette = []string{"#4C78A8", "#59A14F", "#F28E2B", "#B07AA1", "#76B7B2",
	"#EDC948", "#9C755F", "#FF9DA7", "#BAB0AC", "#2F4B7C"}

// WriteLeaseTimelineFile writes LeaseTimelineFile into dir. It uses the
// checker's holdings when res carries a LeaseResult and checks the history
// itself otherwise.
func WriteLeaseTimelineFile(dir string, history []Op, res Result) error {
	lr, ok := res.Details.(LeaseResult)
	if p, isPtr := res.Details.(*LeaseResult); isPtr && p != nil {
		lr, ok = *p, true
	}
	if !ok {
		lr = CheckLease(history)
	}
	f, err := os.Create(filepath.Join(dir, LeaseTimelineFile))
	if err != nil {
		return fmt.Errorf("lease timeline: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = WriteLeaseTimeline(bw, history, lr)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// timeline holds what the picture needs and how time maps to x.
type timeline struct {
	b       strings.Builder
	endNs   int64 // the right edge of the plot
	chunks  []string
	lane    map[string]int
	colours map[string]string
}

// WriteLeaseTimeline writes a self-contained HTML page with an inline SVG:
// one lane per chunk, a bar per holding coloured by server, partitions
// shaded across every lane, violations marked in red; hovering any mark
// shows its details (an SVG <title>). The page loads nothing from the
// network and is well-formed XML.
func WriteLeaseTimeline(w io.Writer, history []Op, res LeaseResult) error {
	t := newTimeline(history, res)
	height := tlAxisH + len(t.chunks)*(tlLaneH+tlLaneGap) + tlLegendH
	fmt.Fprintf(&t.b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head><meta charset=\"utf-8\"/>"+
		"<title>lease timeline</title>\n<style>body{font-family:sans-serif;margin:16px}"+
		"svg text{font-size:11px} rect.holding:hover,rect.violation:hover{stroke:#000;stroke-width:1.5}</style></head>\n<body>\n")
	fmt.Fprintf(&t.b, "<h1>Lease timeline: %s</h1>\n<p>%d chunks, %d holdings, %d violations. Hover a bar for details.</p>\n",
		verdict(res), len(t.chunks), len(res.Holdings), len(res.Violations))
	fmt.Fprintf(&t.b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		tlLabelW+tlPlotW+20, height, tlLabelW+tlPlotW+20, height)
	t.axis(height - tlLegendH)
	t.partitions(Partitions(history), height-tlLegendH)
	t.lanes(res)
	t.legend(height - tlLegendH + 8)
	t.b.WriteString("</svg>\n</body>\n</html>\n")
	_, err := io.WriteString(w, t.b.String())
	return err
}

func verdict(res LeaseResult) string {
	if res.Valid {
		return "valid"
	}
	return "INVALID"
}

func newTimeline(history []Op, res LeaseResult) *timeline {
	t := &timeline{lane: map[string]int{}, colours: map[string]string{}, endNs: 1}
	for _, op := range history {
		t.endNs = max(t.endNs, op.Time)
	}
	var servers []string
	for _, h := range res.Holdings {
		t.endNs = max(t.endNs, h.EndNs)
		if !slices.Contains(servers, h.Server) {
			servers = append(servers, h.Server)
		}
	}
	for c := range res.Chunks {
		t.chunks = append(t.chunks, c)
	}
	for _, v := range res.Violations {
		if !slices.Contains(t.chunks, v.Chunk) {
			t.chunks = append(t.chunks, v.Chunk)
		}
	}
	slices.SortFunc(t.chunks, compareNatural)
	for i, c := range t.chunks {
		t.lane[c] = i
	}
	slices.SortFunc(servers, compareNatural)
	for i, s := range servers {
		t.colours[s] = serverPalette[i%len(serverPalette)]
	}
	return t
}

// x maps nanoseconds to a pixel column, clamped to the plot.
func (t *timeline) x(ns int64) float64 {
	ns = min(max(ns, 0), t.endNs)
	return tlLabelW + float64(ns)/float64(t.endNs)*tlPlotW
}

func laneY(i int) int { return tlAxisH + i*(tlLaneH+tlLaneGap) }

// axis draws the time axis with about ten round ticks, in seconds.
func (t *timeline) axis(bottom int) {
	stepS := niceStep(float64(t.endNs) / 1e9 / 10)
	t.b.WriteString("<g class=\"axis\">\n")
	for s := 0.0; s*1e9 <= float64(t.endNs); s += stepS {
		x := t.x(int64(s * 1e9))
		fmt.Fprintf(&t.b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"+
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gs</text>\n", x, tlAxisH-6, x, bottom, x, tlAxisH-10, s)
	}
	t.b.WriteString("</g>\n")
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
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

// partitions shades each partition across all lanes.
func (t *timeline) partitions(parts []Interval, bottom int) {
	t.b.WriteString("<g class=\"partitions\">\n")
	for _, p := range parts {
		x0, x1 := t.x(p.StartNs), t.x(p.EndNs)
		end := "the end (not healed in the history)"
		if p.EndNs != math.MaxInt64 {
			end = seconds(p.EndNs)
		}
		fmt.Fprintf(&t.b, "<rect class=\"partition\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#E9DCA0\" opacity=\"0.6\">"+
			"<title>partition from %s to %s</title></rect>\n", x0, tlAxisH, max(x1-x0, 1), bottom-tlAxisH, seconds(p.StartNs), esc(end))
	}
	t.b.WriteString("</g>\n")
}

// lanes draws one lane per chunk with its holdings and violations.
func (t *timeline) lanes(res LeaseResult) {
	for i, c := range t.chunks {
		y := laneY(i)
		fmt.Fprintf(&t.b, "<g class=\"lane\" data-chunk=\"%s\">\n<text x=\"4\" y=\"%d\">%s</text>"+
			"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#ccc\"/>\n",
			esc(c), y+tlLaneH/2+4, esc(c), tlLabelW, y, tlPlotW, tlLaneH)
		for _, h := range res.Holdings {
			if h.Chunk == c {
				t.holding(h, y)
			}
		}
		for _, v := range res.Violations {
			if v.Chunk == c {
				t.violation(v, y)
			}
		}
		t.b.WriteString("</g>\n")
	}
}

func (t *timeline) holding(h Holding, y int) {
	x0, x1 := t.x(h.StartNs), t.x(h.EndNs)
	cut := ""
	if h.CutByIndex != nil {
		cut = fmt.Sprintf(", cut by release op %d", *h.CutByIndex)
	}
	title := fmt.Sprintf("%s holds %s [%s, %s) by %s ops %d-%d%s", h.Server, h.Chunk,
		seconds(h.StartNs), seconds(h.EndNs), h.F, h.InvokeIndex, h.CompletionIndex, cut)
	fmt.Fprintf(&t.b, "<rect class=\"holding\" data-server=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" opacity=\"0.85\">"+
		"<title>%s</title></rect>\n", esc(h.Server), x0, y+3, max(x1-x0, 1), tlLaneH-6, t.colours[h.Server], esc(title))
}

// violation marks the violating interval in red over the whole lane, with
// a triangle above it so that even a zero-length one stands out.
func (t *timeline) violation(v Violation, y int) {
	x0, x1 := t.x(v.StartNs), t.x(v.EndNs)
	title := fmt.Sprintf("%s on %s, servers %s, ops %v, [%s, %s]: %s", v.Kind, v.Chunk,
		strings.Join(v.Servers, "/"), v.Ops, seconds(v.StartNs), seconds(v.EndNs), v.Text)
	fmt.Fprintf(&t.b, "<rect class=\"violation\" data-kind=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "+
		"fill=\"#E00000\" fill-opacity=\"0.35\" stroke=\"#E00000\" stroke-width=\"1\"><title>%s</title></rect>\n",
		esc(v.Kind), x0, y, max(x1-x0, 2), tlLaneH, esc(title))
	fmt.Fprintf(&t.b, "<path class=\"violation-mark\" d=\"M%.1f %d l-4 -6 h8 z\" fill=\"#E00000\"><title>%s</title></path>\n",
		x0, y, esc(title))
}

// legend shows each server's colour.
func (t *timeline) legend(y int) {
	servers := make([]string, 0, len(t.colours))
	for s := range t.colours {
		servers = append(servers, s)
	}
	slices.SortFunc(servers, compareNatural)
	t.b.WriteString("<g class=\"legend\">\n")
	x := tlLabelW
	for _, s := range servers {
		fmt.Fprintf(&t.b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			x, y, t.colours[s], x+16, y+10, esc(s))
		x += 70
	}
	fmt.Fprintf(&t.b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#E9DCA0\"/><text x=\"%d\" y=\"%d\">partition</text>\n",
		x, y, x+16, y+10)
	fmt.Fprintf(&t.b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#E00000\"/><text x=\"%d\" y=\"%d\">violation</text>\n",
		x+90, y, x+106, y+10)
	t.b.WriteString("</g>\n")
}

func seconds(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }

func esc(s string) string { return html.EscapeString(s) }
