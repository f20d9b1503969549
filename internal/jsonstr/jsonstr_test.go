package jsonstr

import (
	"encoding/json"
	"testing"
)

// FuzzAppend holds Append to json.Marshal's bytes, fast path or not.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "n1", "ch_17", `a"b`, `back\slash`, "<&>", "tab\t", "é", "\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("Append(%q) = %s, want x%s", s, got, want)
		}
	})
}
