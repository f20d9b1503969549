package netsim

import (
	"context"
	"testing"
)

// BenchmarkSendRecv measures one client-to-node message through the
// network (zero latency): validation, numbering, queueing and delivery.
func BenchmarkSendRecv(b *testing.B) {
	n, err := New(Latency{Dist: Constant}, 1)
	if err != nil {
		b.Fatal(err)
	}
	n.Register("n1")
	n.Register("c0")
	ctx := context.Background()
	body := body("echo")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.Send("c0", "n1", body); err != nil {
			b.Fatal(err)
		}
		if _, err := n.Recv(ctx, "n1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLine measures rendering a delivered message as a stdin line.
func BenchmarkLine(b *testing.B) {
	m := Message{ID: 123456, Src: "n1", Dest: "n2", Body: body("prepare")}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Line()
	}
}
