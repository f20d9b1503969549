package harness

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"chunklease/workloads"
)

// Picture file names, as Maelstrom's.
const (
	latencyGraphFile = "latency-raw.png"
	rateGraphFile    = "rate.png"
)

// Colours: Jepsen's perf graphs colour ok, info and fail ops like this,
// and shade partitions in partitionColor.
var (
	typeColors = map[string]color.Color{
		workloads.OK:   rgb(0x81, 0xBF, 0xFC),
		workloads.Info: rgb(0xFF, 0xA4, 0x00),
		workloads.Fail: rgb(0xFF, 0x1E, 0x90),
	}
	partitionColor = color.NRGBA{R: 0xE9, G: 0xDC, B: 0xA0, A: 0xC0}
	glyphs         = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{},
		draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
	completionTypes = []string{workloads.OK, workloads.Info, workloads.Fail}
)

func rgb(r, g, b uint8) color.Color { return color.NRGBA{R: r, G: g, B: b, A: 0xFF} }

// drawPerf draws latency-raw.png and rate.png into the run directory. A
// picture that cannot be drawn is reported in the result, not fatal.
func (r *runner) drawPerf(history []workloads.Op) (res PerfResult) {
	defer func() {
		if p := recover(); p != nil { // a plotting bug must not cost the verdict
			res = PerfResult{Valid: true, Error: fmt.Sprintf("drawing the graphs: %v", p)}
			r.console.println("WARN " + res.Error)
		}
	}()
	ops := completedOps(history)
	parts := partitionSpans(history, r.now())
	res = PerfResult{Valid: true}
	if err := latencyGraph(ops, parts, r.now(), filepath.Join(r.dir, latencyGraphFile)); err != nil {
		res.Error = err.Error()
		r.console.println("WARN " + err.Error())
		return res
	}
	if err := rateGraph(ops, parts, r.now(), filepath.Join(r.dir, rateGraphFile)); err != nil {
		res.Error = err.Error()
		r.console.println("WARN " + err.Error())
		return res
	}
	res.LatencyGraph, res.RateGraph = latencyGraphFile, rateGraphFile
	return res
}

// completedOp is a client op with its completion.
type completedOp struct {
	f, typ    string
	invokeS   float64 // invoke time, seconds since the start
	latencyMs float64
}

func completedOps(history []workloads.Op) []completedOp {
	pairs, _ := workloads.PairOps(history)
	var out []completedOp
	for _, p := range pairs {
		if p.Completion == nil {
			continue
		}
		out = append(out, completedOp{
			f: p.Invoke.F, typ: p.Completion.Type,
			invokeS:   float64(p.Invoke.Time) / 1e9,
			latencyMs: float64(p.Completion.Time-p.Invoke.Time) / 1e6,
		})
	}
	return out
}

// partitionSpans are the partitions in seconds; one still in force at the
// end of the history ends at end.
func partitionSpans(history []workloads.Op, end time.Duration) [][2]float64 {
	var out [][2]float64
	for _, iv := range workloads.Partitions(history) {
		stop := iv.EndNs
		if stop == math.MaxInt64 {
			stop = int64(end)
		}
		out = append(out, [2]float64{float64(iv.StartNs) / 1e9, float64(stop) / 1e9})
	}
	return out
}

// fNames lists the distinct fs in order of first appearance.
func fNames(ops []completedOp) []string {
	var fs []string
	for _, op := range ops {
		if !slices.Contains(fs, op.f) {
			fs = append(fs, op.f)
		}
	}
	return fs
}

// latencyGraph plots one point per completed op at its invoke time:
// colour by ok/info/fail, shape by f, partitions shaded, log latency axis.
func latencyGraph(ops []completedOp, parts [][2]float64, end time.Duration, path string) error {
	p := plot.New()
	p.Title.Text = "Raw latency"
	p.X.Label.Text = "Time (s)"
	p.Y.Label.Text = "Latency (ms)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.X.Min, p.X.Max = 0, end.Seconds()
	addPartitions(p, parts)
	for fi, f := range fNames(ops) {
		for _, typ := range completionTypes {
			var xys plotter.XYs
			for _, op := range ops {
				if op.f == f && op.typ == typ {
					xys = append(xys, plotter.XY{X: op.invokeS, Y: max(op.latencyMs, minLatencyMs)})
				}
			}
			if len(xys) == 0 {
				continue
			}
			s, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("latency graph: %w", err)
			}
			s.GlyphStyle = draw.GlyphStyle{Color: typeColors[typ], Radius: vg.Points(2), Shape: glyphs[fi%len(glyphs)]}
			p.Add(s)
			p.Legend.Add(f+" "+typ, s)
		}
	}
	if len(ops) == 0 {
		p.Y.Scale, p.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
		p.Y.Min, p.Y.Max = 0, 1
	} else {
		p.Y.Min, p.Y.Max = decades(ops)
	}
	return save(p, path)
}

// minLatencyMs is the floor of the log latency axis: a zero latency (a
// simulated run) is drawn there.
const minLatencyMs = 0.001

// decades widens the latency range to whole powers of ten, at least one
// decade, so the log axis has labelled ticks at both ends.
func decades(ops []completedOp) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, op := range ops {
		v := max(op.latencyMs, minLatencyMs)
		lo, hi = min(lo, v), max(hi, v)
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// rateGraph plots completions per second for each f and type, in
// buckets, partitions shaded.
func rateGraph(ops []completedOp, parts [][2]float64, end time.Duration, path string) error {
	p := plot.New()
	p.Title.Text = "Throughput"
	p.X.Label.Text = "Time (s)"
	p.Y.Label.Text = "Throughput (ops/s)"
	p.Legend.Top = true
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, end.Seconds(), 0, 1
	addPartitions(p, parts)
	bucketS := rateBucket(end)
	lastS := 0.0
	for _, op := range ops {
		lastS = max(lastS, op.invokeS)
	}
	n := int(lastS/bucketS) + 1 // no empty bucket after the last invocation
	for fi, f := range fNames(ops) {
		for _, typ := range completionTypes {
			counts := make([]float64, n)
			any := false
			for _, op := range ops {
				if op.f == f && op.typ == typ {
					counts[min(int(op.invokeS/bucketS), n-1)]++
					any = true
				}
			}
			if !any {
				continue
			}
			xys := make(plotter.XYs, n)
			for i, c := range counts {
				xys[i] = plotter.XY{X: (float64(i) + 0.5) * bucketS, Y: c / bucketS}
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return fmt.Errorf("rate graph: %w", err)
			}
			l.LineStyle = draw.LineStyle{Color: typeColors[typ], Width: vg.Points(1.5), Dashes: dashes(fi)}
			p.Add(l)
			p.Legend.Add(f+" "+typ, l)
		}
	}
	return save(p, path)
}

// rateBucket is the rate graph's bucket width in seconds: Jepsen's 10 s
// for long runs, and a tenth of the run (at least 0.1 s) for short ones,
// so a 30 s test still shows a curve.
func rateBucket(end time.Duration) float64 {
	return min(10, max(0.1, end.Seconds()/10))
}

// dashes gives each f its own line pattern.
func dashes(i int) []vg.Length {
	patterns := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)},
		{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}
	return patterns[i%len(patterns)]
}

func save(p *plot.Plot, path string) error {
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Base(path), err)
	}
	return nil
}

// addPartitions shades the partition spans and names them in the legend.
func addPartitions(p *plot.Plot, spans [][2]float64) {
	if len(spans) == 0 {
		return
	}
	shade := partitionShade{spans: spans}
	p.Add(shade)
	p.Legend.Add("partition", shade)
}

// partitionShade fills the full height of the plot over each span.
type partitionShade struct{ spans [][2]float64 }

// Plot implements plot.Plotter.
func (s partitionShade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, sp := range s.spans {
		x0 := max(trX(sp[0]), c.Min.X)
		x1 := min(trX(sp[1]), c.Max.X)
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(partitionColor, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// DataRange keeps the spans inside the x axis.
func (s partitionShade) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, sp := range s.spans {
		xmin, xmax = min(xmin, sp[0]), max(xmax, sp[1])
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1) // no say on y
}

// Thumbnail draws the legend swatch.
func (s partitionShade) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(partitionColor, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}
