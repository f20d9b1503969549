package lease

import (
	"encoding/json"

	"chunklease/internal/flatjson"
)

// leaseValueKeys and leaseReplyKeys are the field names encoding/json
// would match (case-insensitively): a key that matches one only up to
// case falls back.
var (
	leaseValueKeys = []string{"chunk", "server", "lease_ms", "primary", "expires_in_ms", "new_expires_in_ms", "remaining_ms", "expired", "token"}
	leaseReplyKeys = []string{"type", "chunk_handle", "primary", "expires_in_ms", "new_expires_in_ms", "remaining_ms", "expired", "token"}
)

// flatDecodable is a type whose flat JSON objects setField reads one
// key at a time.
type flatDecodable[T any] interface {
	*T
	setField(key, val []byte) bool
}

// decodeFlat is json.Unmarshal(b, &v) for a T: the flat scan when every
// field is one setField knows, encoding/json otherwise.
func decodeFlat[T any, P flatDecodable[T]](b []byte) (T, error) {
	var v T
	if flatjson.Flat(b, P(&v).setField) {
		return v, nil
	}
	var fresh T
	err := json.Unmarshal(b, &fresh)
	return fresh, err
}

// decodeLeaseValue is json.Unmarshal(b, &v) for a LeaseValue.
func decodeLeaseValue(b []byte) (LeaseValue, error) { return decodeFlat[LeaseValue](b) }

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
	return !flatjson.FoldsToOneOf(key, leaseValueKeys)
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
	n, ok := flatjson.Int(val)
	if !ok {
		return false
	}
	*dst = &n
	return true
}

// decodeLeaseReply is json.Unmarshal(b, &r) for a leaseReply.
func decodeLeaseReply(b []byte) (leaseReply, error) { return decodeFlat[leaseReply](b) }

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
		return !flatjson.FoldsToOneOf(key, leaseReplyKeys)
	}
	return true
}
