// Package flatjsontest holds a fast decoder (internal/flatjson) to
// encoding/json, for the fuzz tests of each package that has one.
package flatjsontest

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// SameAsJSON reports an error when fast accepts b but encoding/json
// refuses it or reads another value into a fresh T. A decoder that
// refuses b (false) is always right: its caller falls back to
// encoding/json.
func SameAsJSON[T any](b []byte, fast func(v *T, b []byte) bool) error {
	var got T
	if !fast(&got, b) {
		return nil
	}
	var want T
	if err := json.Unmarshal(b, &want); err != nil {
		return fmt.Errorf("the fast path read %q, which encoding/json refuses: %v", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("the fast path read %q as %+v; encoding/json reads %+v", b, got, want)
	}
	return nil
}

// Caught reports whether SameAsJSON catches fast, a decoder known to be
// wrong, on one of seeds: a fuzz test's negative control.
func Caught[T any](seeds []string, fast func(v *T, b []byte) bool) bool {
	for _, s := range seeds {
		if SameAsJSON([]byte(s), fast) != nil {
			return true
		}
	}
	return false
}
