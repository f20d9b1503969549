package server

import (
	"encoding/json"

	"chunklease/internal/flatjson"
)

// The fast path of a batch's decoding (internal/flatjson): the array of
// calls was the one body a busy member still read with encoding/json
// (each call's own body has lease.DecodeRequest's fast path). Outside
// flatjson's subset it falls back to encoding/json, so every result and
// refusal is encoding/json's (FuzzBatchCallsFlat).

var batchCallKeys = []string{"op", "body"}

// decodeBatchCalls reads b into calls as json.Unmarshal would.
func decodeBatchCalls(b []byte) (calls []batchCall, err error) {
	if flatBatchCalls(&calls, b) {
		return calls, nil
	}
	calls = nil
	err = json.Unmarshal(b, &calls)
	return calls, err
}

// flatBatchCalls reads [{"op":...,"body":{...}}, ...], each body a flat
// object, into *calls (nil), or returns false.
func flatBatchCalls(calls *[]batchCall, b []byte) bool {
	*calls = make([]batchCall, 0, 8)
	end, ok := flatjson.Elements(b, flatjson.Space(b, 0), func(b []byte, i int) (int, bool) {
		*calls = append(*calls, batchCall{})
		return flatjson.Members(b, i, flatjson.Value, (&(*calls)[len(*calls)-1]).setField)
	})
	return ok && flatjson.Space(b, end) == len(b)
}

// setField stores one raw value as encoding/json would, or returns false.
func (c *batchCall) setField(key, val []byte) bool {
	switch string(key) {
	case "op":
		if string(val) == "null" {
			return true
		}
		s, ok := flatjson.Unquote(val)
		c.Op = string(s)
		return ok
	case "body":
		if val[0] != '{' {
			return false // null and scalars: encoding/json's
		}
		c.Body = val
		return true
	}
	return !flatjson.FoldsToOneOf(key, batchCallKeys)
}
