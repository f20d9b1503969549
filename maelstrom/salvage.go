package maelstrom

import "encoding/json"

// Reading the envelope of a line the node will not read: one over the line
// limit (of which only the first maxLine bytes were kept) or one nested
// deeper than encoding/json reads. Its sender should still learn why it
// got no answer, and an error reply needs only src and msg_id. salvage
// walks the line as JSON as far as it goes, without recursion and without
// validating more than it needs, and takes src, dest, and in the body type,
// msg_id and in_reply_to from wherever they come before the walk stops.
// Keys match as encoding/json matches them (ASCII case folded), and a
// later duplicate wins, as there.

// maxJSONDepth is encoding/json's nesting limit: it refuses deeper input.
const maxJSONDepth = 10000

// salvage reads what it can of the envelope in b. ok reports whether the
// line can be answered: it has a src and an integer msg_id, and no
// in_reply_to (a reply is never answered).
func salvage(b []byte) (m Message, ok bool) {
	s := scanner{b: b}
	s.members(func(key []byte) bool {
		switch {
		case foldsOnto(key, "src"):
			return s.stringValue(&m.Src)
		case foldsOnto(key, "dest"):
			return s.stringValue(&m.Dest)
		case foldsOnto(key, "body") && s.i < len(s.b) && s.b[s.i] == '{':
			return s.members(func(key []byte) bool { return salvageHeader(&s, key, &m) })
		}
		return s.skip()
	})
	return m, m.Src != "" && m.HasMsgID && !m.HasInReplyTo
}

// salvageHeader reads one member of the body (the scanner is at its value).
func salvageHeader(s *scanner, key []byte, m *Message) bool {
	switch {
	case foldsOnto(key, "type"):
		return s.stringValue(&m.Type)
	case foldsOnto(key, "msg_id"):
		start := s.i
		if !s.skip() || s.i == len(s.b) { // a number cut by the end of b is not the number sent
			return false
		}
		m.MsgID, m.HasMsgID = parseInt(s.b[start:s.i])
		return true
	case foldsOnto(key, "in_reply_to"):
		m.HasInReplyTo = true
	}
	return s.skip()
}

// members walks an object, calling member with each key while positioned
// at its value, which member must pass over. It returns false where the
// walk stops before the object closes.
func (s *scanner) members(member func(key []byte) bool) bool {
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	for {
		s.skipSpace()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return true
		}
		start := s.i
		if !s.str() {
			return false
		}
		var key string
		if json.Unmarshal(s.b[start:s.i], &key) != nil {
			return false
		}
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.skipSpace()
		if !member([]byte(key)) {
			return false
		}
		if more, ok := s.separator('}'); !more {
			return ok
		}
	}
}

// stringValue reads a JSON string into v; false (v unchanged) for any
// other value or a string cut by the end of b.
func (s *scanner) stringValue(v *string) bool {
	start := s.i
	if !s.str() {
		return false
	}
	return json.Unmarshal(s.b[start:s.i], v) == nil
}

// skip passes over one value of any depth, with a counter instead of
// recursion: strings are read as strings (a bracket inside one does not
// count), anything else up to the next delimiter. It checks no more of
// the grammar than that, and returns false when b ends inside the value.
func (s *scanner) skip() bool {
	s.skipSpace()
	depth := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			if !s.str() {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true // a scalar ended by its container's close
			}
			if depth--; depth == 0 {
				s.i++
				return true
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return true
			}
		}
		s.i++
	}
	return false
}

// nestsDeeper reports whether b, read as JSON, opens more than limit
// brackets at once (outside strings).
func nestsDeeper(b []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
