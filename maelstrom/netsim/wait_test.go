package netsim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestVirtualClockUsesGoTimersOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if n := newNet(t, Latency{MeanMs: 10, Dist: Constant}); n.precise.Load() {
			t.Fatal("inside a synctest bubble the network chose the kernel timer; virtual time would stand still")
		}
	})
}

func TestRealClockUsesTheKernelTimer(t *testing.T) {
	if n := newNet(t, Latency{MeanMs: 10, Dist: Constant}); n.precise.Load() != haveKernelTimer {
		t.Fatalf("precise = %v on the real clock, want %v (kernel timer available)", n.precise.Load(), haveKernelTimer)
	}
}

// On the real clock a message is never handed over before its deadline,
// whatever the kernel timer does: the lower bound is a guarantee, not a
// measurement (lateness is BenchmarkDeliveryLateness's business).
func TestRealClockDeliveryNeverEarly(t *testing.T) {
	const latency = 3 * time.Millisecond
	n := newNet(t, Latency{MeanMs: int(latency / time.Millisecond), Dist: Constant})
	for range 10 {
		sent := time.Now()
		mustSend(t, n, "n1", "n2", "x")
		if _, err := n.Recv(context.Background(), "n2"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(sent); waited < latency {
			t.Fatalf("delivered after %v, before the %v latency", waited, latency)
		}
	}
}
