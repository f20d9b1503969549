package client

import (
	"encoding/json"

	"chunklease/internal/flatjson"
)

// The fast path of the replies' decoding (internal/flatjson): at 16
// callers encoding/json's reflection, reading each batch's answer and
// then each call's reply, was about a seventh of the client's CPU
// (docs/performance.md "Fewer copies, the wire without reflection"). A body outside flatjson's subset, or holding a
// field this path does not read (members, addrs), falls back to
// encoding/json, so every result is encoding/json's (FuzzReplyFlat,
// FuzzBatchResultsFlat).

// replyKeys are reply's JSON names: a key that matches one only up to
// case falls back, as encoding/json would match it.
var replyKeys = []string{"type", "chunk_handle", "primary", "expires_in_ms", "new_expires_in_ms", "token", "remaining_ms",
	"expired", "is_master", "master", "code", "text", "epoch", "members", "next_change_in_ms", "addrs", "retry_in_ms"}

// decodeFlat reads b into r (fresh) as json.Unmarshal would, or returns
// false.
func (r *reply) decodeFlat(b []byte) bool {
	return flatjson.Flat(b, r.setField)
}

// setField stores one raw value as encoding/json would, or returns false.
func (r *reply) setField(key, val []byte) bool {
	switch string(key) {
	case "type":
		return setString(val, &r.Type)
	case "chunk_handle":
		return setString(val, &r.ChunkHandle)
	case "text":
		return setString(val, &r.Text)
	case "primary":
		return setStringPtr(val, &r.Primary)
	case "master":
		return setStringPtr(val, &r.Master)
	case "expires_in_ms":
		return setInt(val, &r.ExpiresInMs)
	case "new_expires_in_ms":
		return setInt(val, &r.NewExpiresInMs)
	case "token":
		return setInt(val, &r.Token)
	case "remaining_ms":
		return setInt(val, &r.RemainingMs)
	case "next_change_in_ms":
		return setInt(val, &r.NextChangeInMs)
	case "retry_in_ms":
		return setInt(val, &r.RetryInMs)
	case "expired":
		return setBool(val, &r.Expired)
	case "is_master":
		return setBool(val, &r.IsMaster)
	case "code":
		if isNull(val) {
			r.Code = nil
			return true
		}
		n, ok := flatjson.Int(val)
		if !ok || int64(int(n)) != n {
			return false
		}
		c := int(n)
		r.Code = &c
		return true
	case "epoch", "members", "addrs":
		return isNull(val) // the membership fields: encoding/json reads them
	}
	return !flatjson.FoldsToOneOf(key, replyKeys)
}

func isNull(val []byte) bool { return string(val) == "null" }

// setString: null leaves a string as it is (encoding/json's rule).
func setString(val []byte, dst *string) bool {
	if isNull(val) {
		return true
	}
	s, ok := flatjson.Unquote(val)
	if ok {
		*dst = string(s)
	}
	return ok
}

// setStringPtr: null makes the pointer nil.
func setStringPtr(val []byte, dst **string) bool {
	if isNull(val) {
		*dst = nil
		return true
	}
	s, ok := flatjson.Unquote(val)
	if ok {
		v := string(s)
		*dst = &v
	}
	return ok
}

func setInt(val []byte, dst *int64) bool {
	if isNull(val) {
		return true
	}
	n, ok := flatjson.Int(val)
	if ok {
		*dst = n
	}
	return ok
}

func setBool(val []byte, dst *bool) bool {
	switch string(val) {
	case "null":
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return false
	}
	return true
}

// batchResults is the answer of POST /v1/batch.
type batchResults struct {
	Results []batchResult `json:"results"`
}

// batchResult is one call's answer in a batch: its status and body as
// its own endpoint would have answered.
type batchResult struct {
	Status      int             `json:"status"`
	RetryAfterS int             `json:"retry_after_s"`
	Body        json.RawMessage `json:"body"`
}

var batchResultKeys = []string{"status", "retry_after_s", "body"}

// decode reads b into r as json.Unmarshal would.
func (r *batchResults) decode(b []byte) error {
	*r = batchResults{}
	if r.decodeFlat(b) {
		return nil
	}
	*r = batchResults{}
	return json.Unmarshal(b, r)
}

// decodeFlat reads {"results":[{...}, ...]}, each result's body a flat
// object, or returns false.
func (r *batchResults) decodeFlat(b []byte) bool {
	return flatjson.Whole(b, func(b []byte, i int) (int, bool) {
		if r.Results != nil {
			// A second "results": encoding/json decodes it over the
			// first one's elements, which this path does not mimic.
			return 0, false
		}
		r.Results = make([]batchResult, 0, 8)
		return flatjson.Elements(b, i, r.result)
	}, func(key, _ []byte) bool { return string(key) == "results" })
}

// result reads one element of results.
func (r *batchResults) result(b []byte, i int) (int, bool) {
	r.Results = append(r.Results, batchResult{})
	res := &r.Results[len(r.Results)-1]
	return flatjson.Members(b, i, flatjson.Value, res.setField)
}

func (res *batchResult) setField(key, val []byte) bool {
	switch string(key) {
	case "status", "retry_after_s":
		dst := &res.Status
		if string(key) == "retry_after_s" {
			dst = &res.RetryAfterS
		}
		if isNull(val) {
			return true
		}
		n, ok := flatjson.Int(val)
		if ok && int64(int(n)) == n {
			*dst = int(n)
			return true
		}
		return false
	case "body":
		if val[0] != '{' {
			return false // null and scalars: encoding/json's
		}
		res.Body = val
		return true
	}
	return !flatjson.FoldsToOneOf(key, batchResultKeys)
}
