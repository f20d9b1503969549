package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"chunklease/history"
	"chunklease/workloads"
	"chunklease/workloads/lease"
	"chunklease/workloads/workloadtest"
)

// pageCounts parses the page as XML, counts elements by each of their
// classes, and fails on anything the page would load from elsewhere.
func pageCounts(t *testing.T, page []byte) map[string]int {
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
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		counts["<"+se.Name.Local+">"]++
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "class":
				for _, c := range strings.Fields(a.Value) {
					counts[c]++
				}
			case "src":
				t.Errorf("the page loads src=%q; it must be self-contained", a.Value)
			case "href":
				if !strings.HasPrefix(a.Value, "#") {
					t.Errorf("the page links to %q; it must be self-contained", a.Value)
				}
			}
		}
	}
}

// withToken adds "token" to the value of every ok grant and renew, as
// the node's replies carry it.
func withToken(t *testing.T, h []history.Op) []history.Op {
	for i, op := range h {
		if op.Type != history.OK || (op.F != lease.FGrant && op.F != lease.FRenew) {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(op.Value, &v); err != nil {
			t.Fatal(err)
		}
		v["token"] = 1000 + i
		h[i].Value, _ = json.Marshal(v)
	}
	return h
}

func TestLeaseTimelineMarksViolations(t *testing.T) {
	b := workloadtest.NewLeaseHistory(t)
	b.NemesisStep(workloads.StartPartition, 200, 201, `"majority"`, `["isolated",{"n1":["n2","n3"],"n2":["n1"],"n3":["n1"]}]`)
	b.Grant(0, 0, 10, "ch_1", "cs1", "cs1", 1000)
	b.Grant(1, 500, 510, "ch_1", "cs2", "cs2", 1000) // two primaries
	b.Grant(2, 0, 10, "ch_2", "cs3", "cs3", 1000)
	b.Check(3, 300, 310, "ch_2", "cs1", false) // read saw the wrong holder
	b.Check(4, 0, 5, "ch_10", "", false)       // a third lane, with nothing held
	b.NemesisStep(workloads.StopPartition, 700, 701, `null`, `"network-healed"`)
	// A partition that cuts nobody off (minority-third at 3 nodes) is
	// neither drawn nor counted as a partition.
	b.NemesisStep(workloads.StartPartition, 800, 801, `"minority-third"`, `["isolated",{"n1":[],"n2":[],"n3":[]}]`)
	b.NemesisStep(workloads.StopPartition, 900, 901, `null`, `"network-healed"`)
	h := withToken(t, b.Ops())
	res := lease.CheckLease(h)
	if res.Valid || len(res.Violations) != 2 {
		t.Fatalf("negative control: %+v", res.Violations)
	}
	var page bytes.Buffer
	if err := WriteLeaseTimeline(&page, h, res); err != nil {
		t.Fatal(err)
	}
	c := pageCounts(t, page.Bytes())
	if c["lane"] != 3 || c["violating"] != 2 || c["v"] != 2 || c["vb"] != 2 || c["h"] != 3 || c["x"] != 3 || c["shade"] != 1 || c["f"] != 1 ||
		c["axis"] != 2 || c["tick"] < 10 || c["legend"] != 1 || c["rest"] != 0 {
		t.Errorf("element counts %v: want 3 lanes (2 violating), 2 violations, 3 holdings (all named by a violation), 1 partition, 2 axes, a legend", c)
	}
	s := page.String()
	for _, want := range []string{`data-chunk="ch_1"`, `data-chunk="ch_2"`, `data-chunk="ch_10"`,
		`title="two-primaries on ch_1`, `title="read-wrong-holder on ch_2`, fmt.Sprintf("cs1 holds ch_1 [0.010s, 1.000s) by grant ops %d-%d via n1", res.Holdings[0].InvokeIndex, res.Holdings[0].CompletionIndex),
		fmt.Sprintf("token %d", 1000+res.Holdings[0].CompletionIndex), `<span class="verdict-invalid">INVALID</span>`, `<a href="#lane-0">ch_1</a>`,
		"1 partition period (and 1 partition that cut nobody off, not drawn)", "Lanes: 2 with violations, then the busiest other chunk (most ops)",
		">majority: n1 | n2 n3</i>", ">n1 | n2 n3</i>", ">n1</i>", "partition from 0.200s to 0.701s: majority: n1 | n2 n3; cut off: n1",
		// cs2's holding overlaps cs1's: it is drawn in the second sub-row.
		fmt.Sprintf(`data-server="cs1" data-op="%d" data-row="0"`, res.Holdings[0].InvokeIndex),
		fmt.Sprintf(`data-server="cs2" data-op="%d" data-row="1"`, res.Holdings[1].InvokeIndex)} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"the 0 busiest", "1 partitions", "1 violations", "minority-third"} {
		if strings.Contains(s, bad) {
			t.Errorf("page says %q", bad)
		}
	}
	if strings.Index(s, `data-chunk="ch_2"`) > strings.Index(s, `data-chunk="ch_10"`) {
		t.Error("lanes are not in natural order (ch_2 before ch_10)")
	}
}

// TestLeaseTimelineStaysSmall: 100 000 chunks, one of them with a
// violation, give a lane for the violation, the busiest chunks up to the
// limit and one line for the rest; the page stays under a megabyte.
func TestLeaseTimelineStaysSmall(t *testing.T) {
	res := lease.LeaseResult{Chunks: map[string]lease.ChunkCounts{}}
	const chunks = 100_000
	for i := range chunks {
		c := fmt.Sprintf("ch_%d", i)
		n := 1 + i%7
		res.Chunks[c] = lease.ChunkCounts{Invoked: 2 * n, OK: 2 * n, Holdings: n}
		for k := range n {
			start := int64(i%300)*1e9 + int64(k)*2e8
			res.Holdings = append(res.Holdings, lease.Holding{Chunk: c, Server: fmt.Sprintf("cs%d", k%3), F: lease.FGrant,
				StartNs: start, EndNs: start + 1e8, InvokeIndex: 2 * i, CompletionIndex: 2*i + 1})
		}
	}
	res.Violations = []lease.Violation{{Kind: lease.TwoPrimaries, Chunk: "ch_7", Servers: []string{"cs0", "cs1"}, StartNs: 1e9, EndNs: 2e9, Text: "overlap"}}
	var page bytes.Buffer
	if err := WriteLeaseTimeline(&page, nil, res); err != nil {
		t.Fatal(err)
	}
	if page.Len() > 1<<20 {
		t.Errorf("the page is %d bytes for %d chunks; want at most 1 MiB", page.Len(), chunks)
	}
	c := pageCounts(t, page.Bytes())
	lim := lease.DefaultTimelineLimits
	if c["lane"] != lim.BusiestLanes+1 || c["violating"] != 1 || c["rest"] != 1 {
		t.Errorf("counts %v: want %d lanes (1 violating) and a summary line", c, lim.BusiestLanes+1)
	}
	if want := fmt.Sprintf("%d other chunks (not drawn)", chunks-lim.BusiestLanes-1); !strings.Contains(page.String(), want) {
		t.Errorf("the page lacks %q", want)
	}
}

// TestMergeHoldings: a lane over its budget draws back-to-back holdings
// of one server as one bar, and never merges two servers.
func TestMergeHoldings(t *testing.T) {
	var hs []lease.Holding
	for i := range int64(3000) {
		hs = append(hs, lease.Holding{Chunk: "ch_1", Server: fmt.Sprintf("cs%d", i/1000), StartNs: i * 1e6, EndNs: i*1e6 + 9e5})
	}
	if got := mergeHoldings(hs, nil, 3e9, 5000); len(got) != 3000 {
		t.Errorf("within budget: %d marks, want 3000", len(got))
	}
	got := mergeHoldings(hs, nil, 3e9, 400)
	if len(got) > 400 {
		t.Errorf("%d marks over a budget of 400", len(got))
	}
	total := 0
	for _, m := range got {
		total += m.n
		if m.first.Server != m.last.Server {
			t.Errorf("a mark spans servers %s and %s", m.first.Server, m.last.Server)
		}
	}
	if total != 3000 {
		t.Errorf("marks stand for %d holdings, want 3000", total)
	}
}

// TestDrawPicturesWritesTheTimelineFile: the lease analysis's picture is
// drawn as the timeline page; one that cannot be written is a warning.
func TestDrawPicturesWritesTheTimelineFile(t *testing.T) {
	b := workloadtest.NewLeaseHistory(t)
	b.GrantTok(0, 0, 10, "ch_1", "cs<1>&", 1000, nil) // names that need escaping; no token
	h := b.Ops()
	in := lease.TimelineInputOf(h, lease.CheckLease(h), lease.DefaultTimelineLimits)
	dir := t.TempDir()
	if files, warnings := DrawPictures(dir, []any{in}); len(files) != 1 || files[0] != LeaseTimelineFile || len(warnings) != 0 {
		t.Fatalf("files %v, warnings %v", files, warnings)
	}
	page, err := os.ReadFile(filepath.Join(dir, LeaseTimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	if c := pageCounts(t, page); c["lane"] != 1 || c["h"] != 1 || c["v"] != 1 { // v: token-missing
		t.Errorf("element counts %v", c)
	}
	if !strings.Contains(string(page), "token ?") {
		t.Error("a holding without a token in the history does not say so")
	}
	if files, warnings := DrawPictures(filepath.Join(dir, "missing"), []any{in, 42}); len(files) != 0 || len(warnings) != 2 {
		t.Errorf("into a missing directory, and a picture of no known kind: files %v, warnings %v", files, warnings)
	}
}

// TestSubRows: a valid lane needs one sub-row (a server's renewals
// overlap its own lease and stay in its row); two servers holding at
// once go one above the other; past the limit, the row that frees first
// takes the overflow.
func TestSubRows(t *testing.T) {
	h := func(server string, start, end int64) mark {
		x := lease.Holding{Server: server, StartNs: start, EndNs: end}
		return mark{first: x, last: x, n: 1}
	}
	cases := []struct {
		name  string
		marks []mark
		rows  []int
		n     int
	}{
		{"handovers and renewals", []mark{h("cs1", 0, 10), h("cs1", 5, 20), h("cs2", 20, 30), h("cs1", 30, 40)}, []int{0, 0, 0, 0}, 1},
		{"two primaries", []mark{h("cs1", 0, 10), h("cs2", 5, 15), h("cs1", 8, 25), h("cs3", 12, 14)}, []int{0, 1, 0, 2}, 3},
		{"a freed row is reused", []mark{h("cs1", 0, 10), h("cs2", 5, 8), h("cs3", 9, 12)}, []int{0, 1, 1}, 2},
		{"overflow", []mark{h("a", 0, 10), h("b", 1, 10), h("c", 2, 5), h("d", 3, 10)}, []int{0, 1, 2, 2}, 3},
	}
	for _, c := range cases {
		rows, n := subRows(c.marks, 100, 3)
		if fmt.Sprint(rows) != fmt.Sprint(c.rows) || n != c.n {
			t.Errorf("%s: rows %v of %d, want %v of %d", c.name, rows, n, c.rows, c.n)
		}
	}
}

// TestViolationSpans: a lane's violations merge where they overlap or
// touch, each stretch counting them and naming the first.
func TestViolationSpans(t *testing.T) {
	vs := []lease.Violation{
		{Kind: lease.ReadWrongHolder, StartNs: 12, EndNs: 14, Text: "b"},
		{Kind: lease.TwoPrimaries, StartNs: 10, EndNs: 20, Text: "a"},
		{Kind: lease.TwoPrimaries, StartNs: 20, EndNs: 25, Text: "c"},
		{Kind: lease.TokenOrder, StartNs: 40, EndNs: 41, Text: "d"},
	}
	got := violationSpans(vs)
	if len(got) != 2 || got[0].startNs != 10 || got[0].endNs != 25 || got[0].count != 3 || got[0].first.Text != "a" ||
		fmt.Sprint(got[0].kinds) != "[two-primaries read-wrong-holder]" || got[1].count != 1 || got[1].first.Text != "d" {
		t.Errorf("spans %+v", got)
	}
}
