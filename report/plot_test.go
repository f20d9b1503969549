package report

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/lease"
)

// plotHistory is a small lease-like history: every f, ok and failed and
// unknown completions, a partition, a kill and a pause.
func plotHistory() []history.Op {
	var h []history.Op
	add := func(ms int64, p history.Process, typ, f, value string) {
		h = append(h, history.Op{Index: len(h), Time: ms * 1e6, Process: p, Type: typ, F: f, Value: json.RawMessage(value)})
	}
	nem := history.NemesisProcess
	fs := []string{lease.FCheck, lease.FGrant, lease.FRenew, lease.FRelease}
	for i := range int64(400) {
		p := history.Process{ID: int(i % 5)}
		typ := []string{history.OK, history.OK, history.OK, history.Fail, history.Info}[i%5]
		add(i*25, p, history.Invoke, fs[i%4], `{}`)
		add(i*25+2+i%7, p, typ, fs[i%4], `{}`)
		switch i {
		case 40:
			add(i*25, nem, history.Info, workloads.StartPartition, `"majority"`)
		case 120:
			add(i*25, nem, history.Info, workloads.StopPartition, `null`)
		case 200:
			add(i*25, nem, history.Info, "kill", `["n1"]`)
		case 260:
			add(i*25, nem, history.Info, "start", `["n1"]`)
		case 300:
			add(i*25, nem, history.Info, "pause", `["n2"]`)
		}
	}
	return h
}

// TestDrawGraphs draws both pictures, and keeps them when
// PLOT_OUT names a directory (to look at them).
func TestDrawGraphs(t *testing.T) {
	dir := os.Getenv("PLOT_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := drawGraphs(plotHistory(), 10*time.Second+300*time.Millisecond, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{latencyGraphFile, rateGraphFile} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != int(graphW/vg.Inch*graphDPI) || b.Dy() != int(graphH/vg.Inch*graphDPI) {
			t.Errorf("%s is %v", name, b)
		}
	}
}

// TestOpColoursAreStable: an f keeps its colour whatever else the run
// holds, and ok, fail and info never share a colour.
func TestOpColoursAreStable(t *testing.T) {
	a := orderFs([]string{"check"})
	b := orderFs([]string{"zap", "grant", "check", "aaa"})
	ca, _ := opStyle(a, "check", history.OK)
	cb, _ := opStyle(b, "check", history.OK)
	if ca != cb {
		t.Errorf("check ok is %v in one run and %v in another", ca, cb)
	}
	if got := b[len(knownFs):]; !slices.Equal(got, []string{"aaa", "zap"}) {
		t.Errorf("unknown fs in order %v, want alphabetical", got)
	}
	seen := map[any]string{}
	for _, f := range knownFs {
		for _, typ := range completionTypes {
			c, _ := opStyle(b, f, typ)
			if prev, dup := seen[c]; dup {
				t.Errorf("%s %s has the colour of %s", f, typ, prev)
			}
			seen[c] = f + " " + typ
		}
	}
}

// opAt is a completed op invoked at invokeS seconds that took ms.
func opAt(f, typ string, invokeS, ms float64) history.Pair {
	inv := history.Op{Time: int64(invokeS * 1e9), F: f, Type: history.Invoke}
	done := history.Op{Time: inv.Time + int64(ms*1e6), F: f, Type: typ}
	return history.Pair{Invoke: inv, Completion: &done}
}

// TestRateSeriesDropsPartialBucket: 10.3 s in 1 s buckets gives ten
// points; the last 0.3 s is not drawn as a rate.
func TestRateSeriesDropsPartialBucket(t *testing.T) {
	d := NewPerfData(10*time.Second + 300*time.Millisecond)
	for _, s := range []float64{0.5, 0.7, 9.9, 10.1} {
		d.add(opAt("check", history.OK, s, 1))
	}
	xys := rateXYs(d.series[seriesKey{"check", history.OK}].rate, d.bucketS)
	if d.bucketS != 1 || len(xys) != 10 || xys[0].Y != 2 || xys[9].Y != 1 || xys[9].X != 9.5 {
		t.Errorf("series %v", xys)
	}
}

// TestLatencyDotsStayBounded: a long run's ops are all counted, but only
// the dots a reader could tell apart are kept: at most one per cell of a
// grid finer than the picture's pixels, and the first dot of each cell is
// kept where it was.
func TestLatencyDotsStayBounded(t *testing.T) {
	d := NewPerfData(600 * time.Second)
	for i := range 300_000 {
		d.add(opAt("grant", history.OK, float64(i)/500, 0.5+float64(i%1000)/1000))
	}
	s := d.series[seriesKey{"grant", history.OK}]
	if s.count != 300_000 || len(s.dots) > latencyColumns*(latencyRowsPerDecade/2+1) || len(s.dots) < latencyColumns {
		t.Errorf("%d ops counted, %d dots kept", s.count, len(s.dots))
	}
	if s.dots[0].X != 0 || s.dots[0].Y != 0.5 {
		t.Errorf("first dot %v, want the first op's", s.dots[0])
	}
	if lo, hi := decades(d.minMs, d.maxMs); lo != 0.1 || hi != 10 {
		t.Errorf("latency axis [%v, %v], want [0.1, 10]", lo, hi)
	}
}

// TestRateBucket: 30 to 60 buckets, at least 1 s each, so a partition of
// a second or two in a 30 s run shows as a dip.
func TestRateBucket(t *testing.T) {
	for _, c := range []struct {
		runS    float64
		bucketS float64
	}{{5, 1}, {30, 1}, {60, 1}, {90, 2}, {300, 5}, {600, 10}, {3600, 100}} {
		got := rateBucket(time.Duration(c.runS * float64(time.Second)))
		if got != c.bucketS {
			t.Errorf("a %g s run: %g s buckets, want %g", c.runS, got, c.bucketS)
		}
		if n := c.runS / got; c.runS >= 60 && (n < 30 || n > 60) {
			t.Errorf("a %g s run: %g buckets, want 30 to 60", c.runS, n)
		}
	}
}
