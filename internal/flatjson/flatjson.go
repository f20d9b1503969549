package flatjson

import (
	"bytes"
	"strconv"
)

// Flat calls field with each key (unquoted) and raw value of a flat
// object: one object, nothing after it but white space, whose values are
// Scalars. It returns false, having possibly called field, when b is
// outside the subset or field refuses a member; the caller then discards
// what it gathered and falls back.
func Flat(b []byte, field func(key, val []byte) bool) bool {
	return Whole(b, Scalar, field)
}

// Whole is Members over all of b: one object, nothing after it but
// white space.
func Whole(b []byte, value func(b []byte, i int) (int, bool), field func(key, val []byte) bool) bool {
	end, ok := Members(b, Space(b, 0), value, field)
	return ok && Space(b, end) == len(b)
}

// Members walks the object that starts at b[i], calling field (if not
// nil) with each key, unquoted, and raw value, whose extent value finds.
// It returns the index after the closing brace, or false when the object
// is outside the subset or field refuses a member.
func Members(b []byte, i int, value func(b []byte, i int) (int, bool), field func(key, val []byte) bool) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		key, next, ok := String(b, i)
		if !ok {
			return 0, false
		}
		i = Space(b, next)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = Space(b, i+1)
		end, ok := value(b, i)
		if !ok || (field != nil && !field(key[1:len(key)-1], b[i:end])) {
			return 0, false
		}
		var closed bool
		if i, closed, ok = closeOrNext(b, end, '}'); !ok || closed {
			return i, ok
		}
	}
}

// Elements walks the array that starts at b[i], calling elem with the
// index of each element, which returns the index after it. It returns
// the index after the closing bracket, or false when the array or an
// element is outside the subset.
func Elements(b []byte, i int, elem func(b []byte, i int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '[' {
		return 0, false
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := elem(b, i)
		if !ok {
			return 0, false
		}
		var closed bool
		if i, closed, ok = closeOrNext(b, end, ']'); !ok || closed {
			return i, ok
		}
	}
}

// closeOrNext reads, after white space from end, either the closing
// byte (closed; i after it) or a comma (i at the next item, after white
// space).
func closeOrNext(b []byte, end int, closing byte) (i int, closed, ok bool) {
	i = Space(b, end)
	switch {
	case i >= len(b):
		return 0, false, false
	case b[i] == closing:
		return i + 1, true, true
	case b[i] != ',':
		return 0, false, false
	}
	return Space(b, i+1), false, true
}

// Space is the index of the first byte at or after i that is not JSON
// white space.
func Space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// String returns the string token starting at i, quotes included, when
// it is printable ASCII without escapes.
func String(b []byte, i int) ([]byte, int, bool) {
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

// Scalar returns the end of the scalar value starting at i: a String,
// an integer, true, false or null.
func Scalar(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		_, end, ok := String(b, i)
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

// Object returns the end of a flat object starting at i: every value a
// Scalar.
func Object(b []byte, i int) (int, bool) { return Members(b, i, Scalar, nil) }

// Value returns the end of a value starting at i that is a flat object
// (Object) or a Scalar.
func Value(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '{' {
		return Object(b, i)
	}
	return Scalar(b, i)
}

// Int is the value of an integer token (Scalar vouched for its syntax);
// false for another token or one that does not fit an int64.
func Int(val []byte) (int64, bool) {
	if len(val) == 0 || (val[0] != '-' && (val[0] < '0' || val[0] > '9')) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(val), 10, 64)
	return n, err == nil
}

// Unquote is the content of a String token; false for another token.
func Unquote(val []byte) ([]byte, bool) {
	if len(val) < 2 || val[0] != '"' {
		return nil, false
	}
	return val[1 : len(val)-1], true
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
