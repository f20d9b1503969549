package lease

import (
	"encoding/json"
	"reflect"
	"testing"

	"chunklease/internal/flatjson"
)

var flatSeeds = []string{
	`{"chunk":"ch_2","server":"cs3","lease_ms":1000}`,
	`{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs3","expires_in_ms":998,"token":17}`,
	`{"chunk":"ch_1","primary":null,"remaining_ms":0,"expired":true}`,
	` { "chunk" : "ch_1" , "primary" : "cs2" , "expired" : false } `,
	`{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs1","expires_in_ms":5,"in_reply_to":3,"msg_id":9}`,
	`{"type":"error","code":11,"text":"no majority"}`,
	`{"Chunk":"ch_1"}`, `{"chunk":"ch\u005f1"}`, `{"chunk":"ch_1","token":{"a":[1,2]}}`,
	`{"lease_ms":1.0}`, `{"lease_ms":1e3}`, `{"lease_ms":01}`, `{"lease_ms":-0}`, `{"lease_ms":"7"}`,
	`{"lease_ms":99999999999999999999}`, `{"expired":null,"expired":true}`, `{"primary":"a","primary":null}`,
	`{"chunk":null}`, `{}`, `null`, `[]`, `{"chunk":"x"} x`, `{"chunk":"x",}`, `{"chunk""x"}`, `{"chunk":tru}`,
	`{"chunk":"ünï"}`, `{"expired":"true"}`, `{"remaining_ms":-5}`, `{"type":null}`, ``,
	`{"chunk":"ch_1","server":"cs1","token":9007199254740991}`, `{"type":"lease_renew_ok","new_expires_in_ms":5,"token":12}`,
	`{"token":null}`, `{"token":0}`, `{"token":-7}`, `{"token":1.5}`, `{"token":"12"}`, `{"token":true}`,
	`{"Token":3}`, `{"TOKEN":3,"token":4}`, `{"token":9223372036854775808}`, `{"token":3,"token":null}`,
}

// FuzzFlatDecoders holds the fast decoders to encoding/json: the same
// value when both succeed, and an error exactly when encoding/json errs.
func FuzzFlatDecoders(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gotErr := decodeLeaseValue(b)
		var want LeaseValue
		wantErr := json.Unmarshal(b, &want)
		if (gotErr == nil) != (wantErr == nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("decodeLeaseValue(%q) = %+v, %v; encoding/json: %+v, %v", b, got, gotErr, want, wantErr)
		}
		gotR, gotRErr := decodeLeaseReply(b)
		var wantR leaseReply
		wantRErr := json.Unmarshal(b, &wantR)
		if (gotRErr == nil) != (wantRErr == nil) || (wantRErr == nil && !reflect.DeepEqual(gotR, wantR)) {
			t.Errorf("decodeLeaseReply(%q) = %+v, %v; encoding/json: %+v, %v", b, gotR, gotRErr, wantR, wantRErr)
		}
	})
}

func TestFlatFastPathIsTaken(t *testing.T) {
	for _, s := range flatSeeds[:5] {
		var v LeaseValue
		var r leaseReply
		if !flatjson.Flat([]byte(s), v.setField) || !flatjson.Flat([]byte(s), r.setField) {
			t.Errorf("%s fell back to encoding/json", s)
		}
	}
}
