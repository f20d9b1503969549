package maelstrom

// A one-pass decoder for the common input line. encoding/json read each
// message about four times (validate and decode the envelope, then validate
// and decode the body's reserved fields) and took about a third of a
// saturated node's CPU (docs/performance.md). fastParse reads the envelope
// and the body's reserved fields in one validating pass, and declines
// (ok=false) whenever the line is outside a strict subset, so parseMessage
// falls back to encoding/json (parseMessageStd) and every result and every
// error stays encoding/json's. The subset: a valid JSON object whose keys
// are printable ASCII without escapes, each reserved key (src, dest, body;
// type, msg_id, in_reply_to inside body) at most once and spelled exactly,
// no other key that encoding/json would fold onto a reserved one (it
// matches keys case-insensitively), src, dest and type plain strings
// (printable ASCII, no escapes), src and dest non-empty, msg_id and
// in_reply_to well-formed integers when present, nesting at most
// maxFastDepth deep. FuzzParseMessageFastPath holds the two decoders to
// equality.

// maxFastDepth bounds nesting in the fast path (encoding/json's own limit,
// 10000, and its error are left to the fallback).
const maxFastDepth = 64

// fastParse decodes data (one line, '\n' allowed after the object) when it
// is in the subset; ok=false means "use parseMessageStd", never "invalid".
// Body shares data's memory.
func fastParse(data []byte) (m Message, ok bool) {
	s := scanner{b: data}
	var src, dest, body []byte
	var h fastHeader
	var seen [3]bool // src, dest, body
	if !s.object(func(key []byte) bool {
		slot, target := -1, (*[]byte)(nil)
		switch string(key) {
		case "src":
			slot, target = 0, &src
		case "dest":
			slot, target = 1, &dest
		case "body":
			slot, target = 2, &body
		default:
			return !foldsOnto(key, "src", "dest", "body") && s.value(1)
		}
		if seen[slot] {
			return false
		}
		seen[slot] = true
		start := s.i
		if slot == 2 && s.i < len(s.b) && s.b[s.i] == '{' {
			ok = s.object(func(key []byte) bool { return h.member(&s, key) }) // the body: reserved fields on the way
		} else {
			ok = s.value(1)
		}
		*target = s.b[start:s.i]
		return ok
	}) || !s.end() {
		return Message{}, false
	}
	srcS, ok1 := plainString(src)
	destS, ok2 := plainString(dest)
	if !ok1 || !ok2 || srcS == "" || destS == "" || len(body) == 0 || body[0] != '{' {
		return Message{}, false
	}
	m = Message{Src: srcS, Dest: destS, Body: body}
	return m, h.fill(&m)
}

// fastHeader is the body's reserved fields as raw tokens, nil when absent.
type fastHeader struct {
	typ, msgID, inReplyTo []byte
	seen                  [3]bool
}

// member reads the body member named key (the scanner is at its value).
func (h *fastHeader) member(s *scanner, key []byte) bool {
	slot, target := -1, (*[]byte)(nil)
	switch string(key) {
	case "type":
		slot, target = 0, &h.typ
	case "msg_id":
		slot, target = 1, &h.msgID
	case "in_reply_to":
		slot, target = 2, &h.inReplyTo
	default:
		return !foldsOnto(key, "type", "msg_id", "in_reply_to") && s.value(2)
	}
	if h.seen[slot] {
		return false
	}
	h.seen[slot] = true
	start := s.i
	if !s.value(2) {
		return false
	}
	*target = s.b[start:s.i]
	return true
}

// fill sets m's reserved fields; false when one is outside the subset.
func (h *fastHeader) fill(m *Message) bool {
	if h.typ != nil {
		t, ok := plainString(h.typ)
		if !ok {
			return false
		}
		m.Type = t
	}
	var ok bool
	if h.msgID != nil {
		if m.MsgID, ok = parseInt(h.msgID); !ok {
			return false
		}
		m.HasMsgID = true
	}
	if h.inReplyTo != nil {
		if m.InReplyTo, ok = parseInt(h.inReplyTo); !ok {
			return false
		}
		m.HasInReplyTo = true
	}
	return true
}

// foldsOnto reports whether key equals one of names ignoring ASCII case:
// encoding/json would then match it to that field (keys here are ASCII).
func foldsOnto(key []byte, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && asciiEqualFold(key, n) {
			return true
		}
	}
	return false
}

func asciiEqualFold(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// plainString returns the contents of a JSON string token made of
// printable ASCII without escapes.
func plainString(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", false
	}
	for _, c := range tok[1 : len(tok)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(tok[1 : len(tok)-1]), true
}

// scanner is a validating JSON reader over b from position i.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace remains.
func (s *scanner) end() bool {
	s.skipSpace()
	return s.i == len(s.b)
}

// object reads an object whose keys are plain strings, calling member with
// each key while positioned at its value, which member must consume.
func (s *scanner) object(member func(key []byte) bool) bool {
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.skipSpace()
		start := s.i
		if !s.str() {
			return false
		}
		key := s.b[start+1 : s.i-1]
		if _, ok := plainString(s.b[start:s.i]); !ok {
			return false
		}
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.skipSpace()
		if !member(key) {
			return false
		}
		if more, ok := s.separator('}'); !more {
			return ok
		}
	}
}

// separator reads what follows a member or element: a comma (more is
// true) or the closing byte (more is false, ok true); anything else is
// outside JSON (both false).
func (s *scanner) separator(closing byte) (more, ok bool) {
	s.skipSpace()
	switch {
	case s.i >= len(s.b):
		return false, false
	case s.b[s.i] == ',':
		s.i++
		return true, true
	case s.b[s.i] == closing:
		s.i++
		return false, true
	}
	return false, false
}

// value reads any JSON value at nesting depth (1 for the envelope's).
func (s *scanner) value(depth int) bool {
	s.skipSpace()
	if s.i >= len(s.b) || depth > maxFastDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(func([]byte) bool { return s.value(depth + 1) })
	case c == '[':
		return s.array(depth)
	case c == '"':
		return s.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *scanner) array(depth int) bool {
	s.i++ // '['
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth + 1) {
			return false
		}
		if more, ok := s.separator(']'); !more {
			return ok
		}
	}
}

// str reads a string token with JSON's escapes; other bytes >= 0x20 pass
// as encoding/json lets them (invalid UTF-8 included).
func (s *scanner) str() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !s.escape() {
				return false
			}
		}
	}
	return false
}

// escape checks the escape at s.i ('\\') and leaves s.i on its last byte.
func (s *scanner) escape() bool {
	if s.i+1 >= len(s.b) {
		return false
	}
	s.i++
	switch s.b[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if s.i+4 >= len(s.b) {
			return false
		}
		for _, h := range s.b[s.i+1 : s.i+5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		s.i += 4
		return true
	}
	return false
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}
