package server

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"chunklease/internal/flatjson/flatjsontest"
)

var batchCallSeeds = []string{
	`[{"op":"lease_check","body":{"chunk_handle":"ch_1"}},{"op":"lease_renew","body":{"chunk_handle":"ch_2","server":"cs1","lease_ms":500}}]`,
	`[{"op":"lease_release","body":{"chunk_handle":"ch_1","server":"cs1","token":7}}]`,
	` [ ] `, `[{}]`, `[{"op":null,"body":{}}]`, `[{"op":"lease_check"}]`, `[{"op":"lease_check","body":null}]`,
	`[{"OP":"lease_check","body":{}}]`, `[{"op":"a","x":[1]}]`, `[{"op":"a","body":{"b":{"c":1}}}]`, `null`, `{}`, `[1]`,
}

func FuzzBatchCallsFlat(f *testing.F) {
	for _, s := range batchCallSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := flatjsontest.SameAsJSON(b, flatBatchCalls); err != nil {
			t.Fatal(err)
		}
	})
}

// The fast path takes what the client writes (client/batch.go): one
// that never fires would pass the fuzz test.
func TestFlatBatchCallsTakesWhatClientsWrite(t *testing.T) {
	for _, s := range batchCallSeeds[:3] {
		var calls []batchCall
		if !flatBatchCalls(&calls, []byte(s)) {
			t.Errorf("the fast path refused %s", s)
		}
	}
}

// Negative control: SameAsJSON catches a decoder known to be wrong.
func TestFlatBatchCallsCheckBites(t *testing.T) {
	dropsEmpty := func(calls *[]batchCall, b []byte) bool { // [] read as null
		ok := flatBatchCalls(calls, b)
		if len(*calls) == 0 {
			*calls = nil
		}
		return ok
	}
	if !flatjsontest.Caught(batchCallSeeds, dropsEmpty) {
		t.Error("a batch decoder that reads [] as null passed")
	}
}

// batchCallKeys are batchCall's JSON names (a field added without its
// name there would be skipped by the fast path when sent up to case).
func TestBatchCallKeysAreTheJSONNames(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[batchCall]().Fields() {
		names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(batchCallKeys))) {
		t.Errorf("batchCall's JSON names %v, the fast path's list %v", names, batchCallKeys)
	}
}
