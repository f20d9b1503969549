package simnet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// envelope is a node's stdout line that passed Maelstrom's checks
// (maelstrom-spec A.5 steps 1-3). Registration of src and dest (step 4)
// is the network's check.
type envelope struct {
	Src, Dest string
	Body      json.RawMessage // a compact JSON object
}

// allowedKeys is Maelstrom's closed envelope schema; "id" is optional and
// ignored (the network assigns its own).
var allowedKeys = []string{"body", "dest", "id", "src"}

// parseEnvelope validates one stdout line (without its newline) the way
// Maelstrom does, and explains the first problem in words a node author
// can act on.
func parseEnvelope(line []byte) (envelope, error) {
	if env, ok := parseCanonical(line); ok {
		return env, nil
	}
	return parseFull(line)
}

// parseFull is parseEnvelope for any line.
func parseFull(line []byte) (envelope, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return envelope{}, fmt.Errorf("blank line: stdout may carry only messages, one JSON object per line")
	}
	var top map[string]json.RawMessage // the key set itself is validated
	if err := json.Unmarshal(line, &top); err != nil {
		if !json.Valid(line) {
			return envelope{}, fmt.Errorf("not well-formed JSON (%v); log to stderr, not stdout", err)
		}
		return envelope{}, fmt.Errorf("the line is a JSON %s, not an object {src, dest, body}", kindOf(line))
	}
	if top == nil {
		return envelope{}, fmt.Errorf("the line is JSON null, not an object {src, dest, body}")
	}
	if err := checkKeys(top); err != nil {
		return envelope{}, err
	}
	var env envelope
	var err error
	if env.Src, err = stringField(top, "src"); err != nil {
		return envelope{}, err
	}
	if env.Dest, err = stringField(top, "dest"); err != nil {
		return envelope{}, err
	}
	if env.Body, err = bodyField(top["body"]); err != nil {
		return envelope{}, err
	}
	if raw, ok := top["id"]; ok && !isJSONInt(raw) {
		return envelope{}, fmt.Errorf(`"id" must be an integer, got %s`, raw)
	}
	return env, nil
}

// checkKeys rejects missing required keys and keys outside the schema.
func checkKeys(top map[string]json.RawMessage) error {
	for _, k := range []string{"src", "dest", "body"} {
		if _, ok := top[k]; !ok {
			return fmt.Errorf("missing %q: every message needs src, dest and body", k)
		}
	}
	var extra []string
	for k := range top {
		if !slices.Contains(allowedKeys, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("extra top-level key %q: the envelope allows only src, dest, body and id (put fields inside body)", extra[0])
	}
	return nil
}

func stringField(top map[string]json.RawMessage, key string) (string, error) {
	var s string
	if err := json.Unmarshal(top[key], &s); err != nil || kindOf(top[key]) != "string" {
		return "", fmt.Errorf("%q is a JSON %s, not a string", key, kindOf(top[key]))
	}
	return s, nil
}

// bodyField compacts an object body; null becomes {} as in Maelstrom.
func bodyField(raw json.RawMessage) (json.RawMessage, error) {
	switch kindOf(raw) {
	case "null":
		return json.RawMessage(`{}`), nil
	case "object":
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf(`"body" is a JSON %s, not an object`, kindOf(raw))
}

// kindOf names the JSON type of a valid JSON text.
func kindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// isJSONInt reports whether raw is a JSON integer literal: 5 and -5, not
// 5.0, 5e0, "5" or null (Maelstrom's schema wants an integer).
func isJSONInt(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '-' {
		raw = raw[1:]
	}
	if len(raw) == 0 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseCanonical is parseEnvelope's fast path for the line almost every
// node prints: exactly {"src":"S","dest":"D","body":{...}} with plain
// printable ASCII names (no escapes) and a body without a whitespace
// byte, which, being valid JSON, is then already compact. For such a
// line it returns what the full parse returns (the same src, dest and
// body bytes); for any other it says no, and the full parse decides. It
// saves the harness a map, a JSON decode and a compaction per message,
// most of its CPU at thousands of messages a second.
func parseCanonical(line []byte) (envelope, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"src":"`))
	if !ok {
		return envelope{}, false
	}
	src, rest, ok := plainString(rest)
	if !ok {
		return envelope{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"dest":"`)); !ok {
		return envelope{}, false
	}
	dest, rest, ok := plainString(rest)
	if !ok {
		return envelope{}, false
	}
	if !bytes.HasPrefix(rest, []byte(`,"body":{`)) || rest[len(rest)-1] != '}' {
		return envelope{}, false
	}
	body := rest[len(`,"body":`) : len(rest)-1] // {...}, without the envelope's closing brace
	if bytes.ContainsAny(body, " \t\r\n") || !json.Valid(body) {
		return envelope{}, false
	}
	return envelope{Src: src, Dest: dest, Body: body}, true
}

// plainString reads a JSON string's contents up to its closing quote when
// they are printable ASCII without escapes, and returns what follows.
func plainString(b []byte) (string, []byte, bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return string(b[:i]), b[i+1:], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", nil, false
		}
	}
	return "", nil, false
}
