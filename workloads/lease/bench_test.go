package lease

import (
	"testing"
	"time"

	"chunklease/workloads/workloadtest"
)

// BenchmarkLeaseSchedule is one simulated 30-second run at 100 ops/s
// against the in-test ideal service, then CheckLease: the workload's share
// of one schedule in the lease core's simulation.
func BenchmarkLeaseSchedule(b *testing.B) {
	opts := LeaseOptions{Servers: 3, Chunks: 4, LeaseMs: 1000, Rate: 100, Workers: 10}
	ops := 0
	for i := range b.N {
		h := runIdeal(b, opts, int64(i+1), 30*time.Second)
		if !CheckLease(h).Valid {
			b.Fatal("invalid")
		}
		ops += len(h)
	}
	b.ReportMetric(float64(ops)/float64(b.N), "history-ops/schedule")
}

// BenchmarkCheckLease checks a 30-second, 100 ops/s history.
func BenchmarkCheckLease(b *testing.B) {
	h := runIdeal(b, LeaseOptions{Servers: 3, Chunks: 4, LeaseMs: 1000, Rate: 100, Workers: 10}, 1, 30*time.Second)
	b.ResetTimer()
	for range b.N {
		CheckLease(h)
	}
	b.ReportMetric(float64(len(h)), "history-ops")
}

// BenchmarkLeaseNextComplete is the generator alone: Next, Request and
// Complete for one op, with an instant ok grant reply.
func BenchmarkLeaseNextComplete(b *testing.B) {
	svc := workloadtest.NewIdealLeases(1)
	w := NewLease(LeaseOptions{Servers: 3, Chunks: 4, LeaseMs: 1000, Rate: 1e6, Workers: 1}, 1)
	now := time.Duration(0)
	for range b.N {
		now = max(now, w.Wake())
		inv, ok := w.Next(now, 0)
		if !ok {
			b.Fatal("no op")
		}
		reply, _ := svc.Handle(now, 0, w.Request(inv))
		now += time.Microsecond
		w.Complete(now, 0, inv, reply)
	}
}
