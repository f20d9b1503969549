package lease

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNameLimits: a chunk_handle or server at its limit is served, one
// byte over is refused with error 12 and a text that gives both numbers;
// the limit counts bytes, not characters.
func TestNameLimits(t *testing.T) {
	at, over := strings.Repeat("x", MaxServerBytes), strings.Repeat("x", MaxServerBytes+1)
	wide := strings.Repeat("é", MaxServerBytes/2) + "x" // MaxServerBytes/2+1 characters, MaxServerBytes+1 bytes
	chunkAt, chunkOver := strings.Repeat("c", MaxChunkHandleBytes), strings.Repeat("c", MaxChunkHandleBytes+1)
	cases := []struct {
		name     string
		req      Request
		wantText string // "" for success
	}{
		{"server at the limit", Request{Op: OpGrant, Chunk: "ch1", Server: at}, ""},
		{"server over", Request{Op: OpGrant, Chunk: "ch1", Server: over}, "server is 4097 bytes; the limit is 4096 bytes"},
		{"server over in bytes", Request{Op: OpRenew, Chunk: "ch1", Server: wide}, "server is 4097 bytes; the limit is 4096 bytes"},
		{"release with a long server", Request{Op: OpRelease, Chunk: "ch1", Server: over, Token: 1}, "server is 4097 bytes"},
		{"chunk at the limit", Request{Op: OpGrant, Chunk: chunkAt, Server: "cs1"}, ""},
		{"chunk over", Request{Op: OpGrant, Chunk: chunkOver, Server: "cs1"}, "chunk_handle is 4097 bytes; the limit is 4096 bytes"},
		{"check of a long chunk", Request{Op: OpCheck, Chunk: chunkOver}, "chunk_handle is 4097 bytes; the limit is 4096 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := NewNode(Config{ID: "n1", Acceptors: []string{"n1"}, Incarnation: 1, Nonce: 1, MaxLeaseMs: 1000,
				Rand: rand.New(rand.NewPCG(1, 1))}, 0)
			if err != nil {
				t.Fatal(err)
			}
			c.req.ID = 1
			out := n.Request(0, c.req)
			if len(out.Replies) != 1 {
				t.Fatalf("%d replies, want 1", len(out.Replies))
			}
			r := out.Replies[0]
			switch {
			case c.wantText == "" && r.Err != nil:
				t.Fatalf("refused: %v", r.Err.Text)
			case c.wantText != "" && (r.Err == nil || r.Err.Code != CodeMalformedRequest || !strings.Contains(r.Err.Text, c.wantText)):
				t.Fatalf("got %+v, want error 12 containing %q", r, c.wantText)
			case c.wantText != "" && n.chunks.len()+n.chunks.names.len() != 0:
				t.Fatalf("a refused request left %d chunks and %d names", n.chunks.len(), n.chunks.names.len())
			}
		})
	}
}

// TestPeerNameLimits: a peer message with a name over the limits is
// refused at decoding (no node sends one), and a node id over the server
// limit fails the configuration (a node is its master lease's server).
func TestPeerNameLimits(t *testing.T) {
	long := strings.Repeat("x", MaxServerBytes+1)
	bodies := map[string]string{
		"server":             `{"chunk_handle":"ch1","ballot":{"counter":1,"incarnation":1},"server":"` + long + `"}`,
		"chunk_handle":       `{"chunk_handle":"` + long + `","ballot":{"counter":1,"incarnation":1},"server":"cs1"}`,
		"the reported lease": `{"chunk_handle":"ch1","req_id":1,"nonce":1,"promised":{"counter":1},"lease":{"server":"` + long + `"}}`,
	}
	for what, body := range bodies {
		typ := "prepare"
		if what == "the reported lease" {
			typ = "read_ok"
		}
		if _, err := DecodeMsg(typ, "n2", "n1", []byte(body)); err == nil || !strings.Contains(err.Error(), "4096 bytes") {
			t.Errorf("%s over the limit: DecodeMsg gave %v, want a refusal naming the limit", what, err)
		}
	}
	okBody := `{"chunk_handle":"ch1","ballot":{"counter":1,"incarnation":1},"server":"` + long[1:] + `"}`
	if _, err := DecodeMsg("prepare", "n2", "n1", []byte(okBody)); err != nil {
		t.Errorf("a server at the limit was refused: %v", err)
	}
	_, err := NewNode(Config{ID: long, Acceptors: []string{long}, Incarnation: 1, Nonce: 1, MaxLeaseMs: 1000, Rand: rand.New(rand.NewPCG(1, 1))}, 0)
	if err == nil || !strings.Contains(err.Error(), "the limit is 4096 bytes") {
		t.Errorf("a node id of %d bytes: NewNode gave %v", len(long), err)
	}
}
