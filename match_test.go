package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// match checks that got contains want: objects key by key (extra keys in
// got are allowed, the keys of want must appear in the same relative
// order), other values by equality; "*" matches anything; "$name" captures.
func (s *session) match(want, got json.RawMessage) error {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return fmt.Errorf("bad expectation: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.UseNumber()
	if err := dec.Decode(&g); err != nil {
		return fmt.Errorf("output is not JSON: %v", err)
	}
	if err := s.matchValue("", w, got); err != nil {
		return err
	}
	return keyOrder(want, got)
}

func (s *session) matchValue(path string, w any, got json.RawMessage) error {
	if str, ok := w.(string); ok && str == "*" {
		return nil
	}
	if str, ok := w.(string); ok && strings.HasPrefix(str, "$") {
		name := str[1:]
		if prev, seen := s.vars[name]; seen && !jsonEqual(prev, got) {
			return fmt.Errorf("%s is %s, but $%s was %s", path, got, name, prev)
		}
		s.vars[name] = append(json.RawMessage(nil), got...)
		return nil
	}
	if wo, ok := w.(map[string]any); ok {
		var gm map[string]json.RawMessage
		if err := json.Unmarshal(got, &gm); err != nil {
			return fmt.Errorf("%s: want an object, got %s", path, got)
		}
		for k, wv := range wo {
			gv, present := gm[k]
			if !present {
				return fmt.Errorf("%s.%s is missing", path, k)
			}
			if err := s.matchValue(path+"."+k, wv, gv); err != nil {
				return err
			}
		}
		return nil
	}
	wraw, _ := json.Marshal(w)
	if !jsonEqual(wraw, got) {
		return fmt.Errorf("%s is %s, want %s", path, got, wraw)
	}
	return nil
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// keyOrder checks that the keys of every object in want appear in got in
// the same relative order (the course grader's expected lines are in the
// task's key order).
func keyOrder(want, got json.RawMessage) error {
	wk, gk := keyPaths(want), keyPaths(got)
	pos := map[string]int{}
	for i, k := range gk {
		pos[k] = i
	}
	last := -1
	for _, k := range wk {
		p, ok := pos[k]
		if !ok {
			continue // absent keys were reported by matchValue
		}
		if p < last {
			return fmt.Errorf("key %s is out of the expected order", k)
		}
		last = p
	}
	return nil
}

// keyPaths lists an object's keys depth first, as dotted paths.
func keyPaths(raw json.RawMessage) []string {
	var out []string
	var walk func(prefix string, raw json.RawMessage)
	walk = func(prefix string, raw json.RawMessage) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		for dec.More() {
			tok, _ := dec.Token()
			key := prefix + "." + tok.(string)
			var v json.RawMessage
			dec.Decode(&v)
			out = append(out, key)
			walk(key, v)
		}
	}
	walk("", raw)
	return out
}

// TestMatchBites is the matcher's negative control: a wrong value, a
// missing key and a wrong key order must each be rejected.
func TestMatchBites(t *testing.T) {
	s := &session{vars: map[string]json.RawMessage{}}
	got := json.RawMessage(`{"src":"n1","dest":"c1","body":{"type":"x","in_reply_to":2,"msg_id":1}}`)
	for _, want := range []string{
		`{"src":"n2"}`,
		`{"body":{"code":11}}`,
		`{"body":{"msg_id":1,"type":"x"}}`,
		`{"dest":"c1","src":"n1"}`,
	} {
		if err := s.match(json.RawMessage(want), got); err == nil {
			t.Errorf("match(%s) accepted %s", want, got)
		}
	}
	if err := s.match(json.RawMessage(`{"src":"$who","body":{"type":"*","msg_id":1}}`), got); err != nil {
		t.Errorf("a correct expectation failed: %v", err)
	}
	if err := s.match(json.RawMessage(`{"src":"$who"}`), json.RawMessage(`{"src":"n9"}`)); err == nil {
		t.Error("a capture matched a different value the second time")
	}
}
