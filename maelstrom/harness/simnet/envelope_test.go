package simnet

import (
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
