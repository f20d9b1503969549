package lease

import "chunklease/internal/flatjson"

// decodeFlat reads the usual body of a grant, renew, check or release
// without encoding/json, whose map of raw fields cost a busy member
// more than the rest of the request's decoding: one flat object whose
// keys are the request's fields (chunk_handle, server, lease_ms, token),
// each once, strings of printable ASCII without escapes, whole numbers
// in plain digits (internal/flatjson). ok is false for anything else, valid or not (escapes,
// other keys, null, fractions, exponents, a missing or empty field, a
// number out of range): DecodeRequest then decodes it through
// encoding/json (decodeFields), which also words the refusals. Whatever
// decodeFlat accepts, decodeFields reads the same (TestDecodeFlatAsFields).
func decodeFlat(op Op, body []byte) (r Request, ok bool) {
	r.Op = op
	var chunk, server, leaseMs, token bool // seen
	ok = flatjson.Flat(body, func(key, val []byte) bool {
		switch string(key) { // compared without a copy
		case "chunk_handle", "server":
			s, ok := flatjson.Unquote(val)
			isChunk := string(key) == "chunk_handle"
			if !ok || len(s) == 0 || isChunk && chunk || !isChunk && server {
				return false
			}
			if isChunk {
				chunk, r.Chunk = true, string(s)
			} else if server = true; op != OpCheck {
				r.Server = string(s)
			}
			return true
		case "lease_ms", "token":
			v, ok := flatjson.Int(val)
			isLeaseMs := string(key) == "lease_ms"
			if !ok || v <= 0 || len(val) > maxFlatDigits || isLeaseMs && leaseMs || !isLeaseMs && token {
				return false
			}
			if isLeaseMs {
				if leaseMs = true; op == OpGrant || op == OpRenew {
					r.LeaseMs = v
				}
			} else if token = true; op == OpRelease {
				r.Token = v
			}
			return true
		}
		return false
	})
	return r, ok && chunk && (server || op == OpCheck) && (token || op != OpRelease)
}

// maxFlatDigits bounds the numbers decodeFlat reads: 10^15-1 lies well
// inside 2^53, the bound of lease_ms and token.
const maxFlatDigits = 15
