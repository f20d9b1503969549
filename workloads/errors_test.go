package workloads

import (
	"encoding/json"
	"testing"

	"chunklease/history"
)

func TestClassifyErrorFollowsMaelstromsTable(t *testing.T) {
	cases := []struct {
		body       string
		idempotent bool
		typ, err   string
	}{
		{`{"type":"error","code":0,"text":"slow"}`, false, history.Info, "timeout: slow"},
		{`{"type":"error","code":1,"text":"no n9"}`, false, history.Fail, "node-not-found: no n9"},
		{`{"type":"error","code":10,"text":"unknown type lease_frob"}`, false, history.Fail, "not-supported: unknown type lease_frob"},
		{`{"type":"error","code":11,"text":"no majority answered"}`, false, history.Fail, "temporarily-unavailable: no majority answered"},
		{`{"type":"error","code":12,"text":"lease_ms must be > 0"}`, false, history.Fail, "malformed-request: lease_ms must be > 0"},
		{`{"type":"error","code":13,"text":"boom"}`, false, history.Info, "crash: boom"},
		{`{"type":"error","code":14}`, false, history.Fail, "abort"},
		{`{"type":"error","code":20,"text":"x"}`, false, history.Fail, "key-does-not-exist: x"},
		{`{"type":"error","code":21,"text":"x"}`, false, history.Fail, "key-already-exists: x"},
		{`{"type":"error","code":22,"text":"held by cs2"}`, false, history.Fail, "precondition-failed: held by cs2"},
		{`{"type":"error","code":30,"text":"x"}`, false, history.Fail, "txn-conflict: x"},
		{`{"type":"error","code":2,"text":"x"}`, false, history.Info, "unknown: x (code 2)"},
		{`{"type":"error","code":1000,"text":"custom"}`, false, history.Info, "unknown: custom (code 1000)"},
		{`{"type":"error","code":11.0,"text":"float"}`, false, history.Info, "unknown: float (code 11.0)"},
		{`{"type":"error","code":"11","text":"string"}`, false, history.Info, `unknown: string (code "11")`},
		{`{"type":"error","text":"no code"}`, false, history.Info, "unknown: no code (code missing)"},
		{`{"type":"error","code":null}`, false, history.Info, "unknown (code null)"},
		{`{"type":"error","code":13,"text":"boom"}`, true, history.Fail, "crash: boom"},
		{`{"type":"error","code":1000,"text":"custom"}`, true, history.Fail, "unknown: custom (code 1000)"},
		{`{"type":"error","code":11,"text":["not","a","string"]}`, false, history.Fail, `temporarily-unavailable: ["not","a","string"]`},
	}
	for _, c := range cases {
		typ, text := ClassifyError(json.RawMessage(c.body), c.idempotent)
		if typ != c.typ || text != c.err {
			t.Errorf("ClassifyError(%s, idempotent=%v) = %s %q, want %s %q", c.body, c.idempotent, typ, text, c.typ, c.err)
		}
	}
}

func TestClassifyTimeout(t *testing.T) {
	if typ, text := ClassifyTimeout(false); typ != history.Info || text != "net-timeout" {
		t.Errorf("non-idempotent timeout = %s %q, want info net-timeout", typ, text)
	}
	if typ, text := ClassifyTimeout(true); typ != history.Fail || text != "net-timeout" {
		t.Errorf("idempotent timeout = %s %q, want fail net-timeout", typ, text)
	}
}

func TestErrorCompletionKeepsTheInvokeValue(t *testing.T) {
	inv := Invocation{F: "grant", Value: json.RawMessage(`{"chunk":"ch_1","server":"cs1","lease_ms":1000}`)}
	c, done := ErrorCompletion(inv, nil, false)
	if !done || c.Type != history.Info || string(c.Value) != string(inv.Value) || c.Error != TimeoutError {
		t.Errorf("timeout completion = %+v", c)
	}
	c, done = ErrorCompletion(inv, json.RawMessage(`{"type":"error","in_reply_to":3,"code":11,"text":"t"}`), false)
	if !done || c.Type != history.Fail || string(c.Value) != string(inv.Value) {
		t.Errorf("error completion = %+v", c)
	}
	if _, done := ErrorCompletion(inv, json.RawMessage(`{"type":"lease_grant_ok"}`), false); done {
		t.Error("a non-error reply was treated as an error")
	}
}
