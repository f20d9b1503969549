package client

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestMemberCallsAndRefusals: the membership calls send what the API
// takes (node, addr, force), read the configuration from the answer, and
// turn a 409 into ErrChangeRefused with the member's retry_in_ms, without
// failing over (the refusal is the cluster's, not the member's).
func TestMemberCallsAndRefusals(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.URL.Path+" "+string(b))
		switch r.URL.Path {
		case "/v1/member_list":
			io.WriteString(w, `{"type":"member_list_ok","epoch":1,"members":["n1","n2"],"next_change_in_ms":0}`)
		case "/v1/member_add":
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"type":"error","code":22,"text":"another change is waiting: ask again in 1500 ms","retry_in_ms":1500}`)
		case "/v1/member_remove":
			io.WriteString(w, `{"type":"member_remove_ok","epoch":2,"members":["n1"],"next_change_in_ms":1001}`)
		}
	}))
	defer srv.Close()
	c, err := New(Config{Endpoints: []string{srv.URL}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxFor(t, 5*time.Second)
	m, err := c.Members(ctx)
	if err != nil || m.Epoch != 1 || !m.Has("n2") || m.Endpoint != srv.URL {
		t.Fatalf("Members: %+v, %v", m, err)
	}
	_, err = c.AddMember(ctx, "n4", "127.0.0.1:7104", true)
	e := asError(t, err)
	if !errors.Is(err, ErrChangeRefused) || e.RetryInMs != 1500 || e.Status != 409 || e.Attempts != 1 {
		t.Fatalf("AddMember refused: %v (retry %d ms, status %d, %d attempts)", err, e.RetryInMs, e.Status, e.Attempts)
	}
	m, err = c.RemoveMember(ctx, "n2", false)
	if err != nil || m.Epoch != 2 || m.Has("n2") || m.NextChangeInMs != 1001 {
		t.Fatalf("RemoveMember: %+v, %v", m, err)
	}
	want := []string{"/v1/member_list {}", `/v1/member_add {"node":"n4","addr":"127.0.0.1:7104","force":true}`, `/v1/member_remove {"node":"n2"}`}
	for i, b := range want {
		if i >= len(bodies) || bodies[i] != b {
			t.Fatalf("requests %q, want %q", bodies, want)
		}
	}
}
