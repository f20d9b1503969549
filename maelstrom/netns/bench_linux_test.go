package netns

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// The figures: go test -run '^$' -bench . -benchtime 20x ./maelstrom/netns/
// (as root; say the machine's load with them).

// BenchmarkCreateClose: the time to build a lab (namespaces, links in
// service, tables, the kernel probe) and to remove it.
func BenchmarkCreateClose(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	for _, nodes := range []int{3, 5} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			var ids []string
			for i := 1; i <= nodes; i++ {
				ids = append(ids, fmt.Sprintf("n%d", i))
			}
			var create, close time.Duration
			for b.Loop() {
				t0 := time.Now()
				lab, err := Create(context.Background(), Config{Nodes: ids, Logf: b.Logf})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := lab.Close(); err != nil {
					b.Fatal(err)
				}
				create, close = create+t1.Sub(t0), close+time.Since(t1)
			}
			b.ReportMetric(float64(create.Microseconds())/float64(b.N)/1e3, "create-ms")
			b.ReportMetric(float64(close.Microseconds())/float64(b.N)/1e3, "close-ms")
		})
	}
}

// BenchmarkDelayPath2000pps: each iteration sends a 2 s stream of 2000
// datagrams/s from n1 to n2, first with no fault, then under a 10 ms
// delay. It reports what the userspace delay path adds beyond the 10 ms
// (p50 and p99 of the one-way delay minus 10 ms minus the no-fault p50,
// averaged over iterations; the worst max) and the CPU it costs this
// process in % of one core (the stream's own sending and receiving
// subtracted: CPU time with the delay minus CPU time without).
func BenchmarkDelayPath2000pps(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	lab, err := Create(context.Background(), Config{Nodes: []string{"n1", "n2"}, Logf: b.Logf})
	if err != nil {
		b.Fatal(err)
	}
	defer lab.Close()
	l := &link{lab: lab, from: udpSocket(b, lab.Node("n1"), 9500), to: udpSocket(b, lab.Node("n2"), 9500)}
	var p50, p99, worst, cpu, streamCPU float64
	for b.Loop() {
		base, baseCPU := l.stream(b, 2000, 2*time.Second)
		if err := lab.StartPacket([]string{"n1"}, PacketFault{DelayMs: 10}); err != nil {
			b.Fatal(err)
		}
		delayed, delayedCPU := l.stream(b, 2000, 2*time.Second)
		if err := lab.StopPacket(); err != nil {
			b.Fatal(err)
		}
		b0 := quantile(base, 0.5)
		p50 += quantile(delayed, 0.5) - 10 - b0
		p99 += quantile(delayed, 0.99) - 10 - b0
		worst = max(worst, quantile(delayed, 1)-10-b0)
		cpu += 100 * (delayedCPU - baseCPU).Seconds() / 2
		streamCPU += 100 * baseCPU.Seconds() / 2
		b.Logf("no fault: p50 %.3f p99 %.3f max %.3f ms, %d/%d arrived; delay 10ms: p50 %.3f p99 %.3f max %.3f ms, %d arrived; path %+v",
			b0, quantile(base, 0.99), quantile(base, 1), len(base), 4000, quantile(delayed, 0.5), quantile(delayed, 0.99), quantile(delayed, 1), len(delayed), lab.PacketStats()["n1"])
	}
	n := float64(b.N)
	b.ReportMetric(p50/n, "added-p50-ms")
	b.ReportMetric(p99/n, "added-p99-ms")
	b.ReportMetric(worst, "added-max-ms")
	b.ReportMetric(cpu/n, "added-cpu-%")
	b.ReportMetric(streamCPU/n, "stream-cpu-%")
}

// stream sends rate datagrams a second for d, paced by a ticker, while a
// goroutine receives; it returns the sorted one-way delays and the CPU
// time this process used meanwhile.
func (l *link) stream(b *testing.B, rate int, d time.Duration) ([]float64, time.Duration) {
	n := rate * int(d/time.Second)
	got := make(chan []received, 1)
	go func() {
		got <- recvUntil(b, l.to, time.Second, d+2*time.Second, haveAll(n))
	}()
	cpu0 := cpuTime()
	tick := time.NewTicker(time.Second / time.Duration(rate/10)) // 10 datagrams a tick
	defer tick.Stop()
	start := time.Now()
	for sent := 0; sent < n; {
		<-tick.C
		due := min(n, int(time.Since(start)*time.Duration(rate)/time.Second))
		sendSeq(b, l.from, l.to, l.seq+1, due-sent)
		l.seq += due - sent
		sent = due
	}
	r := <-got
	return delaysMs(r), cpuTime() - cpu0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
