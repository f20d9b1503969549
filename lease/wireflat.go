package lease

// decodeFlat reads the usual body of a grant, renew, check or release
// without encoding/json, whose map of raw fields cost a busy member
// more than the rest of the request's decoding: one flat object whose
// keys are the request's fields (chunk_handle, server, lease_ms, token),
// each once, strings of printable ASCII without escapes, whole numbers
// in plain digits. ok is false for anything else, valid or not (escapes,
// other keys, null, fractions, exponents, a missing or empty field, a
// number out of range): DecodeRequest then decodes it through
// encoding/json (decodeFields), which also words the refusals. Whatever
// decodeFlat accepts, decodeFields reads the same (TestDecodeFlatAsFields).
func decodeFlat(op Op, body []byte) (r Request, ok bool) {
	r.Op = op
	var chunk, server, leaseMs, token bool // seen
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return r, false
	}
	for i = skipSpace(body, i+1); ; {
		key, j, ok := flatString(body, i)
		if !ok {
			return r, false
		}
		if i = skipSpace(body, j); i >= len(body) || body[i] != ':' {
			return r, false
		}
		i = skipSpace(body, i+1)
		switch string(key) { // compared without a copy
		case "chunk_handle", "server":
			s, j, ok := flatString(body, i)
			isChunk := string(key) == "chunk_handle"
			if !ok || len(s) == 0 || isChunk && chunk || !isChunk && server {
				return r, false
			}
			if isChunk {
				chunk, r.Chunk = true, string(s)
			} else if server = true; op != OpCheck {
				r.Server = string(s)
			}
			i = j
		case "lease_ms", "token":
			v, j, ok := flatInt(body, i)
			isLeaseMs := string(key) == "lease_ms"
			if !ok || isLeaseMs && leaseMs || !isLeaseMs && token {
				return r, false
			}
			if isLeaseMs {
				if leaseMs = true; op == OpGrant || op == OpRenew {
					r.LeaseMs = v
				}
			} else if token = true; op == OpRelease {
				r.Token = v
			}
			i = j
		default:
			return r, false
		}
		if i = skipSpace(body, i); i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
			continue
		}
		if i >= len(body) || body[i] != '}' {
			return r, false
		}
		break
	}
	if skipSpace(body, i+1) != len(body) {
		return r, false
	}
	return r, chunk && (server || op == OpCheck) && (token || op != OpRelease)
}

// skipSpace is the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// flatString reads a JSON string at i that has printable ASCII only and
// no escapes: s is its bytes (in b), j the index after it.
func flatString(b []byte, i int) (s []byte, j int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j = i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, j, false
		}
	}
	return nil, j, false
}

// flatInt reads a whole number at i in plain digits, 1 to 10^15-1 (well
// inside 2^53, the bound of lease_ms and token; no sign, fraction or
// exponent, no leading zero); j is the index after it.
func flatInt(b []byte, i int) (v int64, j int, ok bool) {
	for j = i; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		if j-i == 15 {
			return 0, j, false
		}
		v = v*10 + int64(b[j]-'0')
	}
	if j == i || b[i] == '0' {
		return 0, j, false
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, j, false
	}
	return v, j, true
}
