package histtest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fatalTB is a testing.TB whose Fatalf records its text and ends the
// goroutine, so a test can watch Judge refuse a history.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit() // as testing's Fatalf ends its goroutine (judge runs Judge on one of its own)
}

// judge runs Judge on the grants (chunk, token) of server cs1, one after
// another, and returns the text Judge failed with ("" when it passed).
func judge(t *testing.T, grants [][2]any) string {
	tb := &fatalTB{TB: t}
	r := New(t)
	r.t = tb
	for i, g := range grants {
		v := map[string]any{"chunk": g[0], "server": "cs1", "lease_ms": 1000}
		r.Invoke(i, "n1", "grant", v)
		r.Complete(i, "n1", "grant", v, map[string]any{"type": "lease_grant_ok", "primary": "cs1", "expires_in_ms": 1000, "token": g[1]})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Judge()
	}()
	<-done
	return tb.fatal
}

// TestJudgeTokensPerChunk: two chunks may share a token (two cores of a
// member order their chunks' tokens apart); one chunk may not, and a
// grant without a token is refused.
func TestJudgeTokensPerChunk(t *testing.T) {
	if got := judge(t, [][2]any{{"c1", 5}, {"c2", 5}, {"c1", 7}}); got != "" {
		t.Fatalf("equal tokens on two chunks refused: %s", got)
	}
	if got := judge(t, [][2]any{{"c1", 5}, {"c2", 6}, {"c1", 5}}); !strings.Contains(got, "token") {
		t.Fatalf("a token repeated on its chunk passed (negative control): %q", got)
	}
}
