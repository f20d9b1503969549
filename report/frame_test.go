package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"chunklease/workloads"
)

// TestDrawnFaults: a fault that hit no node is counted by kind, not
// drawn; the others keep their order.
func TestDrawnFaults(t *testing.T) {
	fs := []workloads.Fault{
		{Kind: workloads.FaultPartition, StartNs: 1, Nodes: []string{"n2"}, Detail: "majority: n0 n1 | n2"},
		{Kind: workloads.FaultPartition, StartNs: 2, Detail: "minority-third: nobody cut off (an empty grudge)"},
		{Kind: workloads.FaultPause, StartNs: 3, Detail: "pause "},
		{Kind: workloads.FaultKill, StartNs: 4, Nodes: []string{"n1"}, Detail: "kill n1"},
	}
	drawn, empty := DrawnFaults(fs)
	if len(drawn) != 2 || drawn[0].StartNs != 1 || drawn[1].StartNs != 4 || empty[workloads.FaultPartition] != 1 || empty[workloads.FaultPause] != 1 {
		t.Errorf("drawn %+v, empty %v", drawn, empty)
	}
	fr := newFrame(fs, 10)
	if got, want := fr.faultCounts(), "1 partition period (and 1 partition that cut nobody off, not drawn), 1 kill period, 1 pause that found no node running (not drawn)"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
	if got := newFrame(nil, 10).faultCounts(); got != "no faults" {
		t.Errorf("without faults: %q", got)
	}
}

// TestFaultLabels: a partition band offers its target and shape, the
// shape alone, then the nodes cut off, longest first, each with the
// width it needs; a kill or pause band the nodes it hit. The page has
// one width rule per width, so the band shows the longest that fits.
func TestFaultLabels(t *testing.T) {
	p := workloads.Fault{Kind: workloads.FaultPartition, EndNs: math.MaxInt64, Nodes: []string{"n0", "n1"}, Detail: "majority: n0 n1 | n2 n3 n4"}
	got := faultLabels(p)
	want := []faultLabel{{"majority: n0 n1 | n2 n3 n4", 190}, {"n0 n1 | n2 n3 n4", 120}, {"n0 n1", 50}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition labels %v, want %v", got, want)
	}
	k := workloads.Fault{Kind: workloads.FaultKill, Nodes: []string{"n1", "n3"}, Detail: "kill n1 n3"}
	if got := faultLabels(k); len(got) != 1 || got[0].text != "n1 n3" {
		t.Errorf("kill labels %v", got)
	}
	k4 := workloads.Fault{Kind: workloads.FaultPause, Nodes: []string{"n0", "n1", "n2", "n3"}}
	if got := faultLabels(k4); len(got) != 2 || got[0].text != "n0 n1 n2 n3" || got[1].text != "4 nodes" {
		t.Errorf("kill labels %v", got)
	}
	fr := newFrame([]workloads.Fault{p, k}, 10)
	fr.head("t", "")
	fr.faultRows()
	s := fr.b.String()
	for _, w := range []string{"@container (min-width: 190px){.w190{display:block}}", "@container (min-width: 50px){.w50{display:block}}",
		`<i class="fl w190">majority: n0 n1 | n2 n3 n4</i><i class="fl w120">n0 n1 | n2 n3 n4</i><i class="fl w50">n0 n1</i>`,
		`title="partition from 0.000s to the end (not healed in the history): majority: n0 n1 | n2 n3 n4; cut off: n0 n1"`} {
		if !strings.Contains(s, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{{1, "partition", "1 partition"}, {0, "partition", "0 partitions"}, {2, "anomaly", "2 anomalies"}, {3, "late reply", "3 late replies"}, {2, "day", "2 days"}} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
