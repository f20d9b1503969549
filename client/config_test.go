package client

import (
	"crypto/tls"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTLSAndToken: an https member whose certificate the CA file
// vouches for, with a bearer token; without the CA the handshake fails
// before anything is sent (a definite failure).
func TestTLSAndToken(t *testing.T) {
	var gotAuth, gotBody string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotAuth, gotBody = r.Header.Get("Authorization"), string(b)
		io.WriteString(w, `{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs1","expires_in_ms":998,"token":42}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	bare := strings.TrimPrefix(srv.URL, "https://")
	c, err := New(Config{Endpoints: []string{bare}, CAFile: ca, Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Grant(ctxFor(t, 5*time.Second), "ch_1", "cs1", 1000)
	if err != nil || l.Token != 42 || l.ExpiresInMs != 998 || !l.Granted() {
		t.Fatalf("grant over TLS: %+v, %v", l, err)
	}
	if gotAuth != "Bearer s3cret" || gotBody != `{"chunk_handle":"ch_1","server":"cs1","lease_ms":1000}` {
		t.Fatalf("the member got Authorization %q and body %s", gotAuth, gotBody)
	}
	untrusting, err := New(Config{Endpoints: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer untrusting.Close()
	// Every attempt fails its handshake; the deadline is long enough for
	// all of them on a loaded machine, so that the error is the
	// certificate's, not the deadline's.
	_, err = untrusting.Grant(ctxFor(t, time.Minute), "ch_1", "cs1", 1000)
	if !errors.Is(err, ErrUnavailable) || !IsRefused(err) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v; want a definite failure naming the certificate", err)
	}
}

// TestConfigRefusals: each bad setting is refused with a text that says
// what to write instead.
func TestConfigRefusals(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no endpoints"},
		{Config{Endpoints: []string{"ftp://x:1"}}, "write it as http://HOST:PORT"},
		{Config{Endpoints: []string{"http://x:1/v1/lease_grant"}}, "write it as http://HOST:PORT"},
		{Config{Endpoints: []string{"http://x:1"}, CAFile: "/nonexistent/ca.crt"}, "CA file"},
		{Config{Endpoints: []string{"http://x:1"}, CAFile: notPEM}, "holds no PEM certificate"},
		{Config{Endpoints: []string{"http://x:1"}, CAFile: notPEM, TLS: &tls.Config{}}, "both a CA file and a TLS configuration"},
		{Config{Endpoints: []string{"http://x:1"}, Token: "two words"}, "spaces"},
	}
	for _, tc := range cases {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error with %q", tc.cfg, err, tc.want)
		}
	}
}

// TestRequestBodies: the bodies are contract section 1's messages without
// type and msg_id, lease_ms left out when 0, names escaped as JSON.
func TestRequestBodies(t *testing.T) {
	for _, tc := range []struct {
		r    request
		want string
	}{
		{request{op: opGrant, chunk: "ch_1", server: "cs1"}, `{"chunk_handle":"ch_1","server":"cs1"}`},
		{request{op: opRenew, chunk: "ch_1", server: "cs1", leaseMs: 300}, `{"chunk_handle":"ch_1","server":"cs1","lease_ms":300}`},
		{request{op: opCheck, chunk: `a"b`}, `{"chunk_handle":"a\"b"}`},
		{request{op: opRelease, chunk: "ch_1", server: "cs1", token: 0}, `{"chunk_handle":"ch_1","server":"cs1","token":0}`},
		{request{op: opMasterStatus}, `{}`},
	} {
		if got := string(tc.r.appendBody(nil)); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.r.op, got, tc.want)
		}
	}
}
