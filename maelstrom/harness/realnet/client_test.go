package realnet

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/maelstrom/harness"
	"chunklease/workloads"
)

func TestSplitRequest(t *testing.T) {
	typ, body, err := SplitRequest(json.RawMessage(`{"type":"lease_grant","msg_id":7,"chunk_handle":"ch_1","server":"cs1","lease_ms":500}`))
	if err != nil || typ != "lease_grant" || string(body) != `{"chunk_handle":"ch_1","lease_ms":500,"server":"cs1"}` {
		t.Errorf("SplitRequest = %q, %s, %v", typ, body, err)
	}
	if typ, body, err := SplitRequest(json.RawMessage(`{"type":"master_status"}`)); err != nil || typ != "master_status" || string(body) != `{}` {
		t.Errorf("a request without fields: %q, %s, %v", typ, body, err)
	}
	for _, bad := range []string{`[]`, `{"chunk_handle":"x"}`, `{"type":""}`, `{"type":3}`} {
		if _, _, err := SplitRequest(json.RawMessage(bad)); err == nil {
			t.Errorf("SplitRequest(%s) accepted", bad)
		}
	}
}

// TestReplyMapsStatusesAsTheContract: each status of the service's table
// comes back as a body the workloads classify as the contract says: 200
// ok, a grant's 409 with its lease_grant_ok body (another primary) ok,
// 503 (code 11) fail, 409 (code 22) fail, 504 a timeout (info, or
// fail for an idempotent read), and a body that is no reply fails the
// run.
func TestReplyMapsStatusesAsTheContract(t *testing.T) {
	okBody := `{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs1","expires_in_ms":498,"token":12}`
	heldBody := `{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs2","expires_in_ms":300,"token":11}`
	cases := []struct {
		status     int
		body       string
		idempotent bool
		want       string // history type, or "timeout", or "run fails"
	}{
		{200, okBody, false, "ok"},
		{409, heldBody, false, "ok"}, // a grant that names another primary: an answer
		{503, `{"type":"error","code":11,"text":"no majority"}`, false, history.Fail},
		{409, `{"type":"error","code":22,"text":"held by cs2"}`, false, history.Fail},
		{400, `{"type":"error","code":12,"text":"lease_ms 0"}`, false, history.Fail},
		{500, `{"type":"error","code":1001,"text":"boom"}`, false, history.Info},
		{504, `{"type":"error","code":0,"text":"quorum timed out"}`, false, "timeout"},
		{504, `gateway`, true, "timeout"},
		{200, `{"type":"error","code":11,"text":"x"}`, false, "run fails"},
		{503, okBody, false, "run fails"},
		{200, `not json`, false, "run fails"},
		{200, `{"primary":"cs1"}`, false, "run fails"},
	}
	for _, c := range cases {
		reply, err := Reply("n1", "lease_grant", c.status, []byte(c.body))
		got := "ok"
		switch {
		case errors.Is(err, harness.ErrTimeout):
			got = "timeout"
		case err != nil:
			got = "run fails"
			if !strings.Contains(err.Error(), "node n1") || !strings.Contains(err.Error(), "lease_grant") {
				t.Errorf("HTTP %d %s: the error does not name the node and endpoint: %v", c.status, c.body, err)
			}
		case string(reply) != c.body:
			t.Errorf("HTTP %d: reply %s, want the body as it is", c.status, reply)
		case c.status != 200 && c.body != heldBody:
			got, _ = workloads.ClassifyError(reply, c.idempotent)
		}
		if got != c.want {
			t.Errorf("HTTP %d %s: %s, want %s", c.status, c.body, got, c.want)
		}
	}
}

// TestUnansweredRequests: real transport errors on loopback. A refused
// connection is a definite code-11 error (nothing was sent); a request
// whose connection breaks before an answer, or that gets none in time,
// is a timeout (it may have happened).
func TestUnansweredRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = http.Post("http://"+closed+"/v1/lease_check", "application/json", strings.NewReader(`{}`))
	reply, err := Unanswered("n1", err)
	if typ, text := workloads.ClassifyError(reply, false); err != nil || typ != history.Fail || !strings.Contains(text, "refused") {
		t.Errorf("refused connection: %s %v, classified %s %q; want a definite fail", reply, err, typ, text)
	}

	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close() // the request arrived; the connection breaks without an answer
	}))
	defer broken.Close()
	_, err = http.Post(broken.URL+"/v1/lease_grant", "application/json", strings.NewReader(`{}`))
	if _, err := Unanswered("n1", err); !errors.Is(err, harness.ErrTimeout) {
		t.Errorf("broken connection: %v, want a timeout", err)
	}

	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer silent.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, silent.URL+"/v1/lease_grant", strings.NewReader(`{}`))
	_, err = http.DefaultClient.Do(req)
	if _, err := Unanswered("n1", err); !errors.Is(err, harness.ErrTimeout) {
		t.Errorf("no answer in time: %v, want a timeout", err)
	}
}

// TestRepliesAnswerTheirRequest: every reply body gets in_reply_to, the
// client's request number from 1, as a Maelstrom reply carries it.
func TestRepliesAnswerTheirRequest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"master_start_ok"}`, `{"in_reply_to":3,"type":"master_start_ok"}`},
		{`{}`, `{"in_reply_to":3}`},
		{`{"type":"error","code":11,"text":"x","in_reply_to":9}`, `{"code":11,"in_reply_to":3,"text":"x","type":"error"}`},
	} {
		if got, err := withInReplyTo(json.RawMessage(c.in), 3); err != nil || string(got) != c.want {
			t.Errorf("withInReplyTo(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := withInReplyTo(json.RawMessage(`[1]`), 3); err == nil {
		t.Error("a reply that is no object was accepted")
	}
}
