package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"chunklease/fence"
)

// putAll sends writes with these tokens in order and returns the statuses.
func putAll(t *testing.T, h http.Handler, tokens ...int64) []int {
	var out []int
	for _, tok := range tokens {
		req := httptest.NewRequest(http.MethodPut, "/chunks/ch_1", strings.NewReader("v"))
		fence.SetToken(req.Header, tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out = append(out, rec.Code)
	}
	return out
}

// TestFencedAndUnfenced: the chunk server refuses a token below the
// highest accepted and logs only what it applied; unfenced (the negative
// control) it takes the stale write.
func TestFencedAndUnfenced(t *testing.T) {
	for _, unfenced := range []bool{false, true} {
		var log bytes.Buffer
		s := &store{chunks: map[string][]byte{}, tokens: map[string]int64{}, log: json.NewEncoder(&log)}
		h := s.handler(unfenced)
		got := putAll(t, h, 5, 7, 6, 7)
		want := []int{204, 204, 409, 204}
		lines := 3
		if unfenced {
			want, lines = []int{204, 204, 204, 204}, 4
		}
		if !slices.Equal(got, want) || strings.Count(log.String(), "\n") != lines {
			t.Errorf("unfenced=%v: statuses %v, want %v; log %q", unfenced, got, want, log.String())
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/chunks/ch_1", nil))
		if rec.Code != 200 || rec.Header().Get(fence.Header) != "7" || rec.Body.String() != "v" {
			t.Errorf("unfenced=%v: GET %d %q token %q", unfenced, rec.Code, rec.Body.String(), rec.Header().Get(fence.Header))
		}
	}
}
