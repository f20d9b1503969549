package simnet

import (
	"encoding/json"
	"testing"
)

func TestWithMsgID(t *testing.T) {
	cases := map[string]string{
		`{"type":"echo","echo":"x"}`: `{"type":"echo","echo":"x","msg_id":7}`,
		`{ "type" : "a" }`:           `{"type":"a","msg_id":7}`,
		`{}`:                         `{"msg_id":7}`,
	}
	for in, want := range cases {
		got, err := withMsgID(json.RawMessage(in), 7)
		if err != nil || string(got) != want {
			t.Errorf("withMsgID(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{`} {
		if _, err := withMsgID(json.RawMessage(bad), 1); err == nil {
			t.Errorf("withMsgID(%s) accepted", bad)
		}
	}
}

func TestRepliesTo(t *testing.T) {
	cases := map[string]bool{
		`{"type":"echo_ok","in_reply_to":3}`:    true,
		`{"type":"echo_ok","in_reply_to":4}`:    false,
		`{"type":"echo_ok","in_reply_to":3.0}`:  false,
		`{"type":"echo_ok","in_reply_to":"3"}`:  false,
		`{"type":"echo_ok","in_reply_to":null}`: false,
		`{"type":"echo_ok"}`:                    false,
	}
	for body, want := range cases {
		if got := repliesTo(json.RawMessage(body), 3); got != want {
			t.Errorf("repliesTo(%s, 3) = %v", body, got)
		}
	}
}
