package history

import "bytes"

// A fast path for decoding flat JSON objects: history lines (opline.go)
// and the workloads' values and replies. Checking thousands of histories,
// encoding/json's reflection dominated the checkers' time. ScanFlat
// accepts only a strict subset of JSON (an object whose values are plain
// ASCII strings without escapes, integers, true, false or null); anything
// else makes the caller fall back to encoding/json, so results and errors
// are always encoding/json's. FuzzOpLine and the workloads' fuzz tests
// hold the two to equality.

// ScanFlat calls field with each key and raw value of a flat object. It
// returns false, having possibly called field, when b is outside the
// subset; the caller then discards what it gathered and falls back.
func ScanFlat(b []byte, field func(key, val []byte) bool) bool {
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
		key, next, ok := ScanString(b, i)
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

// ScanString returns the string token starting at i, quotes included,
// when it is printable ASCII without escapes.
func ScanString(b []byte, i int) ([]byte, int, bool) {
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
		_, end, ok := ScanString(b, i)
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

// FoldsToOneOf reports whether key equals one of names up to case, as
// encoding/json matches keys to fields: a key that matches a field only
// up to case makes a fast decoder fall back.
func FoldsToOneOf(key []byte, names []string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}
