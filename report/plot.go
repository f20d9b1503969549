package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/lease"
	"chunklease/workloads/master"
)

// Picture file names, as Maelstrom's.
const (
	latencyGraphFile = "latency-raw.png"
	rateGraphFile    = "rate.png"
)

// Picture size: 11 x 5.5 inches at 96 dpi, the right 2.1 inches for the
// legend, so the legend never covers data.
const (
	graphW   = 11 * vg.Inch
	graphH   = 5.5 * vg.Inch
	legendW  = 2.1 * vg.Inch
	graphDPI = 96
)

// knownFs fixes the colour and marker of every f the project's workloads
// write, in this order, so a colour means the same op in every run. Other
// fs follow in alphabetical order.
var knownFs = []string{lease.FGrant, lease.FRenew, lease.FCheck, lease.FRelease,
	"echo", master.FMasterStart, master.FMasterStop, master.FMasterStatus}

// Colour families tell ok from failures at a glance: ok ops are cool
// (blues, greens, purples), fail ops reds and pinks, info (unknown) ops
// oranges and browns. Within a family, the f picks the shade.
var familyColours = map[string][]color.Color{
	history.OK: {rgb(0x1F, 0x77, 0xB4), rgb(0x2C, 0xA0, 0x2C), rgb(0x17, 0xBE, 0xCF), rgb(0x6A, 0x3D, 0x9A),
		rgb(0x08, 0x30, 0x6B), rgb(0x00, 0x6D, 0x2C), rgb(0x9E, 0x9A, 0xC8), rgb(0x41, 0xAB, 0x5D)},
	history.Fail: {rgb(0xD6, 0x27, 0x28), rgb(0xE7, 0x29, 0x8A), rgb(0x99, 0x00, 0x0D), rgb(0xFB, 0x6A, 0x4A),
		rgb(0xC5, 0x1B, 0x7D), rgb(0xEF, 0x3B, 0x2C), rgb(0x67, 0x00, 0x0D), rgb(0xF7, 0x68, 0xA1)},
	history.Info: {rgb(0xFF, 0x7F, 0x0E), rgb(0xB1, 0x59, 0x28), rgb(0xE6, 0xAB, 0x02), rgb(0xA6, 0x76, 0x1D),
		rgb(0xFD, 0x8D, 0x3C), rgb(0x8C, 0x2D, 0x04), rgb(0xFE, 0xC4, 0x4F), rgb(0xD9, 0x48, 0x01)},
}

// completionTypes is the legend order within an f.
var completionTypes = []string{history.OK, history.Fail, history.Info}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{},
	draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

func rgb(r, g, b uint8) color.Color { return color.NRGBA{R: r, G: g, B: b, A: 0xFF} }

// opStyle is the colour and marker of an f and completion type.
func opStyle(fs []string, f, typ string) (color.Color, draw.GlyphDrawer) {
	i := slices.Index(fs, f)
	fam := familyColours[typ]
	if fam == nil {
		fam = familyColours[history.Info]
	}
	return fam[i%len(fam)], glyphs[i%len(glyphs)]
}

// orderFs returns the fs in the fixed order: knownFs first, then the
// others alphabetically. Every known f keeps its place (and so its colour)
// whether or not it occurs.
func orderFs(seen []string) []string {
	fs := slices.Clone(knownFs)
	var extra []string
	for _, f := range seen {
		if !slices.Contains(fs, f) && !slices.Contains(extra, f) {
			extra = append(extra, f)
		}
	}
	slices.Sort(extra)
	return append(fs, extra...)
}

// DrawPerf draws latency-raw.png and rate.png into dir from perf, with
// the faults that hit some node shaded (DrawnFaults). A picture that cannot be drawn is reported in the
// result (Error), never fatal: a plotting bug must not cost the verdict.
func DrawPerf(dir string, perf *PerfData, faults []workloads.Fault) (res PerfResult) {
	defer func() {
		if p := recover(); p != nil {
			res = PerfResult{Valid: true, Error: fmt.Sprintf("drawing the graphs: %v", p)}
		}
	}()
	res = PerfResult{Valid: true}
	drawn, _ := DrawnFaults(faults)
	if err := perf.draw(drawn, dir); err != nil {
		res.Error = err.Error()
		return res
	}
	res.LatencyGraph, res.RateGraph = latencyGraphFile, rateGraphFile
	return res
}

// drawGraphs writes both pictures for a history held in memory that ended
// at end.
func drawGraphs(ops []history.Op, end time.Duration, dir string) error {
	perf := NewPerfData(end)
	pairs, _ := history.PairOps(ops)
	for _, p := range pairs {
		perf.add(p)
	}
	drawn, _ := DrawnFaults(workloads.Faults(ops))
	return perf.draw(drawn, dir)
}

// Latency dots are kept on a grid of about two by two pixels of the
// picture (the plot is about 800 x 450 pixels over at most 9 decades, a
// dot about 6 pixels wide): a dot that would land in a cell already
// drawn adds nothing a reader could see, so a long run keeps at most
// latencyColumns x latencyRows dots per f and outcome, whatever its
// length, and drawing them takes about a second.
const (
	latencyColumns        = 400
	latencyRowsPerDecade  = 50
	latencyDecades        = 9 // from minLatencyMs, 1 µs, to 10^6 ms
	latencyRows           = latencyRowsPerDecade * latencyDecades
	latencyCellsPerSeries = latencyColumns * latencyRows
)

// PerfData is what the pictures need from a run's completed client ops,
// gathered pair by pair in memory that does not grow with the run: per f
// and outcome, the count, the completions per rate bucket and the latency
// dots that stay visible.
type PerfData struct {
	end          time.Duration
	bucketS      float64
	series       map[seriesKey]*perfSeries
	minMs, maxMs float64 // latency range, for the log axis
}

type seriesKey struct{ f, typ string }

// perfSeries is one f and outcome.
type perfSeries struct {
	count int
	dots  plotter.XYs
	drawn []uint64  // bitset of the latency grid cells holding a dot
	rate  []float64 // completions per full rate bucket, by invoke time
}

// NewPerfData gathers the pictures of a run whose time axis ends at end.
func NewPerfData(end time.Duration) *PerfData {
	return &PerfData{end: end, bucketS: rateBucket(end), series: map[seriesKey]*perfSeries{},
		minMs: math.Inf(1), maxMs: math.Inf(-1)}
}

// Pair takes one client op (history.PairSink); ops never completed are
// not drawn.
func (d *PerfData) Pair(p history.Pair) error {
	d.add(p)
	return nil
}

// Problem ignores a structural defect: the checkers judge those.
func (d *PerfData) Problem(history.Problem) {}

// add takes one client op; ops never completed are not drawn.
func (d *PerfData) add(p history.Pair) {
	if p.Completion == nil {
		return
	}
	k := seriesKey{p.Invoke.F, p.Completion.Type}
	s := d.series[k]
	if s == nil {
		s = &perfSeries{rate: make([]float64, int(d.end.Seconds()/d.bucketS))}
		d.series[k] = s
	}
	s.count++
	invokeS := float64(p.Invoke.Time) / 1e9
	if i := int(invokeS / d.bucketS); i < len(s.rate) {
		s.rate[i]++
	}
	ms := max(float64(p.Completion.Time-p.Invoke.Time)/1e6, minLatencyMs)
	d.minMs, d.maxMs = min(d.minMs, ms), max(d.maxMs, ms)
	if s.mark(d.cell(invokeS, ms)) {
		s.dots = append(s.dots, plotter.XY{X: invokeS, Y: ms})
	}
}

// cell is the latency grid cell of a dot.
func (d *PerfData) cell(invokeS, ms float64) int {
	col := int(invokeS / max(d.end.Seconds(), 1e-9) * latencyColumns)
	row := int(math.Log10(ms/minLatencyMs) * latencyRowsPerDecade)
	return min(max(col, 0), latencyColumns-1)*latencyRows + min(max(row, 0), latencyRows-1)
}

// mark sets a cell and reports whether it was empty.
func (s *perfSeries) mark(cell int) bool {
	if s.drawn == nil {
		s.drawn = make([]uint64, (latencyCellsPerSeries+63)/64)
	}
	word, bit := cell/64, uint64(1)<<(cell%64)
	if s.drawn[word]&bit != 0 {
		return false
	}
	s.drawn[word] |= bit
	return true
}

// fs are the fs that occur, in drawing order.
func (d *PerfData) fs() []string {
	var seen []string
	for k := range d.series {
		seen = append(seen, k.f)
	}
	return orderFs(seen)
}

// draw writes both pictures into dir.
func (d *PerfData) draw(faults []workloads.Fault, dir string) error {
	spans := faultSpans(faults, d.end)
	if err := latencyGraph(d, spans, filepath.Join(dir, latencyGraphFile)); err != nil {
		return err
	}
	return rateGraph(d, spans, filepath.Join(dir, rateGraphFile))
}

// faultSpan is a fault period in seconds; one still in force at the end
// of the history ends at end.
type faultSpan struct {
	kind       string
	start, end float64
}

func faultSpans(faults []workloads.Fault, end time.Duration) []faultSpan {
	var out []faultSpan
	for _, f := range faults {
		stop := f.EndNs
		if stop == math.MaxInt64 {
			stop = int64(end)
		}
		out = append(out, faultSpan{f.Kind, float64(f.StartNs) / 1e9, float64(stop) / 1e9})
	}
	return out
}

// newGraph starts a plot with the axes every graph shares.
func newGraph(title string, end time.Duration) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "Time since the test started (s)"
	p.X.Min, p.X.Max = 0, max(end.Seconds(), 0.001)
	p.X.Tick.Marker = niceTicks{n: 12}
	p.Add(plotter.NewGrid())
	return p
}

// latencyGraph plots one point per completed op at its invoke time
// (dots that would hide each other drawn once): colour by f within the
// completion type's colour family, shape by f, faults shaded, log latency
// axis.
func latencyGraph(d *PerfData, faults []faultSpan, path string) error {
	p := newGraph("Latency of every op (at its invoke time)", d.end)
	p.Y.Label.Text = "Latency (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	legend := newOutsideLegend()
	addFaults(p, &legend, faults)
	fs := d.fs()
	for _, f := range fs {
		for _, typ := range completionTypes {
			ser := d.series[seriesKey{f, typ}]
			if ser == nil {
				continue
			}
			s, err := plotter.NewScatter(ser.dots)
			if err != nil {
				return fmt.Errorf("latency graph: %w", err)
			}
			c, g := opStyle(fs, f, typ)
			s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.2), Shape: g}
			p.Add(s)
			legend.Add(fmt.Sprintf("%s %s (%d)", f, typ, ser.count), s)
		}
	}
	if len(d.series) == 0 {
		p.Y.Scale, p.Y.Tick.Marker = plot.LinearScale{}, niceTicks{n: 8}
		p.Y.Min, p.Y.Max = 0, 1
	} else {
		p.Y.Min, p.Y.Max = decades(d.minMs, d.maxMs)
	}
	return saveWithLegend(p, legend, path)
}

// minLatencyMs is the floor of the log latency axis: a zero latency (a
// simulated run) is drawn there.
const minLatencyMs = 0.001

// decades widens the latency range [lo, hi] to whole powers of ten, at
// least one decade, so the log axis has labelled ticks at both ends.
func decades(lo, hi float64) (float64, float64) {
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// rateXYs turns completions per full bucket into completions per second
// at each bucket's middle; a last bucket the run did not fill is not
// there (a rate over part of a bucket would read as a drop).
func rateXYs(counts []float64, bucketS float64) plotter.XYs {
	xys := make(plotter.XYs, len(counts))
	for i, c := range counts {
		xys[i] = plotter.XY{X: (float64(i) + 0.5) * bucketS, Y: c / bucketS}
	}
	return xys
}

// rateGraph plots completions per second for each f and type, faults
// shaded; ok lines are solid, fail dashed, info dotted.
func rateGraph(d *PerfData, faults []faultSpan, path string) error {
	p := newGraph("Throughput", d.end)
	bucketS := d.bucketS
	p.Y.Label.Text = fmt.Sprintf("Completions per second (%gs buckets, by invoke time)", bucketS)
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = niceTicks{n: 8}
	legend := newOutsideLegend()
	addFaults(p, &legend, faults)
	fs := d.fs()
	for _, f := range fs {
		for _, typ := range completionTypes {
			ser := d.series[seriesKey{f, typ}]
			if ser == nil || len(ser.rate) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(rateXYs(ser.rate, bucketS))
			if err != nil {
				return fmt.Errorf("rate graph: %w", err)
			}
			c, g := opStyle(fs, f, typ)
			l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.6), Dashes: typeDashes[typ]}
			s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2), Shape: g}
			p.Add(l, s)
			legend.Add(f+" "+typ, l, s)
		}
	}
	end := d.end
	if n := int(end.Seconds() / bucketS); float64(n)*bucketS < end.Seconds()-1e-9 {
		p.X.Label.Text += fmt.Sprintf("; the last %.2gs, a partial bucket, is not drawn", end.Seconds()-float64(n)*bucketS)
	}
	return saveWithLegend(p, legend, path)
}

// typeDashes: ok solid, fail dashed, info dotted.
var typeDashes = map[string][]vg.Length{
	history.OK:   nil,
	history.Fail: {vg.Points(6), vg.Points(3)},
	history.Info: {vg.Points(1.5), vg.Points(2.5)},
}

// rateBucket is the rate graph's bucket width in seconds: about a
// sixtieth of the run rounded up to 1, 2 or 5 times a power of ten (so
// 30 to 60 buckets), at least 1 s: a 30 s run gets 1 s buckets, short
// enough to show the dip of a partition of a second or two, and a rate
// over less than a second is mostly noise.
func rateBucket(end time.Duration) float64 {
	return max(1, NiceStep(end.Seconds()/60))
}

// newOutsideLegend is a legend drawn in its own strip right of the plot.
func newOutsideLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.Padding = vg.Points(2)
	l.TextStyle.Font.Size = vg.Points(10)
	l.ThumbnailWidth = vg.Points(22)
	return l
}

// saveWithLegend draws the plot left of a legend strip and writes a PNG.
func saveWithLegend(p *plot.Plot, legend plot.Legend, path string) error {
	img := vgimg.NewWith(vgimg.UseWH(graphW, graphH), vgimg.UseDPI(graphDPI))
	c := draw.New(img)
	p.Draw(draw.Crop(c, 0, -legendW, 0, 0))
	strip := draw.Crop(c, graphW-legendW+vg.Points(8), 0, 0, -vg.Points(28))
	legend.Draw(strip)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Base(path), err)
	}
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Base(path), err)
	}
	return nil
}

// addFaults shades the fault periods, one colour per kind, and names
// each kind present in the legend.
func addFaults(p *plot.Plot, legend *plot.Legend, faults []faultSpan) {
	for _, kind := range workloads.FaultKinds {
		var spans [][2]float64
		for _, f := range faults {
			if f.kind == kind {
				spans = append(spans, [2]float64{f.start, f.end})
			}
		}
		if len(spans) == 0 {
			continue
		}
		shade := faultShade{spans: spans, colour: faultColour(kind)}
		p.Add(shade)
		legend.Add(fmt.Sprintf("%s (%d)", kind, len(spans)), shade)
	}
}

// faultColour is the timeline's colour for kind, translucent.
func faultColour(kind string) color.Color {
	v, err := strconv.ParseUint(FaultColour(kind)[1:], 16, 32)
	if err != nil {
		return color.NRGBA{A: 0x40}
	}
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0x70}
}

// faultShade fills the full height of the plot over each span.
type faultShade struct {
	spans  [][2]float64
	colour color.Color
}

// Plot implements plot.Plotter.
func (s faultShade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, sp := range s.spans {
		x0 := max(trX(sp[0]), c.Min.X)
		x1 := min(trX(sp[1]), c.Max.X)
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(s.colour, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// Thumbnail draws the legend swatch.
func (s faultShade) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.colour, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// niceTicks labels about n round values (1, 2 or 5 times a power of
// ten) with four unlabelled ticks between them.
type niceTicks struct{ n int }

// Ticks implements plot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	minor := NiceStep((hi-lo)/float64(t.n)) / 5
	var out []plot.Tick
	for k := int64(math.Ceil(lo/minor - 1e-9)); float64(k)*minor <= hi+minor*1e-9; k++ {
		v := float64(k) * minor
		label := ""
		if k%5 == 0 {
			label = strconv.FormatFloat(v, 'g', 6, 64)
		}
		out = append(out, plot.Tick{Value: v, Label: label})
	}
	return out
}

// logTicks labels 1, 2 and 5 times each power of ten, and marks the other
// integers between.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			label := ""
			if m == 1 || m == 2 || m == 5 {
				label = strconv.FormatFloat(v, 'g', 6, 64)
			}
			out = append(out, plot.Tick{Value: v, Label: label})
		}
	}
	return slices.SortedFunc(slices.Values(out), func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
}
