package netsim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
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

// BenchmarkDeliveryLateness measures how late Recv hands over node-to-node
// messages after their deadlines, on the real clock at 10 ms constant
// latency: n0 sends one message to each of `fanout` receivers at once (a
// prepare broadcast), so their deadlines coincide. "go-timer" is the wait
// with Go timers alone (the harness before the kernel timer, and off
// Linux); "precise" is what New chooses. Lateness percentiles are
// reported in µs; ns/op is the latency itself plus lateness.
//
//	go test ./maelstrom/netsim -run '^$' -bench DeliveryLateness -benchtime 300x
func BenchmarkDeliveryLateness(b *testing.B) {
	for _, precise := range []bool{false, true} {
		for _, fanout := range []int{1, 4} {
			name := fmt.Sprintf("go-timer/fanout=%d", fanout)
			if precise {
				name = fmt.Sprintf("precise/fanout=%d", fanout)
			}
			b.Run(name, func(b *testing.B) {
				if precise && !haveKernelTimer {
					b.Skip("no kernel timer on this platform")
				}
				benchLateness(b, fanout, precise)
			})
		}
	}
}

func benchLateness(b *testing.B, fanout int, precise bool) {
	const latency = 10 * time.Millisecond
	n, err := New(Latency{MeanMs: int(latency / time.Millisecond), Dist: Constant}, 1)
	if err != nil {
		b.Fatal(err)
	}
	n.precise.Store(precise)
	n.Register("n0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan time.Duration, fanout)
	var sentAt time.Time // written before the sends, read after the deliveries
	for r := 1; r <= fanout; r++ {
		name := "n" + strconv.Itoa(r)
		n.Register(name)
		go func() {
			for {
				if _, err := n.Recv(ctx, name); err != nil {
					return
				}
				got <- time.Since(sentAt) - latency
			}
		}()
	}
	body := body("prepare")
	var late []time.Duration
	for b.Loop() {
		sentAt = time.Now()
		for r := 1; r <= fanout; r++ {
			if _, err := n.Send("n0", "n"+strconv.Itoa(r), body); err != nil {
				b.Fatal(err)
			}
		}
		for range fanout {
			late = append(late, <-got)
		}
	}
	reportLateness(b, late)
}

// reportLateness reports the mean, p50, p99 and max of late in µs.
func reportLateness(b *testing.B, late []time.Duration) {
	slices.Sort(late)
	var sum time.Duration
	for _, l := range late {
		sum += l
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(sum/time.Duration(len(late))), "mean-µs")
	b.ReportMetric(us(late[len(late)/2]), "p50-µs")
	b.ReportMetric(us(late[len(late)*99/100]), "p99-µs")
	b.ReportMetric(us(late[len(late)-1]), "max-µs")
	b.ReportMetric(0, "ns/op") // the latency itself: not a figure of merit
}
