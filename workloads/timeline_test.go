package workloads

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// svgCounts parses the page as XML and counts elements by class.
func svgCounts(t *testing.T, page []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	counts := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatalf("the timeline is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts["<"+se.Name.Local+">"]++
			for _, a := range se.Attr {
				if a.Name.Local == "class" {
					counts[a.Value]++
				}
				if a.Name.Local == "href" || a.Name.Local == "src" {
					t.Errorf("the page loads %s=%q; it must be self-contained", a.Name.Local, a.Value)
				}
			}
		}
	}
}

func TestLeaseTimelineMarksViolations(t *testing.T) {
	b := newHB(t)
	b.nemesis(StartPartition, 200, 201)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.grant(1, 500, 510, "ch_1", "cs2", "cs2", 1000) // two primaries
	b.grant(2, 0, 10, "ch_2", "cs3", "cs3", 1000)
	b.check(3, 300, 310, "ch_2", "cs1", false) // read saw the wrong holder
	b.check(4, 0, 5, "ch_10", "", false)       // a third lane, with nothing held
	b.nemesis(StopPartition, 700, 701)
	h := b.history()
	res := CheckLease(h)
	if res.Valid || len(res.Violations) != 2 {
		t.Fatalf("negative control: %+v", res.Violations)
	}
	var page bytes.Buffer
	if err := WriteLeaseTimeline(&page, h, res); err != nil {
		t.Fatal(err)
	}
	c := svgCounts(t, page.Bytes())
	if c["lane"] != 3 || c["violation"] != 2 || c["violation-mark"] != 2 || c["holding"] != 3 || c["partition"] != 1 {
		t.Errorf("element counts %v: want 3 lanes, 2 violations and marks, 3 holdings, 1 partition", c)
	}
	s := page.String()
	for _, want := range []string{`data-chunk="ch_1"`, `data-chunk="ch_2"`, `data-chunk="ch_10"`,
		"<title>two-primaries on ch_1", "<title>read-wrong-holder on ch_2", "cs1 holds ch_1 [0.010s, 1.000s) by grant ops"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Index(s, `data-chunk="ch_2"`) > strings.Index(s, `data-chunk="ch_10"`) {
		t.Error("lanes are not in natural order (ch_2 before ch_10)")
	}
}

func TestLeaseReporterWritesTheTimelineFile(t *testing.T) {
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs<1>&", "cs<1>&", 1000) // names that need escaping
	h := b.history()
	w := NewLease(LeaseOptions{Rate: 1}, 1)
	rep, ok := w.(Reporter)
	if !ok {
		t.Fatal("the lease workload is not a Reporter")
	}
	dir := t.TempDir()
	if err := rep.Report(dir, h, w.Check(h)); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, LeaseTimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	if c := svgCounts(t, page); c["lane"] != 1 || c["holding"] != 1 || c["violation"] != 0 {
		t.Errorf("element counts %v", c)
	}
	if err := rep.Report(filepath.Join(dir, "missing"), h, Result{}); err == nil {
		t.Error("writing into a missing directory did not fail")
	}
}
