package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"chunklease/internal/fakelease"
)

// TestStatusMapping holds every answer of contract section 3 to its
// sentinel and to the definite/unknown split, through a real HTTP round
// trip: the refusals end the call at the first member; 503, 504 and other
// 5xx move on to the next member, so with one member they are what the
// call reports.
func TestStatusMapping(t *testing.T) {
	cases := []struct {
		name    string
		fault   fakelease.Fault
		kind    error
		unknown bool
		code    int
		text    string
	}{
		{"503 is unavailable", fakelease.Fault{Status: 503, RetryAfter: "0"}, ErrUnavailable, false, 11, "no majority"},
		{"504 is unknown", fakelease.Fault{Status: 504}, ErrUnknown, true, 0, "may have taken effect"},
		{"500 is unknown", fakelease.Fault{Status: 500}, ErrUnknown, true, 13, "injected"},
		{"502 is unknown", fakelease.Fault{Status: 502}, ErrUnknown, true, 13, "injected"},
		{"404 is not found", fakelease.Fault{Status: 404}, ErrNotFound, false, 13, "injected"},
		{"405 is not found", fakelease.Fault{Status: 405}, ErrNotFound, false, 13, "injected"},
		{"429 is unavailable", fakelease.Fault{Status: 429}, ErrUnavailable, false, 13, "injected"},
		{"302 is a protocol error", fakelease.Fault{Status: 302}, ErrProtocol, false, 13, "injected"},
		{"reset before performing is unknown", fakelease.Fault{Reset: true}, ErrUnknown, true, -1, ""},
		{"reset after performing is unknown", fakelease.Fault{Reset: true, Apply: true}, ErrUnknown, true, -1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, c := fakeClient(t, fakelease.Options{Nodes: 1}, Config{MaxAttempts: 1})
			f.Node(0).Inject(tc.fault)
			_, err := c.Grant(ctxFor(t, 5*time.Second), "ch_1", "cs1", 1000)
			e := asError(t, err)
			if !errors.Is(err, tc.kind) || IsUnknown(err) != tc.unknown || IsRefused(err) == tc.unknown {
				t.Fatalf("got %v (unknown %v), want %v (unknown %v)", err, IsUnknown(err), tc.kind, tc.unknown)
			}
			if e.Code != tc.code || !strings.Contains(e.Error(), tc.text) || e.Endpoint != f.Endpoints()[0] {
				t.Fatalf("got code %d, text %q, endpoint %q; want code %d, text with %q, endpoint %s", e.Code, e.Error(), e.Endpoint, tc.code, tc.text, f.Endpoints()[0])
			}
		})
	}
}

// TestModelRefusals reaches the refusals through the model itself: 400
// for a bad field, 409 for a renew of a chunk another server holds, 413
// for a body over 64 KiB, 401 without the token; the server's text comes
// through, and no refusal is retried at another member.
func TestModelRefusals(t *testing.T) {
	f, c := fakeClient(t, fakelease.Options{}, Config{})
	ctx := ctxFor(t, 5*time.Second)

	_, err := c.Grant(ctx, "ch_1", "cs1", 999999)
	expectRefusal(t, err, ErrBadRequest, 400, 12, "lease_ms 999999 is out of range")

	f.Steal("ch_2", "cs2", 5000)
	_, err = c.Renew(ctx, "ch_2", "cs1", 1000)
	expectRefusal(t, err, ErrHeld, 409, 22, `chunk "ch_2" is held by cs2`)

	_, err = c.Check(ctx, strings.Repeat("x", 70<<10))
	expectRefusal(t, err, ErrBadRequest, 413, 12, "over 64 KiB")

	err = c.Release(ctx, "ch_1", "cs1", 0)
	if err != nil {
		t.Fatalf("release with token 0 (the token is sent, so it is well-formed): %v", err)
	}
	if n := len(f.Calls()); n != 4 {
		t.Fatalf("%d requests reached the members, want 4 (a refusal is never retried): %+v", n, f.Calls())
	}

	ft, ct := fakeClient(t, fakelease.Options{Token: "s3cret"}, Config{})
	_, err = ct.Check(ctx, "ch_1")
	expectRefusal(t, err, ErrUnauthorized, 401, 12, "bearer token")
	ct2, err := New(Config{Endpoints: ft.Endpoints(), Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer ct2.Close()
	if _, err := ct2.Check(ctx, "ch_1"); err != nil {
		t.Fatalf("with the token: %v", err)
	}
}

func expectRefusal(t *testing.T, err error, kind error, status, code int, text string) {
	t.Helper()
	e := asError(t, err)
	if !errors.Is(err, kind) || !IsRefused(err) || e.Status != status || e.Code != code || !strings.Contains(e.Error(), text) {
		t.Fatalf("got %v (status %d, code %d), want %v, status %d, code %d, text with %q", err, e.Status, e.Code, kind, status, code, text)
	}
}

// TestGrantHeldIsAnAnswer: a grant of a chunk another server holds is an
// answer naming the holder, not an error.
func TestGrantHeldIsAnAnswer(t *testing.T) {
	f, c := fakeClient(t, fakelease.Options{}, Config{})
	tok := f.Steal("ch_1", "cs2", 5000)
	l, err := c.Grant(ctxFor(t, 5*time.Second), "ch_1", "cs1", 1000)
	if err != nil || l.Granted() || l.Primary != "cs2" || l.Token != tok || l.ExpiresInMs <= 0 || l.ExpiresInMs > 5000 {
		t.Fatalf("grant of a held chunk: %+v, %v; want primary cs2 token %d, not granted", l, err, tok)
	}
}

// TestErrorText: one line, the request, the member, the status, the code,
// the server's text and what to do.
func TestErrorText(t *testing.T) {
	e := &Error{Request: `lease_renew "ch_1" for "cs1"`, Endpoint: "http://127.0.0.1:1", Status: 504, Code: 0,
		Text: "no majority\nanswered", Attempts: 3, kind: ErrUnknown}
	want := `lease_renew "ch_1" for "cs1": outcome unknown at http://127.0.0.1:1 (504, code 0): no majority; answered [3 attempts]; it may have taken effect: check the lease, or renew or release it`
	if got := e.Error(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	cause := context.DeadlineExceeded
	e2 := &Error{Request: "x", Code: -1, kind: ErrUnavailable, cause: cause}
	if !errors.Is(e2, context.DeadlineExceeded) || !errors.Is(e2, ErrUnavailable) || errors.Is(e2, ErrUnknown) {
		t.Fatal("Unwrap must give the sentinel and the cause, and only them")
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{{"", 0}, {"0", 0}, {"1", time.Second}, {"7", 7 * time.Second}, {"-1", 0}, {"soon", 0},
		{time.Now().Add(-time.Hour).UTC().Format(time.RFC1123), 0}} {
		if got := parseRetryAfter(tc.in); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := parseRetryAfter(time.Now().Add(time.Hour).UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT")); got < 59*time.Minute || got > time.Hour {
		t.Errorf("an HTTP date an hour ahead gave %v", got)
	}
}
