package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/netsim"
	"chunklease/workloads"
)

// MessagesFile is the message diagram, named as Maelstrom's.
const MessagesFile = "messages.svg"

// Message diagram limits and geometry (SVG pixels).
const (
	diagramMessages = 250                     // messages per panel at most
	diagramHead     = 1500 * time.Millisecond // the first panel's window
	diagramAround   = 150 * time.Millisecond  // margin around a violation's ops
	labelMax        = 64                      // label characters (the whole body is the arrow's hover title)
	colW            = 130
	rowH            = 17
	leftW           = 90
	headH           = 64
	labelRoom       = 300 // right of the last column, for labels of messages sent from it
)

// Arrow colours, as Maelstrom's messages.svg: errors pink, client traffic
// blue (darker than Maelstrom's, to read on white), node to node black;
// dropped messages grey.
const (
	colourError   = "#FF1E90"
	colourClient  = "#2F7FD0"
	colourNode    = "#000000"
	colourDropped = "#999999"
)

// diagramPanel is one window of the diagram: a time span and, around a
// violation, the chunk whose messages it shows and the ops the violation
// names (their messages are marked).
type diagramPanel struct {
	title        string
	fromNs, toNs int64
	chunk        string // "" shows every message
	ops          []workloads.FocusOp
}

// dmsg is a journaled message placed in a panel.
type dmsg struct {
	e              netsim.Entry
	sentNs, doneNs int64 // doneNs < 0: never delivered nor dropped
	body           msgBody
}

// msgBody is what the diagram reads from a body.
type msgBody struct {
	Type      string `json:"type"`
	MsgID     *int64 `json:"msg_id"`
	InReplyTo *int64 `json:"in_reply_to"`
	Chunk     string `json:"chunk_handle"`
	Text      string `json:"text"`
}

// diagramPanels chooses the windows: around the first violation when
// there is one (focus: the violation and the span of the ops it names),
// then the first seconds of the test.
func diagramPanels(focus *workloads.Focus) []diagramPanel {
	var panels []diagramPanel
	if focus != nil {
		panels = append(panels, diagramPanel{
			title: fmt.Sprintf("Around the first violation: %s on %s at %s (messages about %s only)",
				focus.Kind, focus.Key, secs(focus.StartNs), focus.Key),
			fromNs: max(focus.FromNs-int64(diagramAround), 0), toNs: focus.ToNs + int64(diagramAround), chunk: focus.Key, ops: focus.Ops})
	}
	return append(panels, diagramPanel{title: fmt.Sprintf("The first %gs of the test (init not shown)", diagramHead.Seconds()),
		fromNs: 0, toNs: int64(diagramHead)})
}

// WriteMessageDiagram draws MessagesFile into dir from the network's
// journal (entries), start being relative time 0 (messages before it,
// init, are left out): around the first violation (focus, nil for none),
// then the first seconds of the test. With initOnly (the run failed
// before its main phase) it draws the run's first seconds from start,
// init included. nemesis holds the nemesis ops (a whole history will
// do); nodes are the run's node ids.
func WriteMessageDiagram(dir string, entries []netsim.Entry, start time.Time, initOnly bool, nemesis []history.Op, nodes []string, focus *workloads.Focus) error {
	panels := diagramPanels(focus)
	if initOnly {
		panels = []diagramPanel{{title: "The run's first seconds, init included (the run failed before its main phase)", toNs: int64(2 * diagramHead)}}
	} else {
		panels = append(panels, answeredPanels(entries, start, panels)...)
	}
	return writeMessageDiagram(filepath.Join(dir, MessagesFile), entries, start, nemesis, nodes, panels)
}

// writeMessageDiagram draws the panels as one SVG: a Lamport diagram per
// panel, one column per client and node, time downwards, one row per
// event (send, delivery, drop, nemesis op), an arrow per message labelled
// with its body; hovering an arrow shows the whole body and its times.
// start is relative time 0; messages sent before it (init) are left out.
// nemesis holds the nemesis ops (a whole history will do).
func writeMessageDiagram(path string, entries []netsim.Entry, start time.Time, nemesis []history.Op, nodes []string, panels []diagramPanel) error {
	var out bytes.Buffer
	var body bytes.Buffer
	y, width := drawLegend(&body, 10), 400
	for _, p := range panels {
		msgs, cut := selectMessages(entries, start, p)
		h, w := drawPanel(&body, y, p, msgs, cut, nemesis, nodes)
		y += h + 30
		width = max(width, w)
	}
	fmt.Fprintf(&out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n",
		width, y, width, y)
	out.WriteString(diagramStyle)
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	return os.WriteFile(path, out.Bytes(), 0o644)
}

const diagramStyle = `<style>
.title{font-size:14px;font-weight:bold}
.lbl{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.msg:hover line{stroke-width:3}
.col{font-weight:bold}
.life{stroke:#ccc}
.nem rect{fill:#E9C46A;opacity:.45}
.note{fill:#a00}
.hit .under{stroke:#E00000;stroke-width:8;opacity:.25}
.hit .lbl{font-weight:bold}
.legend text{fill:#333}
</style>
<defs>
<marker id="a-node" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#000000"/></marker>
<marker id="a-client" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#2F7FD0"/></marker>
<marker id="a-error" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#FF1E90"/></marker>
</defs>
`

// selectMessages returns the panel's messages in id order, at most
// diagramMessages, and whether more were cut.
func selectMessages(entries []netsim.Entry, start time.Time, p diagramPanel) ([]dmsg, bool) {
	var out []dmsg
	asked := map[[2]string]bool{} // (requester, msg_id) of shown requests, for their replies
	for _, e := range entries {
		sent := e.SentAt.Sub(start).Nanoseconds()
		if e.SentAt.Before(start) || sent < p.fromNs || sent >= p.toNs {
			continue
		}
		m := dmsg{e: e, sentNs: sent, doneNs: -1}
		_ = json.Unmarshal(e.Body, &m.body) // the network passes objects only
		if !e.DoneAt.IsZero() {
			m.doneNs = e.DoneAt.Sub(start).Nanoseconds()
		}
		if p.chunk != "" && !concerns(m, p.chunk, asked) {
			continue
		}
		if len(out) == diagramMessages {
			return out, true
		}
		out = append(out, m)
	}
	return out, false
}

// maxAnsweredPanels bounds the panels answeredPanels adds.
const maxAnsweredPanels = 4

// answeredPanels returns, for each type of client request (init aside)
// that panels answer ok nowhere, a panel around the first
// request of that type answered ok in the run (its chunk's messages only,
// when it names one), in the order of those answers, at most
// maxAnsweredPanels. A run whose first seconds went to faults (every
// node paused, say) thus still shows how each kind of request is served.
func answeredPanels(entries []netsim.Entry, start time.Time, panels []diagramPanel) []diagramPanel {
	covered := map[string]bool{}
	for _, p := range panels {
		msgs, _ := selectMessages(entries, start, p)
		for _, m := range msgs {
			if netsim.IsClient(m.e.Dest) && strings.HasSuffix(m.body.Type, "_ok") {
				covered[strings.TrimSuffix(m.body.Type, "_ok")] = true
			}
		}
	}
	type request struct {
		body   msgBody
		sentNs int64
		node   string
	}
	asked := map[[2]string]request{} // (client, msg_id) -> its request
	var out []diagramPanel
	for _, e := range entries {
		if len(out) == maxAnsweredPanels {
			break
		}
		if e.SentAt.Before(start) {
			continue
		}
		var b msgBody
		_ = json.Unmarshal(e.Body, &b)
		sent := e.SentAt.Sub(start).Nanoseconds()
		if netsim.IsClient(e.Src) && b.MsgID != nil && b.Type != "init" { // init: the harness's, to a restarted node
			asked[[2]string{e.Src, fmt.Sprint(*b.MsgID)}] = request{body: b, sentNs: sent, node: e.Dest}
			continue
		}
		if !netsim.IsClient(e.Dest) || b.InReplyTo == nil || e.DoneAt.IsZero() {
			continue
		}
		req, ok := asked[[2]string{e.Dest, fmt.Sprint(*b.InReplyTo)}]
		if !ok || b.Type != req.body.Type+"_ok" || covered[req.body.Type] {
			continue
		}
		covered[req.body.Type] = true
		p := diagramPanel{title: fmt.Sprintf("The first %s answered ok: sent by %s to %s at %s",
			req.body.Type, e.Dest, req.node, secs(req.sentNs)),
			fromNs: max(req.sentNs-int64(diagramAround), 0), toNs: e.DoneAt.Sub(start).Nanoseconds() + int64(diagramAround), chunk: req.body.Chunk}
		if p.chunk != "" {
			p.title += fmt.Sprintf(" (messages about %s only)", p.chunk)
		}
		out = append(out, p)
	}
	return out
}

// concerns reports whether m is about chunk: it names it, or replies to a
// request that did. It remembers the requests it accepts.
func concerns(m dmsg, chunk string, asked map[[2]string]bool) bool {
	ok := m.body.Chunk == chunk
	if !ok && m.body.InReplyTo != nil {
		ok = asked[[2]string{m.e.Dest, fmt.Sprint(*m.body.InReplyTo)}]
	}
	if ok && m.body.MsgID != nil {
		asked[[2]string{m.e.Src, fmt.Sprint(*m.body.MsgID)}] = true
	}
	return ok
}

// drawLegend writes the legend at y and returns the y below it: what
// each kind of arrow means.
func drawLegend(b *bytes.Buffer, y int) int {
	type item struct {
		text, colour, dash, marker, tail string
		hit                              bool
	}
	items := []item{
		{text: "node to node", colour: colourNode, marker: "a-node"},
		{text: "client to node, and replies", colour: colourClient, marker: "a-client"},
		{text: "error reply", colour: colourError, marker: "a-error"},
		{text: "dropped by a partition", colour: colourDropped, dash: "5,3", tail: "✕"},
		{text: "not delivered (still queued at the end)", colour: colourClient, dash: "2,3", marker: "a-client"},
		{text: "an op the violation names (bold label: [op N])", colour: colourClient, marker: "a-client", hit: true},
	}
	fmt.Fprintf(b, "<g class=\"legend\" transform=\"translate(0,%d)\"><text x=\"8\" y=\"12\" font-weight=\"bold\">Arrows:</text>\n", y)
	x, ly := 64, 8 // items wrap at legendWidth
	for _, it := range items {
		w := 48 + len(it.text)*6
		if x > 64 && x+w > legendWidth {
			x, ly = 64, ly+18
		}
		cls := "sample"
		if it.hit {
			cls += " hit"
		}
		dash, end := "", ""
		if it.dash != "" {
			dash = fmt.Sprintf(" stroke-dasharray=\"%s\"", it.dash)
		}
		if it.marker != "" {
			end = fmt.Sprintf(" marker-end=\"url(#%s)\"", it.marker)
		}
		fmt.Fprintf(b, "<g class=\"%s\">", cls)
		if it.hit {
			fmt.Fprintf(b, "<line class=\"under\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", x, ly, x+34, ly)
		}
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.3\"%s%s/>", x, ly, x+34, ly, it.colour, dash, end)
		if it.tail != "" {
			fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">%s</text>", x+34, ly+4, it.colour, it.tail)
		}
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s</text></g>\n", x+40, ly+4, esc(it.text))
		x += w
	}
	ly += 18
	fmt.Fprintf(b, "<rect x=\"64\" y=\"%d\" width=\"34\" height=\"12\" fill=\"#E9C46A\" opacity=\".45\"/>"+
		"<text x=\"104\" y=\"%d\">a nemesis op (partition, kill, pause, ...) and what it did; hover an arrow for the whole message</text></g>\n", ly-6, ly+4)
	return y + ly + 20
}

// legendWidth is where the legend's items wrap (the narrowest diagram,
// three columns, is about this wide).
const legendWidth = 780

// markOps finds the messages of the ops a panel's violation names: for
// each op, the request its client sent to the op's node closest to the
// op's invoke (the harness records the invoke just before it sends), and
// the node's reply to it. It returns a tag per message index.
func markOps(msgs []dmsg, ops []workloads.FocusOp) map[int]string {
	tags := map[int]string{}
	for _, op := range ops {
		best, bestD := -1, int64(math.MaxInt64)
		for i, m := range msgs {
			_, taken := tags[i]
			if taken || !netsim.IsClient(m.e.Src) || m.e.Dest != op.Node || m.sentNs < op.InvokeNs-int64(time.Millisecond) || m.sentNs > op.DoneNs {
				continue
			}
			if d := max(m.sentNs-op.InvokeNs, op.InvokeNs-m.sentNs); d < bestD {
				best, bestD = i, d
			}
		}
		if best < 0 {
			continue
		}
		tags[best] = fmt.Sprintf("op %d", op.Index)
		req := msgs[best]
		for i, m := range msgs {
			if m.e.Src == op.Node && m.e.Dest == req.e.Src && m.body.InReplyTo != nil && req.body.MsgID != nil && *m.body.InReplyTo == *req.body.MsgID {
				if op.DoneIndex >= 0 {
					tags[i] = fmt.Sprintf("op %d", op.DoneIndex)
				} else {
					tags[i] = fmt.Sprintf("reply to op %d", op.Index)
				}
				break
			}
		}
	}
	return tags
}

// row is one event of a panel: a message's send or end, or a nemesis op.
type row struct {
	t     int64
	msg   int // index in msgs; -1 for a nemesis op
	end   bool
	label string
}

// panelRows orders the events of msgs and the nemesis ops between the
// panel's start and its last event. A nemesis op right after another of
// the same f in the history (the next index) is that step's completion.
func panelRows(msgs []dmsg, nemesis []history.Op, p diagramPanel) []row {
	var rows []row
	last := p.fromNs
	for i, m := range msgs {
		rows = append(rows, row{t: m.sentNs, msg: i})
		if m.doneNs >= 0 {
			rows = append(rows, row{t: m.doneNs, msg: i, end: true})
			last = max(last, m.doneNs)
		}
		last = max(last, m.sentNs)
	}
	prev, prevIndex := "", -2
	for _, op := range nemesis {
		if op.Index != prevIndex+1 {
			prev = "" // an op of another process came between
		}
		prevIndex = op.Index
		if !op.Process.Nemesis || op.Time < p.fromNs || op.Time > last {
			prev = ""
			continue
		}
		r := row{t: op.Time, msg: -1, label: nemesisLabel(op)}
		if op.F == prev { // the completion of the same step replaces its invoke
			rows[len(rows)-1] = r
		} else {
			rows = append(rows, r)
		}
		prev = op.F
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	return rows
}

// nemesisLabel names a nemesis op and whom it affects.
func nemesisLabel(op history.Op) string {
	var v []json.RawMessage
	var g map[string][]string
	if op.F == workloads.StartPartition && json.Unmarshal(op.Value, &v) == nil && len(v) == 2 && json.Unmarshal(v[1], &g) == nil {
		shape, _ := workloads.DescribeGrudge(g)
		return op.F + ": " + shape
	}
	if string(op.Value) == "null" || len(op.Value) == 0 {
		return op.F
	}
	return op.F + " " + string(op.Value)
}

// maxClientColumns: past this many clients in a panel, all clients share
// one column "clients" and each label names its client, so a run with
// many workers stays readable.
const maxClientColumns = 6

// clientsColumn is the shared column's name.
const clientsColumn = "clients"

// columns are the clients that appear (natural order; one shared column
// past maxClientColumns), then the nodes. column maps an endpoint to its
// column.
func columns(msgs []dmsg, nodes []string) (cols []string, column func(string) string) {
	var clients []string
	for _, m := range msgs {
		for _, name := range []string{m.e.Src, m.e.Dest} {
			if netsim.IsClient(name) && !slices.Contains(clients, name) {
				clients = append(clients, name)
			}
		}
	}
	slices.SortFunc(clients, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) }) // c2 before c10
	column = func(name string) string { return name }
	if len(clients) > maxClientColumns {
		clients = []string{clientsColumn}
		column = func(name string) string {
			if netsim.IsClient(name) {
				return clientsColumn
			}
			return name
		}
	}
	cols = append(clients, nodes...)
	for _, m := range msgs { // a sender outside node_ids still gets a column
		for _, name := range []string{column(m.e.Src), column(m.e.Dest)} {
			if !slices.Contains(cols, name) {
				cols = append(cols, name)
			}
		}
	}
	return cols, column
}

// drawPanel writes one panel at y and returns its height and width.
func drawPanel(b *bytes.Buffer, y int, p diagramPanel, msgs []dmsg, cut bool, nemesis []history.Op, nodes []string) (int, int) {
	cols, column := columns(msgs, nodes)
	rows := panelRows(msgs, nemesis, p)
	ys := rowYs(rows)
	width := leftW + len(cols)*colW + labelRoom
	height := ys[len(ys)-1] + 2*rowH
	fmt.Fprintf(b, "<g class=\"panel\" transform=\"translate(0,%d)\">\n<text class=\"title\" x=\"8\" y=\"16\">%s</text>\n", y, esc(p.title))
	note := fmt.Sprintf("%d messages from %s to %s", len(msgs), secs(p.fromNs), secs(p.toNs))
	if cut {
		note += fmt.Sprintf(": only the first %d are drawn", diagramMessages)
	}
	if len(msgs) == 0 {
		note = fmt.Sprintf("no journaled messages from %s to %s (the journal keeps the first %d and the latest %d messages of a run)",
			secs(p.fromNs), secs(p.toNs), netsim.JournalHead, netsim.JournalTail)
	}
	fmt.Fprintf(b, "<text x=\"8\" y=\"34\">%s</text>\n", esc(note))
	x := func(name string) int { return leftW + slices.Index(cols, column(name))*colW + colW/2 }
	shared := slices.Contains(cols, clientsColumn)
	for _, c := range cols {
		fmt.Fprintf(b, "<text class=\"col\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>"+
			"<line class=\"life\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
			x(c), headH-10, esc(c), x(c), headH-4, x(c), height)
	}
	rowY := make(map[[2]int]int, len(rows)) // (msg, end) -> y
	for i, r := range rows {
		ry := ys[i]
		if r.msg >= 0 {
			rowY[[2]int{r.msg, boolInt(r.end)}] = ry
		}
		if i%10 == 0 || r.msg < 0 {
			fmt.Fprintf(b, "<text x=\"4\" y=\"%d\" fill=\"#666\">%s</text>\n", ry+4, secs(r.t))
		}
		if r.msg < 0 {
			fmt.Fprintf(b, "<g class=\"nem\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/><text x=\"%d\" y=\"%d\">%s</text></g>\n",
				leftW, ry-rowH/2, width-leftW, rowH, leftW+4, ry+4, esc(truncate(r.label, 140)))
		}
	}
	tags := markOps(msgs, p.ops)
	for i, m := range msgs {
		look := arrowLook{shared: shared, tag: tags[i], omitChunk: p.chunk != ""}
		drawArrow(b, m, x(m.e.Src), x(m.e.Dest), rowY[[2]int{i, 0}], rowY[[2]int{i, 1}], height-rowH/2, look)
	}
	b.WriteString("</g>\n")
	return height, width
}

// rowYs places the rows, top to bottom: a nemesis row gets room above
// and below, so its band does not run into the labels of the messages
// around it. The last entry is the y of the end of the panel.
func rowYs(rows []row) []int {
	ys := make([]int, len(rows)+1)
	y := headH
	for i, r := range rows {
		y += rowH
		if r.msg < 0 {
			y += rowH / 2
		}
		ys[i] = y
		if r.msg < 0 {
			y += rowH / 2
		}
	}
	ys[len(rows)] = y + rowH
	return ys
}

// arrowLook is how an arrow is labelled: the client's name when clients
// share a column, a tag when the message belongs to an op the violation
// names, and whether the panel's chunk goes without saying.
type arrowLook struct {
	shared    bool
	tag       string
	omitChunk bool
}

// drawArrow draws one message from (x1, y1) to (x2, y2); a dropped one
// stops short with a cross, one never delivered runs to the bottom; one
// of the violation's ops is underlaid in red with its label in bold.
func drawArrow(b *bytes.Buffer, m dmsg, x1, x2, y1, y2, bottom int, look arrowLook) {
	colour, marker := colourNode, "a-node"
	switch {
	case m.body.Type == "error":
		colour, marker = colourError, "a-error"
	case netsim.IsClient(m.e.Src) || netsim.IsClient(m.e.Dest):
		colour, marker = colourClient, "a-client"
	}
	dash, tail := "", ""
	fate := fmt.Sprintf("delivered at %s", secs(m.doneNs))
	switch {
	case m.e.Dropped && m.doneNs >= 0:
		colour, dash = colourDropped, ` stroke-dasharray="5,3"`
		x2 = x1 + (x2-x1)*6/10
		tail = fmt.Sprintf("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"%s\">✕</text>", x2, y2+4, colourDropped)
		fate = fmt.Sprintf("dropped by a partition at %s", secs(m.doneNs))
	case m.doneNs < 0:
		dash, y2 = ` stroke-dasharray="2,3"`, bottom
		fate = "not delivered before the journal was read (still queued, or its receiver closed)"
	}
	tip := fmt.Sprintf("%s → %s, id %d, sent at %s, %s: %s", m.e.Src, m.e.Dest, m.e.ID, secs(m.sentNs), fate, m.e.Body)
	cls, under, text := "msg", "", clientPrefix(m, look.shared)+label(m, look.omitChunk)
	if look.tag != "" {
		cls, text = "msg hit", "["+look.tag+"] "+text
		tip = look.tag + " of the violation: " + tip
		under = fmt.Sprintf("<line class=\"under\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", x1, y1, x2, y2)
	}
	end := ""
	if tail == "" {
		end = fmt.Sprintf(" marker-end=\"url(#%s)\"", marker)
	}
	// The label starts at the sender, on the send's own row, so labels of
	// messages sent at once do not overlap.
	lx, anchor := x1+6, "start"
	if x2 < x1 {
		lx, anchor = x1-6, "end"
	}
	fmt.Fprintf(b, "<g class=\"%s\"><title>%s</title>%s<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.3\"%s%s/>%s"+
		"<text class=\"lbl\" x=\"%d\" y=\"%d\" text-anchor=\"%s\" fill=\"%s\">%s</text></g>\n",
		cls, esc(tip), under, x1, y1, x2, y2, colour, dash, end, tail, lx, y1-3, anchor, colour, esc(text))
}

// clientPrefix names the client of a message drawn in the shared clients
// column.
func clientPrefix(m dmsg, shared bool) string {
	switch {
	case !shared:
		return ""
	case netsim.IsClient(m.e.Src):
		return m.e.Src + ": "
	case netsim.IsClient(m.e.Dest):
		return m.e.Dest + ": "
	}
	return ""
}

// labelFirst are the fields that decide what a lease message did, in the
// order a label shows them: who asks and who got the lease, its token
// and times, a master's answer, then the protocol's ballots. Other
// fields follow in alphabetical order, then labelLast.
var labelFirst = []string{"server", "primary", "token", "expires_in_ms", "new_expires_in_ms", "remaining_ms", "expired",
	"is_master", "master", "lease_ms", "ok", "lease", "ballot", "promised"}

// labelLast are the fields that matter least to a reader: the chunk (the
// panel's title names it where the panel is about one chunk) and the
// request id a peer reply repeats.
var labelLast = []string{"chunk_handle", "req_id"}

// labelRank orders a label's fields.
func labelRank(k string) int {
	if i := slices.Index(labelFirst, k); i >= 0 {
		return i
	}
	if i := slices.Index(labelLast, k); i >= 0 {
		return len(labelFirst) + 1 + i
	}
	return len(labelFirst)
}

// label is the body's type and its other fields (or an error's text),
// without msg_id and in_reply_to, the deciding fields first (labelFirst)
// and chunk_handle last (left out with omitChunk: the panel is about one
// chunk), cut to labelMax characters. Strings lose their quotes, nested
// objects show their values joined by "/", and long numbers their last
// digits, so a ballot reads 3/…8123/n1.
func label(m dmsg, omitChunk bool) string {
	if m.body.Type == "error" {
		return truncate("error "+m.body.Text, labelMax)
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(m.e.Body, &fields)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "type" && k != "msg_id" && k != "in_reply_to" && (k != "chunk_handle" || !omitChunk) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(labelRank(a), labelRank(b)), strings.Compare(a, b))
	})
	parts := []string{m.body.Type}
	for _, k := range keys {
		parts = append(parts, k+"="+compactValue(fields[k]))
	}
	return truncate(strings.Join(parts, " "), labelMax)
}

// compactValue shortens a JSON value for a label.
func compactValue(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return compactAny(v)
}

func compactAny(v any) string {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = compactAny(t[k])
		}
		return strings.Join(parts, "/")
	case float64:
		s := strconv.FormatFloat(t, 'f', -1, 64)
		if len(s) > 7 {
			s = "…" + s[len(s)-4:]
		}
		return s
	case string:
		return t
	case nil:
		return "null"
	}
	raw, _ := json.Marshal(v) // decoded JSON always marshals
	return string(raw)
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func secs(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }

func esc(s string) string { return html.EscapeString(s) }
