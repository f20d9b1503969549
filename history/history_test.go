package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestWriterAssignsDenseIndicesInContractKeyOrder(t *testing.T) {
	var buf bytes.Buffer
	hw := NewWriter(&buf)
	ops := []Op{
		{Index: 99, Time: 123456789, Process: Process{ID: 3}, Type: Invoke, F: "grant", Node: "n1",
			Value: json.RawMessage(`{"chunk":"ch_2", "server":"cs3","lease_ms":1000}`)},
		{Time: 125000000, Process: Process{ID: 3}, Type: OK, F: "grant", Node: "n1",
			Value: json.RawMessage(`{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs3","expires_in_ms":998}`)},
		{Time: 126000000, Process: NemesisProcess, Type: Info, F: "start-partition", Value: json.RawMessage(`"majority"`)},
		{Time: 127000000, Process: Process{ID: 4}, Type: Info, F: "renew", Node: "n2", Error: "net-timeout"},
	}
	for i, op := range ops {
		got, err := hw.Append(op)
		if err != nil {
			t.Fatal(err)
		}
		if got.Index != i {
			t.Errorf("op %d got index %d", i, got.Index)
		}
	}
	want := `{"index":0,"time":123456789,"process":3,"type":"invoke","f":"grant","node":"n1","value":{"chunk":"ch_2","server":"cs3","lease_ms":1000}}
{"index":1,"time":125000000,"process":3,"type":"ok","f":"grant","node":"n1","value":{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs3","expires_in_ms":998}}
{"index":2,"time":126000000,"process":"nemesis","type":"info","f":"start-partition","value":"majority"}
{"index":3,"time":127000000,"process":4,"type":"info","f":"renew","node":"n2","value":null,"error":"net-timeout"}
`
	if buf.String() != want {
		t.Errorf("history.jsonl:\n%s\nwant:\n%s", buf.String(), want)
	}
	if got := hw.Ops(); len(got) != 4 || got[3].Index != 3 {
		t.Errorf("Ops() = %+v", got)
	}
}

func TestWriterIsSafeForConcurrentAppends(t *testing.T) {
	var buf bytes.Buffer
	hw := NewWriter(&buf)
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := hw.Append(Op{Process: Process{ID: p}, Type: Invoke, F: "echo", Value: json.RawMessage(`"x"`)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	ops, err := ReadHistory(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 400 {
		t.Fatalf("read %d ops, want 400", len(ops))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsWriteErrorsAndStops(t *testing.T) {
	hw := NewWriter(failingWriter{})
	_, err := hw.Append(Op{Process: Process{ID: 0}, Type: Invoke, F: "echo"})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Append error = %v, want the write error", err)
	}
	if _, err2 := hw.Append(Op{Process: Process{ID: 0}, Type: Invoke, F: "echo"}); err2 == nil {
		t.Error("second Append after a write error succeeded")
	}
	if len(hw.Ops()) != 0 {
		t.Error("an op that was not written is recorded")
	}
	if _, err := NewWriter(&bytes.Buffer{}).Append(Op{Type: Invoke}); err == nil {
		t.Error("an op without f was accepted")
	}
}

func TestReadHistoryRoundTrips(t *testing.T) {
	ops := []Op{
		{Time: 0, Process: Process{ID: 0}, Type: Invoke, F: "check", Node: "n1", Value: json.RawMessage(`{"chunk":"ch_1"}`)},
		{Time: 5, Process: NemesisProcess, Type: Info, F: "stop-partition", Value: json.RawMessage(`null`)},
		{Time: 9, Process: Process{ID: 0}, Type: Fail, F: "check", Node: "n1", Value: json.RawMessage(`{"chunk":"ch_1"}`),
			Error: "temporarily-unavailable: no majority answered"},
	}
	var buf bytes.Buffer
	if err := WriteHistory(&buf, ops); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHistory(strings.NewReader(buf.String() + "\n\n")) // trailing blank lines are fine
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteHistory(&again, got); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() {
		t.Errorf("round trip changed the history:\n%s\nvs\n%s", again.String(), buf.String())
	}
	if !got[1].Process.Nemesis || got[2].Error == "" || got[2].Index != 2 {
		t.Errorf("decoded ops wrong: %+v", got)
	}
}

func TestReadHistoryNamesTheBadLine(t *testing.T) {
	good := `{"index":0,"time":1,"process":0,"type":"invoke","f":"echo","value":"a"}` + "\n"
	cases := []struct {
		name, line, want string
	}{
		{"not json", `{"index":1,`, "line 2: not a JSON op object"},
		{"array", `[1,2]`, "line 2: not a JSON op object"},
		{"missing index", `{"time":1,"process":0,"type":"ok","f":"echo"}`, `line 2: missing "index"`},
		{"index gap", `{"index":5,"time":1,"process":0,"type":"ok","f":"echo"}`, `line 2: "index" is 5, want 1`},
		{"missing time", `{"index":1,"process":0,"type":"ok","f":"echo"}`, `line 2: missing "time"`},
		{"negative time", `{"index":1,"time":-4,"process":0,"type":"ok","f":"echo"}`, `line 2: "time" is -4`},
		{"float time", `{"index":1,"time":1.5,"process":0,"type":"ok","f":"echo"}`, "line 2: not a JSON op object"},
		{"bad process", `{"index":1,"time":1,"process":"n1","type":"ok","f":"echo"}`, `process must be an integer or "nemesis"`},
		{"missing process", `{"index":1,"time":1,"type":"ok","f":"echo"}`, `line 2: missing "process"`},
		{"bad type", `{"index":1,"time":1,"process":0,"type":"done","f":"echo"}`, `line 2: "type" is "done"`},
		{"missing f", `{"index":1,"time":1,"process":0,"type":"ok"}`, `line 2: missing or empty "f"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, err := ReadHistory(strings.NewReader(good + c.line + "\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
			if len(ops) != 1 {
				t.Errorf("got %d ops before the bad line, want 1", len(ops))
			}
		})
	}
}

// TestMarshalOpMatchesEncodingJSON holds the hand-written line encoder to
// encoding/json's rendering of the Op struct (whose field order is the
// contract's key order).
func TestMarshalOpMatchesEncodingJSON(t *testing.T) {
	values := []string{``, `null`, `{"chunk": "ch_1",  "n": [1, 2]}`, `"Please echo 7"`, "{\n\"a\":\t1}"}
	texts := []string{"", "grant", `we"ird\`, "tab\t", "ünï", "net-timeout"}
	for i, v := range values {
		for j, s := range texts {
			op := Op{Index: i*10 + j, Time: int64(i) * 1e9, Process: Process{ID: j}, Type: OK, F: "f" + s, Node: s, Error: s}
			if v != "" {
				op.Value = json.RawMessage(v)
			}
			if j == 2 {
				op.Process = NemesisProcess
			}
			got, err := marshalOp(op)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(op)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want)+"\n" {
				t.Errorf("marshalOp:\n%s\nencoding/json:\n%s", got, want)
			}
		}
	}
	if _, err := marshalOp(Op{Type: OK, F: "x", Value: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("an invalid value was written")
	}
}
