package workloads

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// A fast path for decoding the flat JSON objects of lease values and
// replies. The lease core's simulation checks thousands of histories, and
// encoding/json's reflection dominated the checker's time. scanFlat
// accepts only a strict subset of JSON (an object whose values are plain
// ASCII strings without escapes, integers, true, false or null); anything
// else makes the caller fall back to encoding/json, so results and errors
// are always encoding/json's. FuzzFlatDecoders holds the two to equality.

// scanFlat calls field with each key and raw value of a flat object. It
// returns false, having possibly called field, when b is outside the
// subset; the caller then discards what it gathered and falls back.
func scanFlat(b []byte, field func(key, val []byte) bool) bool {
	return scanWhole(b, scanScalar, field)
}

// scanWhole is scanMembers over all of b: one object, nothing after it
// but white space.
func scanWhole(b []byte, value func(b []byte, i int) (int, bool), field func(key, val []byte) bool) bool {
	end, ok := scanMembers(b, skipSpace(b, 0), value, field)
	return ok && skipSpace(b, end) == len(b)
}

// scanMembers walks the object that starts at b[i], calling field (if
// not nil) with each key, unquoted, and raw value, whose extent value
// finds. It returns the index after the closing brace, or false when the
// object is outside the subset or field refuses a member.
func scanMembers(b []byte, i int, value func(b []byte, i int) (int, bool), field func(key, val []byte) bool) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		key, next, ok := scanString(b, i)
		if !ok {
			return 0, false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		end, ok := value(b, i)
		if !ok || (field != nil && !field(key[1:len(key)-1], b[i:end])) {
			return 0, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the string token starting at i, quotes included,
// when it is printable ASCII without escapes.
func scanString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i : j+1], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// scanScalar returns the end of the scalar value starting at i.
func scanScalar(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		_, end, ok := scanString(b, i)
		return end, ok
	case 't':
		return i + 4, bytes.HasPrefix(b[i:], []byte("true"))
	case 'f':
		return i + 5, bytes.HasPrefix(b[i:], []byte("false"))
	case 'n':
		return i + 4, bytes.HasPrefix(b[i:], []byte("null"))
	}
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	start := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	// an integer: no leading zero unless it is 0 itself; a fraction or exponent falls back
	if j == start || (b[start] == '0' && j-start > 1) || (j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E')) {
		return 0, false
	}
	return j, true
}

// leaseValueKeys and leaseReplyKeys are the field names encoding/json
// would match (case-insensitively): a key that matches one only up to
// case falls back.
var (
	leaseValueKeys = []string{"chunk", "server", "lease_ms", "primary", "expires_in_ms", "new_expires_in_ms", "remaining_ms", "expired", "token"}
	leaseReplyKeys = []string{"type", "chunk_handle", "primary", "expires_in_ms", "new_expires_in_ms", "remaining_ms", "expired", "token"}
)

func foldsToOneOf(key []byte, names []string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// decodeLeaseValue is json.Unmarshal(b, &v) for a LeaseValue.
func decodeLeaseValue(b []byte) (LeaseValue, error) {
	var v LeaseValue
	if scanFlat(b, v.setField) {
		return v, nil
	}
	v = LeaseValue{}
	err := json.Unmarshal(b, &v)
	return v, err
}

// setField stores one raw value the way encoding/json would, or reports
// that it cannot.
func (v *LeaseValue) setField(key, val []byte) bool {
	null := string(val) == "null"
	switch string(key) {
	case "chunk":
		return null || flatString(val, &v.Chunk)
	case "server":
		return null || flatString(val, &v.Server)
	case "primary":
		v.Primary = nil
		if null {
			return true
		}
		v.Primary = new(string)
		return flatString(val, v.Primary)
	case "lease_ms":
		return flatIntPtr(val, &v.LeaseMs)
	case "expires_in_ms":
		return flatIntPtr(val, &v.ExpiresInMs)
	case "new_expires_in_ms":
		return flatIntPtr(val, &v.NewExpiresInMs)
	case "remaining_ms":
		return flatIntPtr(val, &v.RemainingMs)
	case "token":
		return flatIntPtr(val, &v.Token)
	case "expired":
		v.Expired = nil
		if null {
			return true
		}
		if string(val) != "true" && string(val) != "false" {
			return false
		}
		t := string(val) == "true"
		v.Expired = &t
		return true
	}
	return !foldsToOneOf(key, leaseValueKeys)
}

func flatString(val []byte, dst *string) bool {
	if len(val) < 2 || val[0] != '"' {
		return false
	}
	*dst = string(val[1 : len(val)-1])
	return true
}

func flatIntPtr(val []byte, dst **int64) bool {
	*dst = nil
	if string(val) == "null" {
		return true
	}
	if len(val) == 0 || (val[0] != '-' && (val[0] < '0' || val[0] > '9')) {
		return false
	}
	n, err := strconv.ParseInt(string(val), 10, 64)
	if err != nil {
		return false
	}
	*dst = &n
	return true
}

// decodeLeaseReply is json.Unmarshal(b, &r) for a leaseReply.
func decodeLeaseReply(b []byte) (leaseReply, error) {
	var r leaseReply
	if scanFlat(b, r.setField) {
		return r, nil
	}
	r = leaseReply{}
	err := json.Unmarshal(b, &r)
	return r, err
}

func (r *leaseReply) setField(key, val []byte) bool {
	raw := json.RawMessage(val)
	switch string(key) {
	case "type":
		r.Type = raw
	case "chunk_handle":
		r.ChunkHandle = raw
	case "primary":
		r.Primary = raw
	case "expires_in_ms":
		r.ExpiresInMs = raw
	case "new_expires_in_ms":
		r.NewExpiresInMs = raw
	case "remaining_ms":
		r.RemainingMs = raw
	case "expired":
		r.Expired = raw
	case "token":
		r.Token = raw
	default:
		return !foldsToOneOf(key, leaseReplyKeys)
	}
	return true
}
