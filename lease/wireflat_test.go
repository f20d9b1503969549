package lease_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"chunklease/lease"
)

// TestDecodeFlatAsFields: DecodeRequest, which reads the usual bodies
// without encoding/json (decodeFlat), gives what encoding/json's reading
// gives (decodeFields) for every body, request or refusal: random
// objects of the request fields and others, in any order and spacing,
// with strings and numbers of every kind, duplicates, nulls and broken
// syntax among them; and the usual bodies do take the flat path.
func TestDecodeFlatAsFields(t *testing.T) {
	seed := baseSeed(t)
	t.Logf("seed %d (replay: go test ./lease -run '^TestDecodeFlatAsFields$' -seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	space := func() string { return pick("", "", "", " ", "\n\t", "\r ", "\v") }
	value := func() string {
		return pick(`"ch_1"`, `"cs1"`, `"n1:7001"`, `""`, `"a\"b"`, `"\u00e9"`, `"é"`, `"\ud800"`, "\"\xff\"", `"tab	"`, `"x`,
			"1", "1000", "0", "-5", "007", "1.0", "1.5", "1e3", "999999999999999", "9007199254740993", "123456789012345678901",
			"null", "true", "[]", `{"a":1}`, "1x", "")
	}
	key := func() string {
		return pick(`"chunk_handle"`, `"server"`, `"lease_ms"`, `"token"`, `"chunk_handle"`, `"server"`, `"Chunk_handle"`,
			`"other"`, `"lease\u005fms"`, `chunk_handle`)
	}
	name := func() string {
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x5f)) // printable ASCII, '"' and '\\' among it
		}
		if rng.IntN(20) == 0 {
			b = append(b, byte(rng.IntN(256)))
		}
		return `"` + string(b) + `"`
	}
	number := func() string {
		return pick(strconv.FormatInt(rng.Int64N(1<<20), 10), strconv.FormatInt(rng.Int64N(1e15), 10), strconv.FormatInt(rng.Int64N(1<<62), 10),
			"0", "-7", "1.0", "12.5", "3e2", "0012")
	}
	flat := 0
	for range 20000 {
		var b strings.Builder
		b.WriteString(space() + "{")
		for k := range rng.IntN(5) {
			if k > 0 {
				b.WriteString(pick(",", ",", ",", ";", ""))
			}
			b.WriteString(space() + key() + space() + pick(":", ":", ":", "") + space() + value() + space())
		}
		b.WriteString(pick("}", "}", "}", "", "}}", "},") + space())
		body := []byte(b.String())
		if rng.IntN(2) == 0 { // a usual body: the request's fields in any order, any printable names
			fields := []string{`"chunk_handle":` + name(), `"server":` + name(), `"lease_ms":` + number(), `"token":` + number()}
			rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
			fields = fields[:1+rng.IntN(len(fields))]
			body = []byte(space() + "{" + space() + strings.Join(fields, space()+","+space()) + space() + "}" + space())
		}
		for _, typ := range []string{"lease_grant", "lease_renew", "lease_check", "lease_release"} {
			got, gerr := lease.DecodeRequest(typ, body)
			want, werr := lease.DecodeFields(typ, body)
			if got != want || (gerr == nil) != (werr == nil) || gerr != nil && *gerr != *werr {
				t.Fatalf("%s %q:\n got %+v, %v\nwant %+v, %v", typ, body, got, gerr, want, werr)
			}
			if lease.DecodesFlat(typ, body) {
				flat++
			}
		}
	}
	for _, usual := range []string{`{"chunk_handle":"ch_7","server":"cs2"}`, `{"chunk_handle":"ch_7","server":"cs2","lease_ms":1000}`} {
		if !lease.DecodesFlat("lease_renew", []byte(usual)) {
			t.Errorf("%s does not take the flat path", usual)
		}
	}
	if flat == 0 {
		t.Error("no random body took the flat path: the comparison compared nothing")
	}
}

// BenchmarkDecodeRequest decodes a renew's usual body on the flat path
// and, for comparison, through encoding/json.
func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"chunk_handle":"ch_000017","server":"cs-10.0.0.7:7001","lease_ms":10000}`)
	for _, path := range []struct {
		name   string
		decode func(string, []byte) (lease.Request, *lease.Error)
	}{{"flat", lease.DecodeRequest}, {"json", lease.DecodeFields}} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := path.decode("lease_renew", body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
