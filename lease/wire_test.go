package lease

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestMsgRoundTrip: every peer message type survives Body -> JSON ->
// DecodeMsg unchanged, the fields a type needs are on the wire, and a
// zero msg-level value (ok=false, read_id=0) is written, not dropped.
func TestMsgRoundTrip(t *testing.T) {
	b := Ballot{Counter: 230584300921369, Incarnation: 1763890000123456}
	rec := &Record{Server: "cs1", Token: b.Token(), RemainingMs: 950}
	conf := Membership{Epoch: 3, Members: []string{"n1", "n2", "n3"}, Prev: []string{"n1", "n2"}, Floor: 230584300921000}
	next := Membership{Epoch: 4, Members: []string{"n1", "n2", "n3", "n4"}, Prev: []string{"n1", "n2", "n3"}, Floor: 230584300921370}
	msgs := []Msg{
		{Type: MsgPrepare, Chunk: "ch_1", Ballot: b, Server: "cs1"},
		{Type: MsgPrepareResp, Chunk: "ch_1", Ballot: b, OK: false, Promised: b, Lease: rec},
		{Type: MsgPropose, Chunk: "ch_1", Ballot: b, Server: "cs1", LeaseMs: 1000},
		{Type: MsgPropose, Chunk: "ch_1", Ballot: b, Server: "cs1", LeaseMs: 1000, Fast: true},
		{Type: MsgProposeResp, Chunk: "ch_1", Ballot: b, Server: "cs1", LeaseMs: 1000, OK: true, Promised: b},
		{Type: MsgRead, Chunk: "ch_1", ReqID: 0, Nonce: 9007199254740991},
		{Type: MsgReadResp, Chunk: "ch_1", ReqID: 3, Nonce: 1, Promised: b, Lease: &Record{Server: "cs2", Token: 9, Expired: true}},
		{Type: MsgRelease, Chunk: "ch_1", Server: "cs1", Token: 42, ReqID: 8, Nonce: 5},
		{Type: MsgReleaseResp, Chunk: "ch_1", Server: "cs1", Token: 42, ReqID: 8, Nonce: 5, OK: false, Promised: b},
		{Type: MsgSync, ReqID: 1763890000123456, Nonce: 77},
		{Type: MsgSyncResp, ReqID: 1763890000123456, Nonce: 77, Counter: 0, Recovering: true},
		{Type: MsgBooting, Chunk: "ch_1", Ballot: b, BootingMs: 0},
		{Type: MsgBooting, Chunk: "ch_1", ReqID: 8, Nonce: 5, BootingMs: 912},
		{Type: MsgSyncResp, ReqID: 1763890000123456, Nonce: 77, Counter: 12, Core: 2, Cores: 3},
		// Membership: the change instance's messages, and a sync answer
		// with the configuration and the accepted value.
		{Type: MsgChangePrepare, Ballot: b, Epoch: 3, Active: true, Conf: &conf},
		{Type: MsgChangePrepareResp, Ballot: b, Epoch: 3, OK: true, Promised: b, Counter: 230584300921370, Accepted: b, Value: &next},
		{Type: MsgChangePrepareResp, Ballot: b, Epoch: 3, Promised: b, WaitMs: 640},
		{Type: MsgChangePrepareResp, Ballot: b, Epoch: 3, Promised: b, Learner: true},
		{Type: MsgChangePropose, Ballot: b, Epoch: 3, Value: &next},
		{Type: MsgChangeProposeResp, Ballot: b, Epoch: 3, OK: true, Promised: b},
		{Type: MsgSyncResp, ReqID: 1763890000123456, Nonce: 77, Counter: 5, Conf: &conf, Accepted: b, Value: &next},
	}
	for _, m := range msgs {
		m.From, m.To = "n2", "n1"
		body, err := json.Marshal(m.Body())
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeMsg(string(m.Type), "n2", "n1", body)
		if err != nil {
			t.Fatalf("%s %s: %v", m.Type, body, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s round trip:\n got %+v\nwant %+v\nwire %s", m.Type, got, m, body)
		}
	}
}

func TestDecodeMsgRejectsIncompleteBodies(t *testing.T) {
	for _, tt := range []struct{ typ, body string }{
		{"prepare", `{"ballot":{"counter":1,"incarnation":1},"server":"s"}`},
		{"prepare", `{"chunk_handle":"c","server":"s"}`},
		{"prepare", `{"chunk_handle":"c","ballot":{"counter":1,"incarnation":1}}`},
		{"propose", `{"chunk_handle":"c","ballot":{"counter":1,"incarnation":1},"server":"s"}`},
		{"read", `{"chunk_handle":"c"}`},
		// A request id without the asker's nonce could match any incarnation.
		{"read", `{"chunk_handle":"c","req_id":1}`},
		{"read_ok", `{"chunk_handle":"c","req_id":1,"nonce":0}`},
		{"read", `{"chunk_handle":"c","req_id":1,"nonce":9007199254740992}`},
		{"prepare_ok", `{"chunk_handle":"c","ballot":{"counter":1,"incarnation":1}}`},
		{"release", `{"chunk_handle":"c","server":"s","req_id":1,"nonce":1}`},
		{"release", `{"chunk_handle":"c","token":5,"req_id":1,"nonce":1}`},
		{"sync_ok", `{"req_id":1,"nonce":1}`},
		{"prepare", `{"chunk_handle":"c","ballot":"high","server":"s"}`},
		{"prepare", `{"chunk_handle":"c","ballot":{"counter":9007199254740992,"incarnation":1},"server":"s"}`},
		// A counter no node issues would leave no ballot above it.
		{"prepare", `{"chunk_handle":"c","ballot":{"counter":4503599627370496,"incarnation":1},"server":"s"}`},
		{"prepare_ok", `{"chunk_handle":"c","ballot":{"counter":1,"incarnation":1},"ok":false,"promised":{"counter":9007199254740991,"incarnation":1}}`},
		{"sync_ok", `{"req_id":1,"nonce":1,"counter":4503599627370496}`},
		{"release", `{"chunk_handle":"c","server":"s","token":9007199254740993,"req_id":1,"nonce":1}`},
		{"gossip", `{"chunk_handle":"c"}`},
		// A booting answer names its request by ballot or req_id, one of them, and its time left.
		{"booting", `{"chunk_handle":"c","req_id":1,"nonce":1}`},
		{"booting", `{"chunk_handle":"c","booting_ms":5}`},
		{"booting", `{"chunk_handle":"c","ballot":{"counter":1,"incarnation":1},"req_id":1,"nonce":1,"booting_ms":5}`},
		{"booting", `{"chunk_handle":"c","req_id":1,"nonce":1,"booting_ms":-1}`},
	} {
		if _, err := DecodeMsg(tt.typ, "n2", "n1", []byte(tt.body)); err == nil {
			t.Errorf("DecodeMsg(%s, %s) accepted an incomplete body", tt.typ, tt.body)
		}
	}
}

// utf8Text is the error text for a name that is not valid UTF-8.
func utf8Text(typ, field string) string {
	return typ + ": " + field + ` must be valid UTF-8 without U+FFFD: invalid bytes and lone surrogates (\ud800) ` +
		"decode to U+FFFD, so two different names would become one"
}

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		typ, body string
		want      Request
		code      int
		text      string
	}{
		{"lease_grant", `{"chunk_handle":"ch_001","server":"cs1","msg_id":2}`, Request{Op: OpGrant, Chunk: "ch_001", Server: "cs1"}, 0, ""},
		{"lease_renew", `{"chunk_handle":"c","server":"s","lease_ms":1000.0}`, Request{Op: OpRenew, Chunk: "c", Server: "s", LeaseMs: 1000}, 0, ""},
		{"lease_check", `{"chunk_handle":"c"}`, Request{Op: OpCheck, Chunk: "c"}, 0, ""},
		{"lease_release", `{"chunk_handle":"c","server":"s","token":4097}`, Request{Op: OpRelease, Chunk: "c", Server: "s", Token: 4097}, 0, ""},
		{"lease_release", `{"chunk_handle":"c","server":"s"}`, Request{}, 12, "lease_release needs token, the integer from the latest lease_grant_ok or lease_renew_ok of this server: a release that names only the server could end a newer lease of that server if it arrived late"},
		{"lease_release", `{"chunk_handle":"c","server":"s","token":0}`, Request{}, 12, "lease_release: token must be a whole number in 1..2^53 (from a lease_grant_ok or lease_renew_ok), got 0"},
		{"lease_release", `{"chunk_handle":"c","server":"s","token":"7"}`, Request{}, 12, `lease_release: token must be a whole number in 1..2^53 (from a lease_grant_ok or lease_renew_ok), got "7"`},
		{"lease_grant", `{"server":"s"}`, Request{}, 12, "lease_grant needs chunk_handle, a non-empty string"},
		{"lease_grant", `{"chunk_handle":7,"server":"s"}`, Request{}, 12, "lease_grant: chunk_handle must be a string, got 7"},
		{"lease_grant", `{"chunk_handle":"","server":"s"}`, Request{}, 12, "lease_grant: chunk_handle must not be empty"},
		{"lease_renew", `{"chunk_handle":"c"}`, Request{}, 12, "lease_renew needs server, a non-empty string"},
		{"lease_grant", `{"chunk_handle":"c","server":"s","lease_ms":1.5}`, Request{}, 12, "lease_grant: lease_ms must be a whole number of milliseconds, got 1.5"},
		{"lease_grant", `{"chunk_handle":"c","server":"s","lease_ms":"60s"}`, Request{}, 12, `lease_grant: lease_ms must be a whole number of milliseconds, got "60s"`},
		{"lease_grant", `{"chunk_handle":"c","server":"s","lease_ms":0}`, Request{}, 12, "lease_grant: lease_ms must be > 0, got 0 (leave it out for the node's default)"},
		{"lease_grant", `[1,2]`, Request{}, 12, "lease_grant: the body must be a JSON object"},
		{"lease_steal", `{}`, Request{}, 10, `"lease_steal" is not a lease request type`},
		// Names that encoding/json would turn into U+FFFD: two different
		// servers (or chunks) must never become one.
		{"lease_renew", `{"chunk_handle":"c","server":"cs\ud800"}`, Request{}, 12, utf8Text("lease_renew", "server")},
		{"lease_renew", "{\"chunk_handle\":\"c\",\"server\":\"cs\xff\"}", Request{}, 12, utf8Text("lease_renew", "server")},
		{"lease_check", "{\"chunk_handle\":\"c\xfe\"}", Request{}, 12, utf8Text("lease_check", "chunk_handle")},
		{"lease_grant", `{"chunk_handle":"c","server":"cs\ufffd"}`, Request{}, 12, utf8Text("lease_grant", "server")},
		{"lease_grant", `{"chunk_handle":"c","server":"cs\u00e9\ud83d\ude00"}`, Request{Op: OpGrant, Chunk: "c", Server: "cs\u00e9\U0001F600"}, 0, ""},
	}
	for _, tt := range tests {
		got, err := DecodeRequest(tt.typ, []byte(tt.body))
		switch {
		case tt.code == 0 && err != nil:
			t.Errorf("%s %s: unexpected %v", tt.typ, tt.body, err)
		case tt.code == 0 && got != tt.want:
			t.Errorf("%s %s: got %+v, want %+v", tt.typ, tt.body, got, tt.want)
		case tt.code != 0 && (err == nil || err.Code != tt.code || err.Text != tt.text):
			t.Errorf("%s %s: got %v, want error %d %q", tt.typ, tt.body, err, tt.code, tt.text)
		}
	}
}
