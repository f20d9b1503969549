package flatjson

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The scanners are held to encoding/json: whatever they accept, whole,
// encoding/json reads the same. The checks take the scanner as an
// argument, so that TestChecksCatchMutants can hand them wrong ones.

type scanner func(b []byte, i int) (int, bool)

// checkScalar: a Scalar accepted whole is valid JSON, and an integer's
// Int and a String's Unquote are what encoding/json reads.
func checkScalar(scan scanner, b []byte) error {
	end, ok := scan(b, 0)
	if !ok || end != len(b) {
		return nil
	}
	if !json.Valid(b) {
		return fmt.Errorf("Scalar accepted %q, which is not JSON", b)
	}
	var v string
	if s, ok := Unquote(b); ok && (json.Unmarshal(b, &v) != nil || v != string(s)) {
		return fmt.Errorf("Unquote(%q) = %q; encoding/json: %q", b, s, v)
	}
	var n int64
	if got, ok := Int(b); ok && (json.Unmarshal(b, &n) != nil || n != got) {
		return fmt.Errorf("Int(%q) = %d; encoding/json: %d", b, got, n)
	}
	return nil
}

// checkWhole: an object or an array of flat objects accepted whole is
// valid JSON.
func checkWhole(scan scanner, b []byte) error {
	end, ok := scan(b, Space(b, 0))
	if !ok || Space(b, end) != len(b) {
		return nil
	}
	if !json.Valid(b) {
		return fmt.Errorf("accepted %q, which is not JSON", b)
	}
	return nil
}

func arrayOfObjects(b []byte, i int) (int, bool) { return Elements(b, i, Object) }

var scalarSeeds = []string{"0", "-0", "7", "-12", "01", "1.5", "1e3", "99999999999999999999", "-", "", "12x",
	`""`, `"ch_1"`, `"a\"b"`, `"tab	"`, `"é"`, `"<&>"`, `"open`, "true", "fals", "null"}
var wholeSeeds = []string{`{}`, ` { } `, `{"a":1}`, `{"a":"b","c":null,"d":true,"e":false,"f":-3}`, `{"a":[1]}`, `{"a":{}}`,
	`{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":tru}`, `{"a":1}}`, `{"a":01}`, `{`,
	`[]`, `[{}]`, `[{"a":1},{"b":"c"}]`, `[{},]`, `[,]`, `[{}{}]`, `[{}`}

func FuzzScalar(f *testing.F) {
	for _, s := range scalarSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := checkScalar(Scalar, b); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzWhole(f *testing.F) {
	for _, s := range wholeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, scan := range []scanner{Object, arrayOfObjects} {
			if err := checkWhole(scan, b); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The scanners take the usual bodies: a fast path that never fires
// would pass every check above.
func TestScannersTakeTheUsualBodies(t *testing.T) {
	for _, s := range []string{`{"type":"lease_check_ok","primary":null,"remaining_ms":0,"expired":false}`,
		` {"type":"error","code":11,"text":"no quorum in time"} `} {
		if !Flat([]byte(s), func(_, _ []byte) bool { return true }) {
			t.Errorf("Flat refused %s", s)
		}
	}
	b := []byte(`[{"op":"lease_check","body":{"chunk_handle":"c1"}}, {"op":"lease_renew","body":{"chunk_handle":"c2","server":"s","lease_ms":500}}]`)
	if end, ok := Elements(b, 0, func(b []byte, i int) (int, bool) {
		return Members(b, i, func(b []byte, i int) (int, bool) {
			if end, ok := Object(b, i); ok {
				return end, true
			}
			return Scalar(b, i)
		}, nil)
	}); !ok || end != len(b) {
		t.Errorf("Elements refused %s", b)
	}
}

// Negative controls: each check catches a scanner that is wrong.
func TestChecksCatchMutants(t *testing.T) {
	// takes a leading zero, and a string's escapes as its content
	loose := func(b []byte, i int) (int, bool) {
		if string(b) == "01" || string(b) == `"a\"b"` {
			return len(b), true
		}
		return Scalar(b, i)
	}
	trailingComma := func(b []byte, i int) (int, bool) {
		if string(b) == `[{},]` {
			return len(b), true
		}
		return arrayOfObjects(b, i)
	}
	caught := func(name string, check func([]byte) error, seeds []string) {
		for _, s := range seeds {
			if check([]byte(s)) != nil {
				return
			}
		}
		t.Errorf("the %s check passed a wrong scanner on every seed", name)
	}
	caught("Scalar", func(b []byte) error { return checkScalar(loose, b) }, scalarSeeds)
	caught("Whole", func(b []byte) error { return checkWhole(trailingComma, b) }, wholeSeeds)
}
