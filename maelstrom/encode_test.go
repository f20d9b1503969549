package maelstrom

import (
	"encoding/json"
	"strings"
	"testing"
)

type grantOK struct {
	ChunkHandle string `json:"chunk_handle"`
	Primary     string `json:"primary"`
	ExpiresInMs int64  `json:"expires_in_ms"`
}

type checkOK struct {
	Primary     *string `json:"primary"` // null when no lease was ever seen
	RemainingMs int64   `json:"remaining_ms"`
	Expired     bool    `json:"expired"`
}

type withReservedTag struct {
	Type string `json:"type"`
}

type inner struct {
	MsgID int `json:"msg_id"`
}

type withEmbedded struct {
	inner
	X int `json:"x"`
}

type customMarshal struct{}

func (customMarshal) MarshalJSON() ([]byte, error) { return []byte(`{"in_reply_to":1}`), nil }

type renamedOK struct {
	Type string `json:"kind"` // the Go name is irrelevant; the key is "kind"
}

func TestAppendLine(t *testing.T) {
	tests := []struct {
		name         string
		src, dest    string
		typ          string
		inReplyTo    int64
		hasInReplyTo bool
		fields       any
		msgID        int64
		want         string
	}{
		{"reply with fields, the task's example", "n1", "c1", "lease_grant_ok", 2, true,
			grantOK{"ch_001", "n2", 60000}, 1,
			`{"src":"n1","dest":"c1","body":{"type":"lease_grant_ok","in_reply_to":2,"chunk_handle":"ch_001","primary":"n2","expires_in_ms":60000,"msg_id":1}}`},
		{"init_ok, no fields, msg_id 0", "n1", "c0", "init_ok", 1, true, nil, 0,
			`{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":0}}`},
		{"in_reply_to 0 is written", "n1", "n2", "prepare_ok", 0, true, struct{}{}, 4,
			`{"src":"n1","dest":"n2","body":{"type":"prepare_ok","in_reply_to":0,"msg_id":4}}`},
		{"request: no in_reply_to", "n1", "n2", "prepare", 0, false, map[string]int{"ballot": 3}, 5,
			`{"src":"n1","dest":"n2","body":{"type":"prepare","ballot":3,"msg_id":5}}`},
		{"zero values and null are kept", "n1", "c2", "lease_check_ok", 9, true, checkOK{nil, 0, true}, 6,
			`{"src":"n1","dest":"c2","body":{"type":"lease_check_ok","in_reply_to":9,"primary":null,"remaining_ms":0,"expired":true,"msg_id":6}}`},
		{"raw JSON fields", "n1", "c2", "echo_ok", 3, true, json.RawMessage(` { "echo" : [1, 2] } `), 7,
			`{"src":"n1","dest":"c2","body":{"type":"echo_ok","in_reply_to":3,"echo":[1,2],"msg_id":7}}`},
		{"no HTML escaping, JSON escaping kept", "n1", "c2", "echo_ok", 3, true, map[string]string{"echo": "<a&b> \"q\"\n"}, 8,
			`{"src":"n1","dest":"c2","body":{"type":"echo_ok","in_reply_to":3,"echo":"<a&b> \"q\"\n","msg_id":8}}`},
		{"odd ids are quoted correctly", "n\"1", "c\\2", "tÿpe", 1, true, nil, 9,
			`{"src":"n\"1","dest":"c\\2","body":{"type":"tÿpe","in_reply_to":1,"msg_id":9}}`},
		{"renamed Type field is not reserved", "n1", "c1", "x_ok", 1, true, renamedOK{"k"}, 10,
			`{"src":"n1","dest":"c1","body":{"type":"x_ok","in_reply_to":1,"kind":"k","msg_id":10}}`},
		{"nil pointer means no fields", "n1", "c1", "x_ok", 1, true, (*grantOK)(nil), 11,
			`{"src":"n1","dest":"c1","body":{"type":"x_ok","in_reply_to":1,"msg_id":11}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := fieldsInner(tc.fields)
			if err != nil {
				t.Fatalf("fieldsInner: %v", err)
			}
			got := string(appendLine(nil, tc.src, tc.dest, tc.typ, tc.inReplyTo, tc.hasInReplyTo, inner, tc.msgID))
			if got != tc.want+"\n" {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if _, err := parseMessage([]byte(got)); err != nil {
				t.Fatalf("our own line does not parse back: %v", err)
			}
		})
	}
}

func TestFieldsInnerRejects(t *testing.T) {
	tests := []struct {
		name   string
		fields any
		text   string
	}{
		{"number", 5, "must encode as a JSON object"},
		{"array", []int{1}, "must encode as a JSON object"},
		{"string", "x", "must encode as a JSON object"},
		{"reserved struct tag", withReservedTag{"t"}, `key "type"`},
		{"reserved key in embedded struct", withEmbedded{}, `key "msg_id"`},
		{"reserved key in map", map[string]int{"in_reply_to": 1}, `key "in_reply_to"`},
		{"reserved key in raw JSON", json.RawMessage(`{"a":1,"msg_id":2}`), `key "msg_id"`},
		{"reserved key from a custom marshaler", customMarshal{}, `key "in_reply_to"`},
		{"unencodable", map[string]any{"c": make(chan int)}, "encoding fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fieldsInner(tc.fields)
			if err == nil || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("fieldsInner(%T) error = %v, want one mentioning %q", tc.fields, err, tc.text)
			}
		})
	}
}

func TestCodes(t *testing.T) {
	tests := []struct {
		code     Code
		value    int
		name     string
		definite bool
	}{
		{CodeTimeout, 0, "timeout", false},
		{CodeNodeNotFound, 1, "node-not-found", true},
		{CodeNotSupported, 10, "not-supported", true},
		{CodeTemporarilyUnavailable, 11, "temporarily-unavailable", true},
		{CodeMalformedRequest, 12, "malformed-request", true},
		{CodeCrash, 13, "crash", false},
		{CodeAbort, 14, "abort", true},
		{CodeKeyDoesNotExist, 20, "key-does-not-exist", true},
		{CodeKeyAlreadyExists, 21, "key-already-exists", true},
		{CodePreconditionFailed, 22, "precondition-failed", true},
		{CodeTxnConflict, 30, "txn-conflict", true},
		{Code(2), 2, "unknown", false},
		{Code(1000), 1000, "unknown", false},
		{codeUnknown, -1, "unknown", false},
	}
	for _, tc := range tests {
		if int(tc.code) != tc.value || tc.code.String() != tc.name || tc.code.Definite() != tc.definite {
			t.Errorf("code %d: got value %d name %q definite %v, want %d %q %v",
				tc.value, int(tc.code), tc.code, tc.code.Definite(), tc.value, tc.name, tc.definite)
		}
	}
	if got := Errorf(CodeTemporarilyUnavailable, "no majority of %d", 3).Error(); got != "temporarily-unavailable (11): no majority of 3" {
		t.Errorf("Error() = %q", got)
	}
	if e := asError(Errorf(CodePreconditionFailed, "held")); e.Code != CodePreconditionFailed {
		t.Errorf("asError kept code %d", e.Code)
	}
	if e := asError(errString("boom")); e.Code != CodeCrash || e.Text != "boom" {
		t.Errorf("a plain error must become crash (13, indefinite), got %+v", e)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
