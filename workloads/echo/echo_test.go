package echo

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/workloads"
)

func TestEchoStaggerIsGlobalWithMeanGapOneOverRate(t *testing.T) {
	seed := int64(testseed.Get(t))
	const rate = 100.0
	w := NewEcho(EchoOptions{Rate: rate}, seed)
	if w.Wake() != 0 {
		t.Fatalf("first op due at %v, want 0", w.Wake())
	}
	var times []time.Duration
	for i := range 5000 {
		now := w.Wake()
		if _, ok := w.Next(now-1, i%7); ok && now > 0 {
			t.Fatalf("op emitted before it was due (%v < %v)", now-1, now)
		}
		inv, ok := w.Next(now, i%7) // the worker number does not matter: the schedule is global
		if !ok {
			t.Fatalf("no op at its due time %v", now)
		}
		if w.Wake() > now {
			if _, again := w.Next(now, (i+1)%7); again {
				t.Fatal("two ops for one slot")
			}
		}
		var text string
		if err := json.Unmarshal(inv.Value, &text); err != nil || !strings.HasPrefix(text, "Please echo ") {
			t.Fatalf("value %s is not \"Please echo <n>\"", inv.Value)
		}
		times = append(times, now)
	}
	maxGap := time.Duration(2 * float64(time.Second) / rate)
	for i := 1; i < len(times); i++ {
		if gap := times[i] - times[i-1]; gap < 0 || gap >= maxGap {
			t.Fatalf("gap %v outside [0, %v)", gap, maxGap)
		}
	}
	mean := float64(times[len(times)-1]) / float64(len(times)-1) / float64(time.Second)
	if mean < 0.9/rate || mean > 1.1/rate {
		t.Errorf("mean gap %.5fs, want about %.5fs", mean, 1/rate)
	}
}

func TestEchoLateOpPushesTheScheduleBack(t *testing.T) {
	w := NewEcho(EchoOptions{Rate: 10}, 1)
	if _, ok := w.Next(5*time.Second, 0); !ok {
		t.Fatal("no op at 5s although one was due at 0")
	}
	if w.Wake() < 5*time.Second || w.Wake() >= 5*time.Second+200*time.Millisecond {
		t.Errorf("next slot %v, want within [5s, 5.2s) of the late op", w.Wake())
	}
	if _, ok := NewEcho(EchoOptions{Rate: 0}, 1).Next(time.Hour, 0); ok {
		t.Error("rate 0 produced an op")
	}
}

func TestEchoRequestAndCompletion(t *testing.T) {
	w := NewEcho(EchoOptions{Rate: 1}, 7)
	inv, _ := w.Next(0, 0)
	if got, want := string(w.Request(inv)), `{"type":"echo","echo":`+string(inv.Value)+`}`; got != want {
		t.Errorf("request %s, want %s", got, want)
	}
	reply := json.RawMessage(`{"type":"echo_ok", "echo":` + string(inv.Value) + `,"msg_id":1,"in_reply_to":1}`)
	c := w.Complete(time.Millisecond, 0, inv, reply)
	if c.Type != history.OK || c.Error != "" || !strings.Contains(string(c.Value), `"type":"echo_ok"`) {
		t.Errorf("completion %+v, want ok with the reply body", c)
	}
}

func TestEchoClosedSchemaViolationsAreInfo(t *testing.T) {
	inv := workloads.Invocation{F: "echo", Value: json.RawMessage(`"Please echo 3"`)}
	cases := []struct{ reply, want string }{
		{`{"type":"echo_ok","echo":"Please echo 3","in_reply_to":1,"extra":true}`, `disallowed key "extra"`},
		{`{"type":"echo_ok","in_reply_to":1}`, `missing required key "echo"`},
		{`{"type":"echo_ok","echo":"Please echo 3","in_reply_to":1.0}`, "in_reply_to is 1.0, want an integer"},
		{`{"type":"echo_ok","echo":"Please echo 3","in_reply_to":1,"msg_id":null}`, "msg_id is null, want an integer"},
		{`{"type":"echo_ok","echo":"Please echo 3","in_reply_to":1,"msg_id":"7"}`, `msg_id is "7", want an integer`},
		{`{"type":"read_ok","echo":"Please echo 3","in_reply_to":1}`, `type is "read_ok"`},
		{`[1]`, "body is not a JSON object"},
	}
	w := NewEcho(EchoOptions{Rate: 1}, 1)
	for _, c := range cases {
		got := w.Complete(0, 0, inv, json.RawMessage(c.reply))
		if got.Type != history.Info || !strings.Contains(got.Error, c.want) || !strings.Contains(got.Error, "echo_ok schema") {
			t.Errorf("reply %s: completion %s %q, want info mentioning %q", c.reply, got.Type, got.Error, c.want)
		}
	}
	if got := w.Complete(0, 0, inv, nil); got.Type != history.Info || got.Error != "net-timeout" {
		t.Errorf("timeout completion %+v, want info net-timeout", got)
	}
	if got := w.Complete(0, 0, inv, json.RawMessage(`{"type":"error","code":11,"text":"busy"}`)); got.Type != history.Fail {
		t.Errorf("definite error completion %+v, want fail", got)
	}
}

// echoHistory builds invoke/completion pairs: reply "" means the op never
// completed; a reply starting with '{' is an ok body; "info"/"fail" are
// those completions.
func echoHistory(replies ...string) []history.Op {
	var ops []history.Op
	for i, r := range replies {
		val := json.RawMessage(`"Please echo ` + string(rune('0'+i)) + `"`)
		ops = append(ops, history.Op{Time: int64(i) * 10, Process: history.Process{ID: i}, Type: history.Invoke, F: "echo", Value: val})
		switch {
		case r == "":
		case r == history.Info || r == history.Fail:
			ops = append(ops, history.Op{Time: int64(i)*10 + 5, Process: history.Process{ID: i}, Type: r, F: "echo", Value: val, Error: "net-timeout"})
		default:
			body := strings.ReplaceAll(r, "$", string(val))
			ops = append(ops, history.Op{Time: int64(i)*10 + 5, Process: history.Process{ID: i}, Type: history.OK, F: "echo", Value: json.RawMessage(body)})
		}
	}
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}

func TestCheckEcho(t *testing.T) {
	ok := `{"type":"echo_ok","echo":$,"msg_id":1,"in_reply_to":1}`
	valid := CheckEcho(echoHistory(ok, ok, ok))
	if !valid.Valid || valid.Count != 3 || valid.OKCount != 3 {
		t.Errorf("all-ok history: %+v", valid)
	}
	negatives := map[string][]history.Op{
		"timed out":       echoHistory(ok, history.Info, ok),
		"failed":          echoHistory(ok, history.Fail),
		"never completed": echoHistory(ok, ""),
		"wrong echo":      echoHistory(ok, `{"type":"echo_ok","echo":"Please echo 99","in_reply_to":1}`),
		"completion without invoke": append(echoHistory(ok), history.Op{Index: 2, Time: 99, Process: history.Process{ID: 9}, Type: history.OK,
			F: "echo", Value: json.RawMessage(`{}`)}),
	}
	for name, h := range negatives {
		r := CheckEcho(h)
		if r.Valid || len(r.Errors) == 0 {
			t.Errorf("negative control %q judged valid: %+v", name, r)
		}
	}
}

// TestEchoHasNoLeases: nodes under the echo workload get no lease
// settings from the harness.
func TestEchoHasNoLeases(t *testing.T) {
	if e := NewEcho(EchoOptions{}, 1); workloads.HasNodeLeases(e) || workloads.LongestLeaseMs(e) != 0 {
		t.Error("the echo workload has leases")
	}
}
