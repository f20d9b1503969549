// Package jsonstr appends Go strings to JSON output without
// encoding/json's reflection in the common case: node names, chunk
// handles and server names need no escaping, so they are copied between
// quotes; anything else goes through encoding/json, so the bytes are
// always the ones json.Marshal writes.
package jsonstr

import "encoding/json"

// Append appends s to dst as a JSON string, exactly as json.Marshal(s)
// would write it.
func Append(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a Go string always marshals
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
