package maelstrom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Wire layout of every line the node writes (envelope keys in this order,
// compact JSON, one '\n'):
//
//	{"src":S,"dest":D,"body":{"type":T[,"in_reply_to":R]<fields>,"msg_id":M}}
//
// The caller's fields are spliced between the reserved keys in the order
// encoding/json writes them (struct field order), so a reader sees what the
// message is and what it answers first, and its sequence number last.

// reservedKeys are the body keys the library writes itself. A fields value
// that also has one of them would put a duplicate key on the wire.
var reservedKeys = [...]string{"type", "msg_id", "in_reply_to"}

// fieldsInner marshals the caller's fields and returns the inside of the
// object (without braces). nil, a nil pointer or a nil map mean no fields.
func fieldsInner(fields any) ([]byte, error) {
	if fields == nil {
		return nil, nil
	}
	obj, err := marshalNoEscape(fields)
	if err != nil {
		return nil, fmt.Errorf("encoding fields %T: %w", fields, err)
	}
	if string(obj) == "null" {
		return nil, nil
	}
	if obj[0] != '{' {
		return nil, fmt.Errorf("fields %T must encode as a JSON object, got %s", fields, clip(obj, 40))
	}
	if err := checkReserved(fields, obj); err != nil {
		return nil, err
	}
	return obj[1 : len(obj)-1], nil
}

// marshalNoEscape is json.Marshal without HTML escaping, so "<" stays "<"
// in logs and histories (both forms are valid JSON).
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// appendLine appends one complete output line. inner is fieldsInner's
// result; hasInReplyTo selects the reply layout.
func appendLine(dst []byte, src, dest, typ string, inReplyTo int64, hasInReplyTo bool, inner []byte, msgID int64) []byte {
	dst = append(dst, `{"src":`...)
	dst = appendString(dst, src)
	dst = append(dst, `,"dest":`...)
	dst = appendString(dst, dest)
	dst = append(dst, `,"body":{"type":`...)
	dst = appendString(dst, typ)
	if hasInReplyTo {
		dst = append(dst, `,"in_reply_to":`...)
		dst = strconv.AppendInt(dst, inReplyTo, 10)
	}
	if len(inner) > 0 {
		dst = append(dst, ',')
		dst = append(dst, inner...)
	}
	dst = append(dst, `,"msg_id":`...)
	dst = strconv.AppendInt(dst, msgID, 10)
	return append(dst, "}}\n"...)
}

// appendString appends s as a JSON string. Node ids and message types are
// plain ASCII, which takes the fast path; anything else goes through
// encoding/json so the output is always valid JSON.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			quoted, _ := marshalNoEscape(s) // a string always marshals
			return append(dst, quoted...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// reservedByType caches, per struct type, whether its JSON form can contain
// a reserved key, so the check costs one map look-up per message.
var reservedByType sync.Map // reflect.Type -> reservedCheck

type reservedCheck struct{ err error }

var marshalerType = reflect.TypeFor[json.Marshaler]()

// checkReserved refuses fields whose object has a key the library writes.
// Plain struct types are checked once by their field tags; other types (maps,
// json.RawMessage, custom marshalers) by their encoded keys.
func checkReserved(fields any, obj []byte) error {
	t := reflect.TypeOf(fields)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return checkReservedKeys(obj) // keys not fixed by the type
	}
	if cached, ok := reservedByType.Load(t); ok {
		return cached.(reservedCheck).err
	}
	err := checkReservedStruct(t)
	reservedByType.Store(t, reservedCheck{err})
	return err
}

func checkReservedStruct(t reflect.Type) error {
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			continue // flattened: its own fields are visited too
		}
		if name == "" {
			name = f.Name
		}
		if isReserved(name) {
			return fmt.Errorf("fields %s has key %q, which the library writes itself", t, name)
		}
	}
	return nil
}

func checkReservedKeys(obj []byte) error {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // '{'
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if k, _ := key.(string); isReserved(k) {
			return fmt.Errorf("fields have key %q, which the library writes itself", k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

func isReserved(key string) bool {
	for _, r := range reservedKeys {
		if key == r {
			return true
		}
	}
	return false
}
