package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chunklease/internal/certs"
	"chunklease/internal/clock"
)

// inProcessMember is member n1 of a three-member cluster, built in this
// process: its core's loop runs, its client API is served on a loopback
// test server, and its peers are never dialled (n2 and n3 never run, so
// every grant waits for a majority until its quorum timeout).
type inProcessMember struct {
	n      *serveNode
	srv    *httptest.Server
	logs   bytes.Buffer
	closed bool // the loop was stopped
}

func startInProcessMember(t *testing.T, extra ...string) *inProcessMember {
	t.Helper()
	dir := t.TempDir()
	if _, err := certs.Write(certs.Plan{Dir: dir, Members: []string{"n1", "n2", "n3"}, Validity: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	crt, key := certs.MemberFiles("n1")
	args := append([]string{"-id", "n1", "-cluster", "n1=127.0.0.1:1,n2=127.0.0.1:2,n3=127.0.0.1:3", "-client-addr", "127.0.0.1:0",
		"-tls-ca", filepath.Join(dir, certs.CAFile), "-tls-cert", filepath.Join(dir, crt), "-tls-key", filepath.Join(dir, key),
		"-boot-wait-ms", "0"}, extra...)
	cfg, err := parseServeConfig(args, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	m := &inProcessMember{}
	if m.n, err = newServeNode(cfg, clock.Real(), log.New(&m.logs, "n1 ", 0)); err != nil {
		t.Fatal(err)
	}
	m.n.start()
	m.srv = httptest.NewServer(m.n)
	t.Cleanup(func() {
		m.srv.Close()
		m.stopLoop()
	})
	return m
}

// stopLoop stops the core's loop, as the node does when it stops.
func (m *inProcessMember) stopLoop() {
	if !m.closed {
		m.closed = true
		close(m.n.stopLoop)
	}
	<-m.n.loopDone
}

// post sends body to path, with a body of unknown length (sent chunked)
// when chunked; it returns the status and the decoded error body.
func (m *inProcessMember) post(t *testing.T, path string, body []byte, chunked bool) (int, map[string]any) {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // no length known up front
	}
	resp, err := http.Post(m.srv.URL+path, "application/json", r)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var reply map[string]any
	json.Unmarshal(raw, &reply)
	return resp.StatusCode, reply
}

// waitPending waits until the core holds want requests unanswered.
func (m *inProcessMember) waitPending(t *testing.T, want int) {
	t.Helper()
	line := fmt.Sprintf("chunklease_core_pending_requests %d\n", want)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, err := http.Get(m.srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), line) {
			return
		}
	}
	t.Fatalf("the core never held %d requests", want)
}

// TestServeStoppingMidRequestIsUnknown: a request the core took and had
// not answered when the node stopped may have sent proposes: it is
// answered 504 with code 0 (it may have taken effect), never 503 or 11,
// alone and in a batch.
func TestServeStoppingMidRequestIsUnknown(t *testing.T) {
	t.Parallel()
	m := startInProcessMember(t, "-max-lease-ms", "10000", "-quorum-timeout-ms", "2000")
	type answer struct {
		status int
		reply  map[string]any
	}
	single, batch := make(chan answer, 1), make(chan answer, 1)
	go func() {
		s, r := m.post(t, "/v1/lease_grant", []byte(`{"chunk_handle":"c1","server":"cs1"}`), false)
		single <- answer{s, r}
	}()
	go func() {
		s, r := m.post(t, batchPath, []byte(`[{"op":"lease_grant","body":{"chunk_handle":"c2","server":"cs1"}}]`), false)
		batch <- answer{s, r}
	}()
	m.waitPending(t, 2)
	m.stopLoop()
	a := <-single
	if a.status != http.StatusGatewayTimeout || a.reply["code"] != float64(0) || !strings.Contains(fmt.Sprint(a.reply["text"]), "may have taken effect") {
		t.Errorf("a grant in the core when the node stopped: %d %v; want 504, code 0, may have taken effect", a.status, a.reply)
	}
	a = <-batch
	results, _ := a.reply["results"].([]any)
	if a.status != http.StatusOK || len(results) != 1 {
		t.Fatalf("a batch in the core when the node stopped: %d %v; want 200 with one result", a.status, a.reply)
	}
	res, _ := results[0].(map[string]any)
	body, _ := res["body"].(map[string]any)
	if res["status"] != float64(http.StatusGatewayTimeout) || body["code"] != float64(0) {
		t.Errorf("a batched grant in the core when the node stopped: %v; want 504, code 0", res)
	}
}

// TestServeBodyLimitWithoutContentLength: a body sent chunked (no
// Content-Length) is held to the same 64 KiB as one that declares its
// length: one byte over is refused with 413, exactly 64 KiB is read.
func TestServeBodyLimitWithoutContentLength(t *testing.T) {
	t.Parallel()
	m := startInProcessMember(t)
	body := func(size int) []byte {
		b := []byte(`{"chunk_handle":"`)
		tail := `","server":"cs1"}`
		return append(append(b, bytes.Repeat([]byte("x"), size-len(b)-len(tail))...), tail...)
	}
	for _, path := range []string{"/v1/lease_grant", batchPath} {
		status, reply := m.post(t, path, body(maxBodyBytes+1), true)
		if status != http.StatusRequestEntityTooLarge || reply["code"] != float64(12) {
			t.Errorf("%s, %d bytes chunked: %d %v; want 413 code 12", path, maxBodyBytes+1, status, reply)
		}
		if status, reply := m.post(t, path, body(maxBodyBytes), true); status == http.StatusRequestEntityTooLarge {
			t.Errorf("%s, %d bytes chunked: %d %v; want it read (then refused for what it says)", path, maxBodyBytes, status, reply)
		}
	}
}
