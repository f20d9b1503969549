package maelstrom

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// BenchmarkLoopEcho measures whole-node throughput: read, decode, dispatch
// to a handler that decodes a typed body, encode the reply, write it.
// Reported as msgs/s (one request in, one reply out per message).
func BenchmarkLoopEcho(b *testing.B) {
	var in bytes.Buffer
	in.WriteString(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1","n2","n3"],"msg_id":1}}` + "\n")
	for i := range b.N {
		fmt.Fprintf(&in, `{"id":%d,"src":"c1","dest":"n1","body":{"type":"lease_grant","chunk_handle":"ch_%03d","server":"cs1","msg_id":%d}}`+"\n", i, i%1000, i+2)
	}
	n := New(&in, io.Discard, io.Discard)
	n.Handle("lease_grant", func(req Message) error {
		var body struct {
			ChunkHandle string `json:"chunk_handle"`
			Server      string `json:"server"`
		}
		if err := req.DecodeBody(&body); err != nil {
			return err
		}
		return n.Reply(req, "lease_grant_ok", grantOK{body.ChunkHandle, body.Server, 60000})
	})
	b.ReportAllocs()
	b.ResetTimer()
	if err := n.Run(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if n.nextMsgID != int64(b.N)+1 {
		b.Fatalf("wrote %d lines, want %d", n.nextMsgID, b.N+1)
	}
}

func BenchmarkParseMessage(b *testing.B) {
	line := []byte(`{"id":26,"src":"c1","dest":"n1","body":{"type":"lease_grant","chunk_handle":"ch_001","server":"cs1","msg_id":2}}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseMessage(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeReply(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		inner, err := fieldsInner(grantOK{"ch_001", "cs1", 60000})
		if err != nil {
			b.Fatal(err)
		}
		buf = appendLine(buf[:0], "n1", "c1", "lease_grant_ok", 2, true, inner, 1)
	}
}
