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

// BenchmarkParseMessage decodes a client request and a peer reply, with
// the fast path (parseMessage) and with encoding/json alone (std).
func BenchmarkParseMessage(b *testing.B) {
	lines := map[string][]byte{
		"request": []byte(`{"id":26,"src":"c1","dest":"n1","body":{"type":"lease_grant","chunk_handle":"ch_001","server":"cs1","msg_id":2}}` + "\n"),
		"peer":    []byte(`{"id":27,"src":"n2","dest":"n1","body":{"type":"prepare_ok","in_reply_to":7,"chunk_handle":"ch_8","ballot":{"counter":229815450777729,"incarnation":1795433209043835},"ok":true,"promised":{"counter":0,"incarnation":0},"msg_id":3}}` + "\n"),
	}
	for _, kind := range []string{"request", "peer"} {
		for _, p := range []struct {
			name  string
			parse func([]byte) (Message, error)
		}{{"fast", parseMessage}, {"std", parseMessageStd}} {
			b.Run(kind+"/"+p.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.parse(lines[kind]); err != nil {
						b.Fatal(err)
					}
				}
			})
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
