package maelstrom

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	type want struct {
		typ          string
		msgID        int64
		hasMsgID     bool
		inReplyTo    int64
		hasInReplyTo bool
	}
	tests := []struct {
		name string
		line string
		want want
	}{
		{"request", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":3,"echo":"x"}}`,
			want{typ: "echo", msgID: 3, hasMsgID: true}},
		{"msg_id 0 is present", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":0}}`,
			want{typ: "echo", msgID: 0, hasMsgID: true}},
		{"no msg_id", `{"src":"n2","dest":"n1","body":{"type":"gossip"}}`,
			want{typ: "gossip"}},
		{"in_reply_to 0 makes a reply", `{"src":"n2","dest":"n1","body":{"type":"prepare_ok","in_reply_to":0}}`,
			want{typ: "prepare_ok", hasInReplyTo: true}},
		{"reply with its own msg_id", `{"src":"n2","dest":"n1","body":{"type":"x_ok","in_reply_to":7,"msg_id":9}}`,
			want{typ: "x_ok", msgID: 9, hasMsgID: true, inReplyTo: 7, hasInReplyTo: true}},
		{"Maelstrom's id field is ignored", `{"id":26,"src":"n4","dest":"n1","body":{"type":"broadcast","message":0,"msg_id":1}}`,
			want{typ: "broadcast", msgID: 1, hasMsgID: true}},
		{"key order is free", `{"body":{"msg_id":2,"type":"read"},"dest":"n1","src":"c3"}`,
			want{typ: "read", msgID: 2, hasMsgID: true}},
		{"negative id is an integer", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":-4}}`,
			want{typ: "echo", msgID: -4, hasMsgID: true}},
		{"missing type is left empty", `{"src":"c1","dest":"n1","body":{"msg_id":1}}`,
			want{msgID: 1, hasMsgID: true}},
		{"non-string type is left empty", `{"src":"c1","dest":"n1","body":{"type":5,"msg_id":1}}`,
			want{msgID: 1, hasMsgID: true}},
		{"whitespace around values", "  {\"src\" : \"c1\" , \"dest\":\"n1\",\"body\":{ \"type\" : \"echo\" , \"msg_id\" : 12 } }\r\n",
			want{typ: "echo", msgID: 12, hasMsgID: true}},
		{"largest int64", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":9223372036854775807}}`,
			want{typ: "echo", msgID: 9223372036854775807, hasMsgID: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseMessage([]byte(tc.line))
			if err != nil {
				t.Fatalf("parseMessage: %v", err)
			}
			got := want{m.Type, m.MsgID, m.HasMsgID, m.InReplyTo, m.HasInReplyTo}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if m.IsReply() != tc.want.hasInReplyTo {
				t.Fatalf("IsReply() = %v", m.IsReply())
			}
			if !json.Valid(m.Body) || m.Body[0] != '{' {
				t.Fatalf("Body %s is not the body object", m.Body)
			}
		})
	}
}

func TestParseMessageRejects(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		notJSON bool   // the error must be errNotJSON (may start a multi-line object)
		text    string // the error must mention this
	}{
		{"not JSON", `hello`, true, "invalid character"},
		{"truncated", `{"src":"c1","dest":"n1","body":{"type"`, true, "unexpected end"},
		{"two objects", `{"src":"c1","dest":"n1","body":{}} {}`, true, "after top-level value"},
		{"top-level array", `[1,2]`, false, "envelope is not"},
		{"top-level string", `"x"`, false, "envelope is not"},
		{"src not a string", `{"src":1,"dest":"n1","body":{}}`, false, "envelope is not"},
		{"missing src", `{"dest":"n1","body":{"type":"echo","msg_id":1}}`, false, `no "src"`},
		{"empty src", `{"src":"","dest":"n1","body":{"type":"echo","msg_id":1}}`, false, `no "src"`},
		{"missing dest", `{"src":"c1","body":{"type":"echo","msg_id":1}}`, false, `no "dest"`},
		{"missing body", `{"src":"c1","dest":"n1"}`, false, `no "body"`},
		{"null body", `{"src":"c1","dest":"n1","body":null}`, false, `must be a JSON object`},
		{"array body", `{"src":"c1","dest":"n1","body":[1]}`, false, `must be a JSON object`},
		{"string body", `{"src":"c1","dest":"n1","body":"hi"}`, false, `must be a JSON object`},
		{"string msg_id", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":"1"}}`, false, `"msg_id" must be an integer`},
		{"float msg_id", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":1.0}}`, false, `"msg_id" must be an integer`},
		{"exponent msg_id", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":1e2}}`, false, `"msg_id" must be an integer`},
		{"null msg_id", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":null}}`, false, `"msg_id" must be an integer`},
		{"overflowing msg_id", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":9223372036854775808}}`, false, `"msg_id" must be an integer`},
		{"null in_reply_to", `{"src":"n2","dest":"n1","body":{"type":"x_ok","in_reply_to":null}}`, false, `"in_reply_to" must be an integer`},
		{"string in_reply_to", `{"src":"n2","dest":"n1","body":{"type":"x_ok","in_reply_to":"3"}}`, false, `"in_reply_to" must be an integer`},
		{"float in_reply_to", `{"src":"n2","dest":"n1","body":{"type":"x_ok","in_reply_to":3.5}}`, false, `"in_reply_to" must be an integer`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseMessage([]byte(tc.line))
			if err == nil {
				t.Fatal("parseMessage accepted it")
			}
			if errors.Is(err, errNotJSON) != tc.notJSON {
				t.Fatalf("errors.Is(err, errNotJSON) = %v, want %v (err: %v)", !tc.notJSON, tc.notJSON, err)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %q does not mention %q", err, tc.text)
			}
		})
	}
}

func TestMessageErr(t *testing.T) {
	tests := []struct {
		body     string
		wantNil  bool
		code     Code
		text     string
		definite bool
	}{
		{`{"type":"read_ok","in_reply_to":1,"value":3}`, true, 0, "", false},
		{`{"type":"error","in_reply_to":1,"code":0,"text":"slow"}`, false, CodeTimeout, "slow", false},
		{`{"type":"error","in_reply_to":1,"code":11,"text":"not leader"}`, false, CodeTemporarilyUnavailable, "not leader", true},
		{`{"type":"error","in_reply_to":1,"code":20}`, false, CodeKeyDoesNotExist, "", true},
		{`{"type":"error","in_reply_to":1,"text":"no code"}`, false, codeUnknown, "no code", false},
		{`{"type":"error","in_reply_to":1,"code":11.0,"text":"float"}`, false, codeUnknown, "float", false},
		{`{"type":"error","in_reply_to":1,"code":"11"}`, false, codeUnknown, "", false},
		{`{"type":"error","in_reply_to":1,"code":1001,"text":"custom"}`, false, 1001, "custom", false},
		{`{"type":"error","in_reply_to":1,"code":13,"text":{"odd":1}}`, false, CodeCrash, `{"odd":1}`, false},
	}
	for _, tc := range tests {
		m, err := parseMessage([]byte(`{"src":"n2","dest":"n1","body":` + tc.body + `}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		e := m.Err()
		if (e == nil) != tc.wantNil {
			t.Fatalf("%s: Err() = %v", tc.body, e)
		}
		if e == nil {
			continue
		}
		if e.Code != tc.code || e.Text != tc.text || e.Code.Definite() != tc.definite {
			t.Fatalf("%s: got %+v definite=%v, want code %d text %q definite=%v", tc.body, e, e.Code.Definite(), tc.code, tc.text, tc.definite)
		}
	}
}

func TestDecodeBody(t *testing.T) {
	type grant struct {
		ChunkHandle string `json:"chunk_handle"`
		LeaseMs     *int64 `json:"lease_ms"`
	}
	var req grant
	m, err := parseMessage([]byte(`{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":1,"chunk_handle":"ch_1","lease_ms":"ten"}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = m.DecodeBody(&req)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeMalformedRequest {
		t.Fatalf("DecodeBody error = %v, want *Error with code 12", err)
	}
	for _, want := range []string{"lease_grant", `"lease_ms"`, "an integer", "string"} {
		if !strings.Contains(e.Text, want) {
			t.Errorf("text %q does not mention %q", e.Text, want)
		}
	}
	t.Log(e.Text)
	m, _ = parseMessage([]byte(`{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":1,"chunk_handle":"ch_1"}}`))
	req = grant{}
	if err := m.DecodeBody(&req); err != nil || req.ChunkHandle != "ch_1" || req.LeaseMs != nil {
		t.Fatalf("DecodeBody = %v, %+v", err, req)
	}
}
