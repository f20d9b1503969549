package fakelease

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// post sends one request to n and returns the status, the decoded body
// and the Retry-After header.
func post(t *testing.T, n *Node, op, body string) (int, map[string]any, string) {
	t.Helper()
	resp, err := http.Post(n.URL+"/v1/"+op, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, resp.Header.Get("Retry-After")
}

// TestModel: the lease model's answers, which the client's tests take as
// their oracle.
func TestModel(t *testing.T) {
	c := Start(t, Options{})
	n := c.Node(0)
	steps := []struct {
		op, body string
		status   int
		want     map[string]any
	}{
		{"lease_grant", `{"chunk_handle":"a","server":"s1","lease_ms":5000}`, 200, map[string]any{"primary": "s1", "token": 1001.0, "expires_in_ms": 5000.0}},
		{"lease_grant", `{"chunk_handle":"a","server":"s2"}`, 409, map[string]any{"type": "lease_grant_ok", "primary": "s1", "token": 1001.0}},
		{"lease_renew", `{"chunk_handle":"a","server":"s2"}`, 409, map[string]any{"code": 22.0}},
		{"lease_renew", `{"chunk_handle":"a","server":"s1","lease_ms":300}`, 200, map[string]any{"token": 1002.0, "new_expires_in_ms": 300.0}},
		{"lease_renew", `{"chunk_handle":"a","server":"s1","lease_ms":300}`, 200, map[string]any{"token": 1003.0}},
		{"lease_release", `{"chunk_handle":"a","server":"s1","token":1002}`, 200, nil},
		{"lease_check", `{"chunk_handle":"a"}`, 200, map[string]any{"primary": "s1", "expired": false}},
		{"lease_release", `{"chunk_handle":"a","server":"s1","token":1003}`, 200, nil},
		{"lease_check", `{"chunk_handle":"a"}`, 200, map[string]any{"primary": "s1", "expired": true, "remaining_ms": 0.0}},
		{"lease_check", `{"chunk_handle":"b"}`, 200, map[string]any{"primary": nil, "expired": true}},
		{"lease_release", `{"chunk_handle":"a","server":"s1"}`, 400, map[string]any{"code": 12.0}},
		{"lease_grant", `{"chunk_handle":"","server":"s1"}`, 400, map[string]any{"code": 12.0}},
		{"lease_grant", `{"chunk_handle":"a","server":"s1","lease_ms":60001}`, 400, map[string]any{"code": 12.0}},
		{"lease_frob", `{}`, 404, map[string]any{"code": 10.0}},
	}
	for _, s := range steps {
		status, got, _ := post(t, n, s.op, s.body)
		if status != s.status {
			t.Fatalf("%s %s: status %d (%v), want %d", s.op, s.body, status, got, s.status)
		}
		for k, v := range s.want {
			if got[k] != v {
				t.Fatalf("%s %s: %s = %v, want %v (%v)", s.op, s.body, k, got[k], v, got)
			}
		}
	}
	if h := c.Holder("a"); h.Live || h.Token != 1003 {
		t.Fatalf("holder %+v; want the released 1003", h)
	}
}

// TestFaults: injected faults are used once each, in order, by matching
// requests (a status, a reset, an answer broken off); a killed member refuses connections until restarted.
func TestFaults(t *testing.T) {
	c := Start(t, Options{Nodes: 1})
	n := c.Node(0)
	n.Inject(Fault{Op: "lease_grant", Status: 503, RetryAfter: "2"}, Fault{Status: 504, Apply: true})
	if status, _, ra := post(t, n, "lease_check", `{"chunk_handle":"a"}`); status != 504 || c.Holder("a").Server != "" {
		t.Fatalf("check met %d (Retry-After %q); want the 504 (the first fault is for grants)", status, ra)
	}
	if status, _, ra := post(t, n, "lease_grant", `{"chunk_handle":"a","server":"s1"}`); status != 503 || ra != "2" || c.Holder("a").Live {
		t.Fatalf("grant met %d, Retry-After %q; want 503 with 2, nothing done", status, ra)
	}
	n.Inject(Fault{Reset: true, Apply: true})
	if status, _, _ := post(t, n, "lease_grant", `{"chunk_handle":"a","server":"s1"}`); status != 0 || !c.Holder("a").Live {
		t.Fatalf("reset after applying: status %d, holder %+v; want a cut connection and the grant done", status, c.Holder("a"))
	}
	n.Inject(Fault{Op: "lease_renew", BreakOff: true})
	resp, err := http.Post(n.URL+"/v1/lease_renew", "application/json", strings.NewReader(`{"chunk_handle":"a","server":"s1"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err == nil || len(body) == 0 || c.Holder("a").Token != 1002 {
		t.Fatalf("an answer broken off: %d, %q, %v, holder %+v; want 200, part of the body, an error, the renewal done",
			resp.StatusCode, body, err, c.Holder("a"))
	}
	n.Kill()
	if status, _, _ := post(t, n, "lease_check", `{"chunk_handle":"a"}`); status != 0 {
		t.Fatalf("a killed member answered %d", status)
	}
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := post(t, n, "lease_check", `{"chunk_handle":"a"}`); status != 200 {
		t.Fatalf("a restarted member answered %d", status)
	}
	calls := c.Calls()
	if len(calls) != 5 || calls[2].Status != 0 || !calls[2].Applied || !calls[3].Applied {
		t.Fatalf("log %+v; want 5 calls (the refused connection reached nobody), the third cut after applying, the fourth applied", calls)
	}
	for i, call := range calls {
		if cut := i == 2 || i == 3; call.Cut != cut {
			t.Fatalf("call %d %+v: Cut %v, want %v (only the reset and the answer broken off)", i, call, call.Cut, cut)
		}
	}
}

// TestClockRate: a cluster clock 2x fast ends a 1000 ms lease after 500
// ms of the caller's time and says so in its own milliseconds.
func TestClockRate(t *testing.T) {
	c := Start(t, Options{ClockRate: 2})
	before := time.Now()
	status, got, _ := post(t, c.Node(0), "lease_grant", `{"chunk_handle":"a","server":"s1","lease_ms":1000}`)
	h := c.Holder("a")
	if status != 200 || got["expires_in_ms"] != 1000.0 || h.End.Sub(before) < 500*time.Millisecond || h.End.Sub(before) > 600*time.Millisecond {
		t.Fatalf("grant %v, end %v after; want 1000 ms told, 500 ms real", got, h.End.Sub(before))
	}
}

// TestBatchRecord: a batch request is logged with its calls' chunks, in
// order, and one whose connection was cut as Cut.
func TestBatchRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Start(t, Options{Network: Pipe, Nodes: 1, Batch: true})
		n := c.Node(0)
		n.Inject(Fault{Op: "batch", Reset: true, Apply: true})
		client := &http.Client{Transport: &http.Transport{DialContext: c.DialContext()}}
		defer client.CloseIdleConnections()
		post := func() (*http.Response, error) {
			return client.Post(n.URL+"/v1/batch", "application/json", strings.NewReader(
				`[{"op":"lease_grant","body":{"chunk_handle":"a","server":"s1"}},{"op":"lease_check","body":{"chunk_handle":"b"}}]`))
		}
		if resp, err := post(); err == nil {
			resp.Body.Close()
			t.Fatalf("a batch meeting a reset was answered %d", resp.StatusCode)
		}
		if resp, err := post(); err != nil || resp.StatusCode != 200 {
			t.Fatalf("the second batch: %v %v, want 200", resp, err)
		} else {
			resp.Body.Close()
		}
		batches := c.CallsOf("batch")
		if len(batches) != 2 || !batches[0].Cut || batches[1].Cut {
			t.Fatalf("batches %+v; want the first cut, the second not", batches)
		}
		for _, b := range batches {
			if b.Calls != 2 || strings.Join(b.Chunks, ",") != "a,b" {
				t.Fatalf("batch %+v; want the calls of a and b, in order", b)
			}
		}
		if !c.Holder("a").Live {
			t.Fatalf("the batch's grant of a was not performed before the cut")
		}
	})
}
