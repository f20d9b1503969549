package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/netsim"
	"chunklease/workloads"
	"chunklease/workloads/lease"
)

// journalOf builds journal entries: each (src, dest, body, sentMs,
// doneMs, dropped); doneMs < 0 leaves the message undelivered.
type jmsg struct {
	src, dest, body string
	sentMs, doneMs  int
	dropped         bool
}

func journalOf(start time.Time, msgs []jmsg) []netsim.Entry {
	var out []netsim.Entry
	for i, m := range msgs {
		e := netsim.Entry{Message: netsim.Message{ID: int64(i), Src: m.src, Dest: m.dest, Body: json.RawMessage(m.body)},
			SentAt: start.Add(time.Duration(m.sentMs) * time.Millisecond), Dropped: m.dropped}
		if m.doneMs >= 0 {
			e.DoneAt = start.Add(time.Duration(m.doneMs) * time.Millisecond)
		}
		out = append(out, e)
	}
	return out
}

// classCounts parses an SVG strictly and counts elements by class.
func classCounts(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	counts := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Local == "class" {
					counts[a.Value]++
				}
			}
		}
	}
}

func TestMessageDiagram(t *testing.T) {
	start := time.Unix(1000, 0)
	entries := journalOf(start, []jmsg{
		{"c0", "n1", `{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1","n2"]}`, -5, -4, false}, // before start: left out
		{"c4", "n1", `{"type":"lease_grant","msg_id":1,"chunk_handle":"ch_1","server":"cs1"}`, 10, 10, false},
		{"n1", "n2", `{"type":"prepare","msg_id":1,"chunk_handle":"ch_1","ballot":{"counter":3,"incarnation":1795428779970,"node":"n1"}}`, 11, 21, false},
		{"n2", "n1", `{"type":"prepare_ok","in_reply_to":1,"chunk_handle":"ch_1","ok":true}`, 21, 25, true},
		{"c5", "n2", `{"type":"lease_check","msg_id":1,"chunk_handle":"ch_2"}`, 30, 30, false},
		{"n2", "c5", `{"type":"error","in_reply_to":1,"code":11,"text":"no majority"}`, 40, 40, false},
		{"n1", "c4", `{"type":"lease_renew_ok","in_reply_to":1,"token":7}`, 50, -1, false},
	})
	nemesis := []history.Op{
		{Index: 0, Time: 15e6, Process: history.NemesisProcess, Type: history.Info, F: workloads.StartPartition, Value: json.RawMessage(`"one"`)},
		{Index: 1, Time: 15e6, Process: history.NemesisProcess, Type: history.Info, F: workloads.StartPartition,
			Value: json.RawMessage(`["isolated",{"n1":["n2"],"n2":["n1"]}]`)},
	}
	path := filepath.Join(t.TempDir(), MessagesFile)
	if dir := os.Getenv("PLOT_OUT"); dir != "" { // to look at it
		path = filepath.Join(dir, MessagesFile)
	}
	// The violation names c4's grant (ops 7-8, answered by n1): its
	// request and the reply to it are marked in its panel.
	ops := []workloads.FocusOp{{Index: 7, DoneIndex: 8, F: "grant", Node: "n1", InvokeNs: 9.8e6, DoneNs: 50e6}}
	panels := []diagramPanel{{title: "around", fromNs: 0, toNs: 1e9, chunk: "ch_1", ops: ops}, {title: "all", fromNs: 0, toNs: 1e9}}
	if err := writeMessageDiagram(path, entries, start, nemesis, []string{"n1", "n2"}, panels); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := classCounts(t, doc)
	// ch_1 panel: grant, prepare, its dropped reply, and the renew_ok to
	// c4's request; all panel: every message after start.
	if c["panel"] != 2 || c["msg"]+c["msg hit"] != 4+6 || c["msg hit"] != 2 || c["nem"] != 2 || c["legend"] != 1 {
		t.Errorf("counts %v: want 2 panels, 10 messages (2 of the violation's op), 2 nemesis rows, a legend", c)
	}
	s := string(doc)
	// The deciding fields come first; the chunk comes last, and not at all
	// in the panel about that chunk.
	for _, want := range []string{">[op 7] lease_grant server=cs1</text>", ">[op 8] lease_renew_ok token=7</text>",
		">lease_grant server=cs1 chunk_handle=ch_1</text>", ">prepare ballot=3/…9970/n1</text>", ">prepare ballot=3/…9970/n1 chunk_handle=ch_1</text>",
		"dropped by a partition at 0.025s", "not delivered before the journal was read", "error no majority", `stroke="#FF1E90"`,
		"start-partition: n1 | n2", ">dropped by a partition</text>", ">error reply</text>", "op 7 of the violation: c4 → n1"} {
		if !strings.Contains(s, want) {
			t.Errorf("the diagram lacks %q", want)
		}
	}
	if strings.Contains(s, "node_ids") {
		t.Error("init is drawn; it was sent before the start")
	}
}

// TestMessageDiagramPanels: a violation gets its own panel, first, about
// its chunk and around its ops.
func TestMessageDiagramPanels(t *testing.T) {
	ops := []history.Op{{Index: 0, Time: 2e9}, {Index: 1, Time: 3e9}}
	lr := lease.LeaseResult{Violations: []lease.Violation{
		{Kind: lease.TwoPrimaries, Chunk: "ch_9", Ops: []int{0, 1}, StartNs: 2.5e9, EndNs: 2.6e9},
		{Kind: lease.TwoPrimaries, Chunk: "ch_8", StartNs: 4e9, EndNs: 5e9},
	}}
	focus := lease.FocusOf(ops, lr)
	p := diagramPanels(focus)
	if len(p) != 2 || p[0].chunk != "ch_9" || p[0].fromNs != 2e9-int64(diagramAround) || p[0].toNs != 3e9+int64(diagramAround) || p[1].chunk != "" {
		t.Errorf("panels %+v", p)
	}
	if p := diagramPanels(lease.FocusOf(ops, nil)); len(p) != 1 || p[0].fromNs != 0 {
		t.Errorf("without a violation: %+v", p)
	}
}

// TestManyClientsShareAColumn: past maxClientColumns clients, one
// "clients" column holds them all and labels name the client.
func TestManyClientsShareAColumn(t *testing.T) {
	var msgs []dmsg
	for i := range maxClientColumns + 1 {
		c := "c" + string(rune('a'+i))
		msgs = append(msgs, dmsg{e: netsim.Entry{Message: netsim.Message{Src: c, Dest: "n1"}}, body: msgBody{Type: "echo"}})
	}
	cols, column := columns(msgs, []string{"n1", "n2"})
	if strings.Join(cols, " ") != "clients n1 n2" || column("cb") != clientsColumn || column("n2") != "n2" {
		t.Errorf("columns %v", cols)
	}
	if got := clientPrefix(msgs[1], true); got != "cb: " {
		t.Errorf("label prefix %q", got)
	}
}

// TestAnsweredPanels: a run whose first seconds answer no grant (every
// node paused) gets a panel around the first grant answered ok, about
// its chunk; a type the first seconds do answer gets none, and neither
// does a request answered with an error or the init of a restarted node.
func TestAnsweredPanels(t *testing.T) {
	start := time.Unix(1000, 0)
	late := int(diagramHead.Milliseconds()) + 500
	entries := journalOf(start, []jmsg{
		{"c1", "n1", `{"type":"lease_check","msg_id":1,"chunk_handle":"ch_1"}`, 10, 11, false},
		{"n1", "c1", `{"type":"lease_check_ok","in_reply_to":1,"primary":null}`, 20, 21, false},
		{"c2", "n1", `{"type":"lease_grant","msg_id":1,"chunk_handle":"ch_1","server":"cs1"}`, 30, 31, false},
		{"n1", "c2", `{"type":"error","in_reply_to":1,"code":11,"text":"no majority"}`, late - 100, late - 99, false},
		{"c9", "n3", `{"type":"init","msg_id":1,"node_id":"n3","node_ids":["n1","n2","n3"]}`, late - 50, late - 49, false},
		{"n3", "c9", `{"type":"init_ok","in_reply_to":1}`, late - 40, late - 39, false},
		{"c2", "n2", `{"type":"lease_grant","msg_id":2,"chunk_handle":"ch_2","server":"cs2"}`, late, late + 1, false},
		{"n2", "n3", `{"type":"prepare","msg_id":5,"chunk_handle":"ch_2"}`, late + 2, late + 3, false},
		{"n2", "n3", `{"type":"prepare","msg_id":6,"chunk_handle":"ch_9"}`, late + 2, late + 3, false},
		{"n2", "c2", `{"type":"lease_grant_ok","in_reply_to":2,"primary":"cs2"}`, late + 9, late + 10, false},
		{"c3", "n1", `{"type":"lease_grant","msg_id":1,"chunk_handle":"ch_3","server":"cs3"}`, late + 20, late + 21, false},
		{"n1", "c3", `{"type":"lease_grant_ok","in_reply_to":1,"primary":"cs3"}`, late + 30, late + 31, false},
	})
	p := answeredPanels(entries, start, diagramPanels(nil))
	if len(p) != 1 || p[0].chunk != "ch_2" || p[0].fromNs != int64(late)*1e6-int64(diagramAround) ||
		p[0].toNs != int64(late+10)*1e6+int64(diagramAround) || !strings.Contains(p[0].title, "The first lease_grant answered ok: sent by c2 to n2") {
		t.Fatalf("panels %+v: want one, around c2's grant of ch_2", p)
	}
	path := filepath.Join(t.TempDir(), MessagesFile)
	if err := WriteMessageDiagram(filepath.Dir(path), entries, start, false, nil, []string{"n1", "n2", "n3"}, nil); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := classCounts(t, doc); c["panel"] != 2 {
		t.Errorf("counts %v: want 2 panels", c)
	}
	s := string(doc)
	for _, want := range []string{">lease_grant server=cs2</text>", ">lease_grant_ok primary=cs2</text>", ">prepare</text>"} {
		if !strings.Contains(s, want) {
			t.Errorf("the diagram lacks %q", want)
		}
	}
	if strings.Contains(s, "ch_9") {
		t.Error("the grant's panel shows a message about another chunk")
	}
}
