package client

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"chunklease/internal/flatjson/flatjsontest"
)

// Seeds: the bodies members write (server/http.go appendReply and
// refusal, server/batch.go appendBatchResults) and the edges of the
// subset.
var replySeeds = []string{
	`{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs1","expires_in_ms":60000,"token":238104584325376}`,
	`{"type":"lease_renew_ok","new_expires_in_ms":500,"token":7}`,
	`{"type":"lease_check_ok","primary":null,"remaining_ms":0,"expired":true}`,
	`{"type":"lease_check_ok","primary":"cs2","remaining_ms":1200,"expired":false}`,
	`{"type":"error","code":11,"text":"no quorum in time","retry_in_ms":250}`,
	`{"type":"master_status_ok","is_master":true,"master":"n1"}`,
	`{"type":"member_list_ok","epoch":3,"members":["n1","n2"],"addrs":{"n1":"a"}}`,
	`{"type":"x","members":null,"epoch":null,"code":null,"primary":"a","primary":null}`,
	`{"Type":"x"}`, `{"TYPE":"y","type":"x"}`, `{"unknown":1,"type":"x"}`, `{"code":1.5}`, `{"code":99999999999999999999}`,
	`{"token":-3}`, `{"expired":null,"text":null}`, `{"text":"a\"b"}`, `{"type":1}`, `{"expired":"true"}`, `{}`, `[]`, `null`,
}

var batchSeeds = []string{
	`{"results":[{"status":200,"body":{"type":"lease_renew_ok","new_expires_in_ms":500,"token":7}}]}`,
	`{"results":[{"status":503,"retry_after_s":1,"body":{"type":"error","code":11,"text":"busy"}},{"status":200,"body":{}}]}`,
	`{"results":[]}`, `{"results":null}`, `{"results":[{"status":200,"body":null}]}`, `{"results":[{"Status":200,"body":{}}]}`,
	`{"results":[{"status":200,"body":{"a":[1]}}]}`, `{"results":[{"status":200,"other":1,"body":{}}]}`,
	`{"results":[{"status":200}],"results":[{"status":404}]}`, `{"Results":[]}`, `{"results":[{}],"x":1}`,
}

func FuzzReplyFlat(f *testing.F) {
	for _, s := range replySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := flatjsontest.SameAsJSON(b, (*reply).decodeFlat); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzBatchResultsFlat(f *testing.F) {
	for _, s := range batchSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := flatjsontest.SameAsJSON(b, (*batchResults).decodeFlat); err != nil {
			t.Fatal(err)
		}
	})
}

// The fast paths take what members write: one that never fires would
// pass the fuzz tests.
func TestFlatDecodersTakeWhatMembersWrite(t *testing.T) {
	for _, s := range replySeeds[:6] {
		var r reply
		if !r.decodeFlat([]byte(s)) {
			t.Errorf("the fast path refused %s", s)
		}
	}
	for _, s := range batchSeeds[:3] {
		var r batchResults
		if !r.decodeFlat([]byte(s)) {
			t.Errorf("the fast path refused %s", s)
		}
	}
}

// Negative controls: SameAsJSON catches decoders known to be wrong.
func TestFlatDecoderChecksBite(t *testing.T) {
	// null kept as the previous pointer, where encoding/json makes it nil
	keepsNull := func(r *reply, b []byte) bool {
		ok := r.decodeFlat(b)
		if r.Primary == nil {
			s := "stale"
			r.Primary = &s
		}
		return ok
	}
	if !flatjsontest.Caught(replySeeds, keepsNull) {
		t.Error("a reply decoder that never leaves primary nil passed")
	}
	// a key matched only up to case, skipped as an unknown one: the
	// decoder itself, with its list of names emptied
	ignoresCase := func(r *batchResults, b []byte) bool {
		saved := batchResultKeys
		batchResultKeys = nil
		defer func() { batchResultKeys = saved }()
		return r.decodeFlat(b)
	}
	if !flatjsontest.Caught(batchSeeds, ignoresCase) {
		t.Error("a batch decoder that ignores a key up to case passed")
	}
}

// The fast paths' lists of names are the types' JSON names: a field
// added to reply without its name in replyKeys would be skipped by the
// fast path when a member sends it up to case.
func TestKeyListsAreTheJSONNames(t *testing.T) {
	for _, c := range []struct {
		typ  any
		keys []string
	}{{reply{}, replyKeys}, {batchResult{}, batchResultKeys}} {
		if got := jsonNames(c.typ); !slices.Equal(got, slices.Sorted(slices.Values(c.keys))) {
			t.Errorf("%T: JSON names %v, the fast path's list %v", c.typ, got, c.keys)
		}
	}
}

// jsonNames are the sorted JSON names of v's fields.
func jsonNames(v any) []string {
	var names []string
	for f := range reflect.TypeOf(v).Fields() {
		names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	slices.Sort(names)
	return names
}
