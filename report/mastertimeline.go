package report

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"chunklease/workloads/master"
)

// MasterTimelineFile is the master workload's timeline page.
const MasterTimelineFile = "master-timeline.html"

// WriteMasterTimelineFile writes MasterTimelineFile into dir, drawn from
// what the master analysis gathered (master.TimelineInput).
func WriteMasterTimelineFile(dir string, in master.TimelineInput) error {
	return writePageFile(filepath.Join(dir, MasterTimelineFile), func(w io.Writer) error {
		return WriteMasterTimelinePage(w, in)
	})
}

// WriteMasterTimelinePage writes the master timeline: a self-contained
// page (no script, nothing loaded, well-formed XML) with one lane per
// node showing when that node believed it was master (its tenures: the
// union of [completion, invoke + remaining_ms) of its is_master
// answers), coloured by node; each node's violations (times it was
// master together with another node) as a red strip above its lane and
// a faint band behind, its tenures there outlined in red; faults shaded
// and named in their own rows; the first violations listed at the top
// with links to the lanes; time axes at the top and bottom.
func WriteMasterTimelinePage(w io.Writer, in master.TimelineInput) error {
	t := &masterTimeline{frame: newFrame(in.Faults, in.EndNs), in: in}
	word := "valid"
	if !in.Valid {
		word = "INVALID"
	}
	t.head("master timeline: "+word, "")
	t.summary(word)
	t.legend()
	t.b.WriteString("<div class=\"chart\">\n")
	t.axis("top")
	t.faultRows()
	t.b.WriteString("<div class=\"lanes\">\n")
	t.shades()
	for i, node := range in.Nodes {
		t.lane(i, node)
	}
	t.b.WriteString("</div>\n")
	return t.end(w)
}

// masterTimeline is the master page: the frame and what it shows.
type masterTimeline struct {
	*frame
	in master.TimelineInput
}

func (t *masterTimeline) laneID(node string) string {
	return fmt.Sprintf("node-%d", slices.Index(t.in.Nodes, node))
}

func (t *masterTimeline) colour(node string) int {
	return max(slices.Index(t.in.Nodes, node), 0) % len(serverPalette)
}

// summary states the verdict and the figures and lists the first
// violations with links to the lanes of their nodes.
func (t *masterTimeline) summary(word string) {
	cls := "verdict-valid"
	if !t.in.Valid {
		cls = "verdict-invalid"
	}
	fmt.Fprintf(&t.b, "<div class=\"summary\" id=\"summary\">\n<h1>Master timeline: <span class=\"%s\">%s</span></h1>\n", cls, word)
	fmt.Fprintf(&t.b, "<p>%s of history; %s, %s, %s, %s, %s; %s.</p>\n", seconds(t.endNs),
		Plural(len(t.in.Nodes), "node"), Plural(len(t.in.Tenures), "tenure"), Plural(t.in.ViolationCount, "violation"),
		Plural(t.in.ProblemCount, "history problem"), Plural(t.in.AnomalyCount, "anomaly"), t.faultCounts())
	t.b.WriteString("<p>One lane per node: a bar is a tenure, the time the node believed it was master " +
		"(from each status that answered is_master true: [completion, invoke + remaining_ms), merged where they overlap or touch). " +
		"Two nodes' bars at the same time are two masters. Hover a bar for its details; a shaded band is a fault in force.</p>\n")
	if t.in.ViolationCount > 0 {
		t.b.WriteString("<p>Violations, earliest first:</p>\n<ol class=\"violations\">\n")
		for _, v := range t.in.Earliest {
			links := ""
			for _, n := range v.Nodes {
				links += fmt.Sprintf(" <a href=\"#%s\">%s</a>", t.laneID(n), esc(n))
			}
			fmt.Fprintf(&t.b, "<li class=\"violation\" data-kind=\"%s\" data-ops=\"%s\"><b>%s</b> of%s at %s: %s</li>\n",
				esc(v.Kind), intsText(v.Ops), esc(v.Kind), links, seconds(v.StartNs), esc(v.Text))
		}
		if shown := len(t.in.Earliest); t.in.ViolationCount > shown {
			fmt.Fprintf(&t.b, "<li>... and %d more (%s lists every one)</li>\n", t.in.ViolationCount-shown, esc(t.in.DetailsFile))
		}
		t.b.WriteString("</ol>\n")
	}
	t.b.WriteString("</div>\n")
}

// legend names each node's colour, the fault shades and the violation
// marks.
func (t *masterTimeline) legend() {
	t.b.WriteString("<div class=\"legend\">\n")
	for _, n := range t.in.Nodes {
		fmt.Fprintf(&t.b, "<span><i class=\"s%d\"></i>%s master</span>", t.colour(n), esc(n))
	}
	t.faultLegend()
	t.b.WriteString(violationLegend + "</div>\n")
}

// lane draws one node: its tenures and its violation marks.
func (t *masterTimeline) lane(i int, node string) {
	var marks []master.ViolationMark
	for _, m := range t.in.Marks {
		if m.Node == node {
			marks = append(marks, m)
		}
	}
	var tenures []master.MasterTenure
	for _, te := range t.in.Tenures {
		if te.Node == node {
			tenures = append(tenures, te)
		}
	}
	cls := "row lane"
	if len(marks) > 0 {
		cls += " violating"
	}
	fmt.Fprintf(&t.b, "<div class=\"%s\" id=\"%s\" data-node=\"%s\" style=\"height:%dpx\"><span class=\"label\" title=\"%s: %s\">%s</span><div class=\"track\">",
		cls, t.laneID(node), esc(node), laneHeight(1), esc(node), Plural(len(tenures), "tenure"), esc(node))
	for _, m := range marks {
		fmt.Fprintf(&t.b, "<i class=\"vb\" style=\"%s\"></i>", t.span(m.StartNs, m.EndNs))
	}
	for _, te := range tenures {
		t.tenure(te, slices.ContainsFunc(marks, func(m master.ViolationMark) bool { return m.StartNs < te.EndNs && te.StartNs < m.EndNs }))
	}
	for _, m := range marks {
		title := fmt.Sprintf("%s was master together with another node from %s to %s", m.Node, seconds(m.StartNs), seconds(m.EndNs))
		if m.Count > 1 {
			title += fmt.Sprintf(" (%d overlaps); the first", m.Count)
		}
		title += ": " + m.First.Text
		fmt.Fprintf(&t.b, "<b class=\"v\" data-kind=\"%s\" data-count=\"%d\" style=\"%s\" title=\"%s\"></b>",
			esc(m.First.Kind), m.Count, t.span(m.StartNs, m.EndNs), esc(title))
	}
	t.b.WriteString("</div></div>\n")
}

func (t *masterTimeline) tenure(te master.MasterTenure, named bool) {
	title := fmt.Sprintf("%s believed it was master [%s, %s): %s merged, status ops %d to %d",
		te.Node, seconds(te.StartNs), seconds(te.EndNs), Plural(te.Beliefs, "is_master answer"), te.FirstOp, te.LastOp)
	if te.StopOp != nil {
		title += fmt.Sprintf("; a stop (op %d) was sent to it meanwhile", *te.StopOp)
	}
	cls := fmt.Sprintf("h s%d", t.colour(te.Node))
	if named {
		cls += " x"
	}
	fmt.Fprintf(&t.b, "<i class=\"%s\" data-node=\"%s\" data-op=\"%d\" data-row=\"0\" style=\"%s;top:%dpx\" title=\"%s\"></i>",
		cls, esc(te.Node), te.FirstOp, t.span(te.StartNs, te.EndNs), laneStripPx, esc(title))
}
