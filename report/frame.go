package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"chunklease/workloads"
)

// frame is what the lease and master timelines share: a time scale from
// 0 to endNs, mapped to percentages of the track so the chart follows
// the window's width; the faults drawn (DrawnFaults); the time axes, the
// fault rows and the shaded bands behind the lanes.
type frame struct {
	b      strings.Builder
	faults []workloads.Fault // the faults drawn: each hit some node
	empty  map[string]int    // faults that hit no node, by kind: counted, not drawn
	endNs  int64             // the right edge
	labels map[string][]faultLabel
}

func newFrame(faults []workloads.Fault, endNs int64) *frame {
	fr := &frame{endNs: max(endNs, 1), labels: map[string][]faultLabel{}}
	fr.faults, fr.empty = DrawnFaults(faults)
	for _, f := range fr.faults {
		fr.labels[faultKey(f)] = faultLabels(f)
	}
	return fr
}

// DrawnFaults are the faults the pictures draw and the figures count:
// those that hit some node (a partition that cut some node off, a kill
// or a pause of a node that was up). A partition whose grudge cuts
// nobody off (minority-third at 3 nodes) and a kill or pause that found
// no node to act on are left out and counted by kind in empty; the
// history keeps them as they happened.
func DrawnFaults(faults []workloads.Fault) (drawn []workloads.Fault, empty map[string]int) {
	empty = map[string]int{}
	for _, f := range faults {
		if len(f.Nodes) == 0 {
			empty[f.Kind]++
			continue
		}
		drawn = append(drawn, f)
	}
	return drawn, empty
}

// frameCSS is the chart's style: rows of a label and a track, sticky time
// axes, fault bands whose labels choose the longest text that fits the
// band's actual width (container queries: each label is shown only from
// the width it needs, and the band shows the first one shown).
const frameCSS = `body{font:13px/1.4 sans-serif;margin:0 12px 24px;color:#222}
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
.h{position:absolute;height:12px;min-width:1px;opacity:.9;z-index:2}
.h.x{box-shadow:0 0 0 1px #c00}
.h:hover,.f:hover,.v:hover{outline:2px solid #000}
.v{position:absolute;top:0;height:4px;min-width:3px;background:#e00;z-index:3}
.vb{position:absolute;top:0;bottom:0;min-width:3px;background:rgba(224,0,0,.13);z-index:1}
.f{position:absolute;top:2px;bottom:2px;overflow:hidden;font-size:11px;line-height:18px;box-sizing:border-box;container-type:inline-size}
.fl{display:none;white-space:nowrap;font-style:normal;padding:0 2px}
.rest .label{width:auto;text-align:left;color:#555}
`

// head writes the page's head: its title and the style, with the colours
// and the width rules of the fault labels.
func (fr *frame) head(title, extraCSS string) {
	fmt.Fprintf(&fr.b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head><meta charset=\"utf-8\"/>"+
		"<meta name=\"viewport\" content=\"width=device-width\"/><title>%s</title>\n<style>\n%s%s", esc(title), frameCSS, extraCSS)
	for i, c := range serverPalette {
		fmt.Fprintf(&fr.b, ".s%d{background:%s}", i, c)
	}
	for _, k := range workloads.FaultKinds {
		fmt.Fprintf(&fr.b, ".k-%s{background:%s}", k, faultColours[k])
	}
	fr.b.WriteString("\n")
	for _, w := range fr.labelWidths() {
		fmt.Fprintf(&fr.b, "@container (min-width: %dpx){.w%d{display:block}}\n", w, w)
	}
	fr.b.WriteString("</style></head>\n<body>\n")
}

// pct maps nanoseconds to a percentage of the track, clamped.
func (fr *frame) pct(ns int64) float64 {
	return float64(min(max(ns, 0), fr.endNs)) / float64(fr.endNs) * 100
}

// span writes the left and width of [from, to) as CSS.
func (fr *frame) span(from, to int64) string {
	l := fr.pct(from)
	return fmt.Sprintf("left:%.3f%%;width:%.3f%%", l, max(fr.pct(to)-l, 0))
}

// end draws the bottom axis, closes the page and writes it to w.
func (fr *frame) end(w io.Writer) error {
	fr.axis("bottom")
	fr.b.WriteString("</div>\n</body>\n</html>\n")
	_, err := io.WriteString(w, fr.b.String())
	return err
}

// axis draws about ten round ticks, in seconds; it sticks to the top or
// the bottom of the window while the lanes scroll.
func (fr *frame) axis(where string) {
	fmt.Fprintf(&fr.b, "<div class=\"row axis %s\"><span class=\"label\">time</span><div class=\"track\">", where)
	for _, s := range fr.ticks() {
		fmt.Fprintf(&fr.b, "<span class=\"tick\" style=\"left:%.3f%%\">%gs</span>", fr.pct(int64(s*1e9)), s)
	}
	fr.b.WriteString("</div></div>\n")
}

func (fr *frame) ticks() []float64 {
	step := NiceStep(float64(fr.endNs) / 1e9 / 10)
	var out []float64
	for i := 0; float64(i)*step*1e9 <= float64(fr.endNs); i++ {
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

// faultCounts says how many periods of each fault kind are drawn, and
// how many hit no node.
func (fr *frame) faultCounts() string {
	var parts []string
	for _, k := range workloads.FaultKinds {
		n := 0
		for _, f := range fr.faults {
			if f.Kind == k {
				n++
			}
		}
		switch e := fr.empty[k]; {
		case n > 0 && e > 0:
			parts = append(parts, fmt.Sprintf("%s (and %s, not drawn)", Plural(n, k+" period"), EmptyFaults(k, e)))
		case n > 0:
			parts = append(parts, Plural(n, k+" period"))
		case e > 0:
			parts = append(parts, EmptyFaults(k, e)+" (not drawn)")
		}
	}
	if len(parts) == 0 {
		return "no faults"
	}
	return strings.Join(parts, ", ")
}

// EmptyFaults names n faults of a kind that hit no node: "1 partition
// that cut nobody off", "2 pauses that found no node running".
func EmptyFaults(kind string, n int) string {
	what := "found no node running"
	if kind == workloads.FaultPartition {
		what = "cut nobody off"
	}
	if n == 1 {
		return fmt.Sprintf("1 %s that %s", kind, what)
	}
	return fmt.Sprintf("%d %ss that %s", n, kind, what)
}

// faultLegend names the shade of each fault kind drawn.
func (fr *frame) faultLegend() {
	for _, k := range workloads.FaultKinds {
		if slices.ContainsFunc(fr.faults, func(f workloads.Fault) bool { return f.Kind == k }) {
			fmt.Fprintf(&fr.b, "<span><i class=\"k-%s\"></i>%s</span>", k, k)
		}
	}
}

// faultRows gives each fault kind drawn its own row, each period a band
// labelled with what it did (a partition's shape, the nodes killed or
// paused) as far as the band's width allows; the hover title says it all.
func (fr *frame) faultRows() {
	for _, k := range workloads.FaultKinds {
		var fs []workloads.Fault
		for _, f := range fr.faults {
			if f.Kind == k {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			continue
		}
		fmt.Fprintf(&fr.b, "<div class=\"row faults\" data-kind=\"%s\"><span class=\"label\">%s</span><div class=\"track\">", k, k)
		for _, f := range fs {
			fmt.Fprintf(&fr.b, "<span class=\"f k-%s\" style=\"%s\" title=\"%s\">", k, fr.span(f.StartNs, f.EndNs), esc(faultTitle(f)))
			for _, l := range fr.labels[faultKey(f)] {
				fmt.Fprintf(&fr.b, "<i class=\"fl w%d\">%s</i>", l.widthPx, esc(l.text))
			}
			fr.b.WriteString("</span>")
		}
		fr.b.WriteString("</div></div>\n")
	}
}

func faultTitle(f workloads.Fault) string {
	end := "the end (not healed in the history)"
	if f.EndNs != math.MaxInt64 {
		end = seconds(f.EndNs)
	}
	what := f.Detail
	if f.Kind == workloads.FaultPartition {
		what += "; cut off: " + strings.Join(f.Nodes, " ")
	}
	return fmt.Sprintf("%s from %s to %s: %s", f.Kind, seconds(f.StartNs), end, what)
}

// shades draws the fault bands and grid lines behind every lane.
func (fr *frame) shades() {
	fr.b.WriteString("<div class=\"shades\">")
	for _, s := range fr.ticks() {
		fmt.Fprintf(&fr.b, "<i class=\"grid\" style=\"left:%.3f%%\"></i>", fr.pct(int64(s*1e9)))
	}
	for _, f := range fr.faults {
		fmt.Fprintf(&fr.b, "<i class=\"shade k-%s\" style=\"%s\"></i>", f.Kind, fr.span(f.StartNs, f.EndNs))
	}
	fr.b.WriteString("</div>\n")
}

// faultLabel is one text a fault band may show, and the band width it
// needs.
type faultLabel struct {
	text    string
	widthPx int
}

// Fault label widths: an estimate for an 11 px sans-serif font, generous
// (a wide font's digits are 7 px), plus the padding; rounded up to 10 px
// so a few width rules serve every band.
const (
	labelCharPx = 7
	labelPadPx  = 8
)

// faultLabels are the texts a band may show, the most telling first,
// each narrower than the one before: for a
// partition its target and shape ("majority: n0 n1 | n2 n3 n4"), the
// shape alone, the nodes cut off, then how many ("3 cut off"); for a
// kill or pause the nodes it hit, then how many ("4 nodes"). A band
// narrower than the shortest shows none (its title remains).
func faultLabels(f workloads.Fault) []faultLabel {
	nodes := strings.Join(f.Nodes, " ")
	count := ""
	if len(f.Nodes) > 1 {
		count = fmt.Sprintf("%d nodes", len(f.Nodes))
	}
	texts := []string{nodes, count}
	if f.Kind == workloads.FaultPartition {
		_, shape, _ := strings.Cut(f.Detail, ": ")
		if count != "" {
			count = fmt.Sprintf("%d cut off", len(f.Nodes))
		}
		texts = []string{f.Detail, shape, nodes, count}
	}
	var out []faultLabel
	for _, t := range texts {
		w := (len([]rune(t))*labelCharPx + labelPadPx + 9) / 10 * 10
		if t == "" || (len(out) > 0 && w >= out[len(out)-1].widthPx) {
			continue // says less than a label that fits wherever this one does
		}
		out = append(out, faultLabel{t, w})
	}
	return out
}

func faultKey(f workloads.Fault) string { return fmt.Sprintf("%s/%d", f.Kind, f.StartNs) }

// labelWidths are the widths the fault labels need, each once.
func (fr *frame) labelWidths() []int {
	var ws []int
	for _, ls := range fr.labels {
		for _, l := range ls {
			if !slices.Contains(ws, l.widthPx) {
				ws = append(ws, l.widthPx)
			}
		}
	}
	slices.Sort(ws)
	return ws
}

// Plural writes "1 partition", "2 partitions", "2 anomalies".
func Plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ay") && !strings.HasSuffix(noun, "ey"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func seconds(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }
