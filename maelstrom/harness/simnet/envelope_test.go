package simnet

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseEnvelopeRejects(t *testing.T) {
	cases := []struct{ name, line, want string }{
		{"blank", "", "blank line"},
		{"spaces", "  \t", "blank line"},
		{"not json", "DEBUG hello", "not well-formed JSON"},
		{"truncated", `{"src":"n1"`, "not well-formed JSON"},
		{"two objects", `{"src":"n1","dest":"c1","body":{}} {}`, "not well-formed JSON"},
		{"array", `[1,2]`, "JSON array, not an object"},
		{"string", `"hi"`, "JSON string, not an object"},
		{"null", `null`, "JSON null, not an object"},
		{"missing src", `{"dest":"c1","body":{}}`, `missing "src"`},
		{"missing dest", `{"src":"n1","body":{}}`, `missing "dest"`},
		{"missing body", `{"src":"n1","dest":"c1"}`, `missing "body"`},
		{"extra key", `{"src":"n1","dest":"c1","body":{},"trace":1}`, `extra top-level key "trace"`},
		{"src number", `{"src":1,"dest":"c1","body":{}}`, `"src" is a JSON number, not a string`},
		{"dest null", `{"src":"n1","dest":null,"body":{}}`, `"dest" is a JSON null, not a string`},
		{"body string", `{"src":"n1","dest":"c1","body":"x"}`, `"body" is a JSON string, not an object`},
		{"body array", `{"src":"n1","dest":"c1","body":[]}`, `"body" is a JSON array, not an object`},
		{"float id", `{"src":"n1","dest":"c1","body":{},"id":1.0}`, `"id" must be an integer, got 1.0`},
		{"string id", `{"src":"n1","dest":"c1","body":{},"id":"1"}`, `"id" must be an integer`},
		{"null id", `{"src":"n1","dest":"c1","body":{},"id":null}`, `"id" must be an integer`},
	}
	for _, c := range cases {
		_, err := parseEnvelope([]byte(c.line))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q gave error %v, want one containing %q", c.name, c.line, err, c.want)
		}
	}
}

func TestParseEnvelopeAccepts(t *testing.T) {
	cases := []struct{ line, src, dest, body string }{
		{`{"src":"n1","dest":"c1","body":{"type":"echo_ok", "echo": 1}}`, "n1", "c1", `{"type":"echo_ok","echo":1}`},
		{`{"body":{},"dest":"n2","src":"n1","id":7}`, "n1", "n2", `{}`},
		{`{"src":"n1","dest":"n2","body":null}`, "n1", "n2", `{}`},
		{"{\"src\":\"n1\",\"dest\":\"n2\",\"body\":{}}\r", "n1", "n2", `{}`},
	}
	for _, c := range cases {
		env, err := parseEnvelope([]byte(c.line))
		if err != nil {
			t.Errorf("%q rejected: %v", c.line, err)
			continue
		}
		if env.Src != c.src || env.Dest != c.dest || string(env.Body) != c.body {
			t.Errorf("%q parsed as %+v (body %s)", c.line, env, env.Body)
		}
	}
}

// TestCanonicalEnvelopeAgreesWithTheFullParse: the fast path takes the
// lines nodes print (so it is used), and on every line it takes it gives
// what the full parse gives; lines it leaves (spaces, escapes, non-ASCII
// names, an id, other key orders, broken JSON) go to the full parse. The
// lines are built from pieces that each change one thing; the seed is
// printed and taken back with -seed.
func TestCanonicalEnvelopeAgreesWithTheFullParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 0))
	names := []string{`n1`, `c12`, ``, `n 1`, `n\"1`, "n\u00e91", "n\xff", `n\u0031`, "n\t1"}
	bodies := []string{`{}`, `{"type":"lease_grant_ok","msg_id":3,"in_reply_to":2,"primary":null}`, `{"a":{"b":[1,2,{"c":"\u00e9\n"}]}}`,
		`{"type":"error","text":"no majority, try again"}`, `{ "type":"x" }`,
		`{"a":1}}`, `{"a":`, `{"a":1},"id":5`, `[]`, `null`, `{"a":"` + "\xff" + `"}`, "{\"a\":\n1}"}
	shapes := []string{`{"src":"%s","dest":"%s","body":%s}`, `{"src":"%s","dest":"%s","body":%s}` + "\r",
		`{"dest":"%[2]s","src":"%[1]s","body":%[3]s}`, `{"src":"%s","dest":"%s","body":%s,"id":1}`, ` {"src":"%s","dest":"%s","body":%s}`}
	canonical := 0
	pick := func(pieces []string, good, i int) string { // every other line from the good pieces only
		if i%2 == 0 {
			return pieces[rng.IntN(good)]
		}
		return pieces[rng.IntN(len(pieces))]
	}
	for i := range 5000 {
		line := []byte(fmt.Sprintf(pick(shapes, 1, i), pick(names, 3, i), pick(names, 3, i), pick(bodies, 3, i)))
		fast, ok := parseCanonical(line)
		if !ok {
			continue
		}
		canonical++
		full, err := parseFull(line)
		if err != nil || fast.Src != full.Src || fast.Dest != full.Dest || !bytes.Equal(fast.Body, full.Body) {
			t.Fatalf("%q: fast path %+v (body %s), full parse %+v (body %s) %v", line, fast, fast.Body, full, full.Body, err)
		}
	}
	if canonical < 2500 {
		t.Fatalf("the fast path took %d of 5000 lines: it must take the lines nodes print", canonical)
	}
	for _, line := range []string{`{"src":"n1","dest":"c1","body":{"type":"lease_grant_ok","in_reply_to":2,"chunk_handle":"ch_001","primary":"n2","expires_in_ms":60000,"msg_id":1}}`} {
		if _, ok := parseCanonical([]byte(line)); !ok {
			t.Errorf("the fast path left the node's own line %s", line)
		}
	}
}
