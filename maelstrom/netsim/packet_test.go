package netsim

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// sendAll sends count messages src->dest at once, inside a bubble, then
// runs dest's delivery loop, and returns what dest got by the time
// everything settled.
func sendAll(t *testing.T, n *Net, src, dest string, count int) []delivery {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch := make(chan delivery, 2*count) // a duplicate arrives twice
	start := time.Now()
	for range count {
		mustSend(t, n, src, dest, "x")
	}
	// The receiver starts once everything is queued: its loop holds the
	// head while it waits for it (head-of-line blocking), so a message
	// queued later could not overtake that one.
	go func() {
		for {
			m, err := n.Recv(ctx, dest)
			if err != nil {
				return
			}
			ch <- delivery{m, time.Since(start)}
		}
	}()
	time.Sleep(time.Second) // virtual: every deadline passes
	synctest.Wait()
	var got []delivery
	for len(ch) > 0 {
		got = append(got, <-ch)
	}
	return got
}

// twoNets returns two networks with the same seed and nodes n1..n3, c0.
func twoNets(t *testing.T, lat Latency) (*Net, *Net) {
	seed := testSeed(t)
	var nets [2]*Net
	for i := range nets {
		nets[i], _ = New(lat, seed)
		for _, name := range []string{"n1", "n2", "n3", "c0"} {
			nets[i].Register(name)
		}
	}
	return nets[0], nets[1]
}

// TestPacketLossDropsItsShare: 30% loss on n1's link loses about that
// share of n1's messages, counted as drops; n2's messages and client
// traffic are untouched.
func TestPacketLossDropsItsShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 10, Dist: Constant})
		if err := n.StartPacket([]string{"n1"}, PacketFault{LossPct: 30}); err != nil {
			t.Fatal(err)
		}
		const count = 2000
		got := len(sendAll(t, n, "n1", "n2", count))
		if f := 1 - float64(got)/count; math.Abs(f-0.30) > 0.04 {
			t.Errorf("lost %.3f of n1's messages, want 0.30", f)
		}
		if s := n.Stats(); s.Servers.DropCount != int64(count-got) {
			t.Errorf("%d drops counted, %d messages lost", s.Servers.DropCount, count-got)
		}
		if back := len(sendAll(t, n, "n2", "n1", 200)); back != 200 {
			t.Errorf("n2 -> n1 delivered %d of 200: only n1's link has the fault", back)
		}
		if c := len(sendAll(t, n, "n1", "c0", 200)); c != 200 {
			t.Errorf("n1 -> c0 delivered %d of 200: client links never have faults", c)
		}
	})
}

// TestPacketDelayAndJitter: a plain delay adds exactly to the latency and
// keeps the order; jitter spreads the deliveries over the window and
// reorders them.
func TestPacketDelayAndJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{MeanMs: 10, Dist: Constant})
		_ = n.StartPacket([]string{"n1"}, PacketFault{DelayMs: 50})
		for i, d := range sendAll(t, n, "n1", "n2", 50) {
			if d.at != 60*time.Millisecond || d.msg.ID != int64(i) {
				t.Fatalf("delivery %d: id %d at %v, want id %d at 60ms", i, d.msg.ID, d.at, i)
			}
		}
		_ = n.StartPacket([]string{"n1"}, PacketFault{DelayMs: 50, JitterMs: 20})
		got := sendAll(t, n, "n1", "n2", 500)
		lo, hi, inOrder := time.Hour, time.Duration(0), true
		for i, d := range got {
			lo, hi = min(lo, d.at), max(hi, d.at)
			inOrder = inOrder && (i == 0 || d.msg.ID > got[i-1].msg.ID)
		}
		if len(got) != 500 || lo < 40*time.Millisecond || hi > 80*time.Millisecond || lo > 42*time.Millisecond || hi < 78*time.Millisecond || inOrder {
			t.Errorf("%d deliveries between %v and %v, in order %v; want 500 spread over [40ms, 80ms], reordered", len(got), lo, hi, inOrder)
		}
	})
}

// TestPacketDuplicateAndReorder: duplicated messages arrive twice with
// the same id; reordered ones skip the added delay.
func TestPacketDuplicateAndReorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNet(t, Latency{Dist: Constant})
		_ = n.StartPacket([]string{"n1"}, PacketFault{DuplicatePct: 50})
		const count = 2000
		got := sendAll(t, n, "n1", "n2", count)
		times := map[int64]int{}
		for _, d := range got {
			times[d.msg.ID]++
		}
		if f := float64(len(got)-count) / count; math.Abs(f-0.5) > 0.05 || len(times) != count || slices.Max(mapValues(times)) != 2 {
			t.Errorf("%d deliveries of %d messages (%.3f duplicated), want about half twice", len(got), len(times), f)
		}
		_ = n.StartPacket([]string{"n1"}, PacketFault{DelayMs: 100, ReorderPct: 30})
		early := 0
		for _, d := range sendAll(t, n, "n1", "n2", count) {
			if d.at == 0 {
				early++
			}
		}
		if f := float64(early) / count; math.Abs(f-0.3) > 0.04 {
			t.Errorf("%.3f of messages skipped the delay, want 0.30", f)
		}
	})
}

func mapValues(m map[int64]int) []int {
	var v []int
	for _, x := range m {
		v = append(v, x)
	}
	return v
}

// TestStopPacketAndUnchangedDraws: StopPacket names the faulty links and
// puts them back; the latency draws of a run are the same with and
// without packet faults, so a seed replays the same latencies.
func TestStopPacketAndUnchangedDraws(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		faulty, plain := twoNets(t, Latency{MeanMs: 20, Dist: Uniform})
		_ = faulty.StartPacket([]string{"n3", "n1"}, PacketFault{DelayMs: 30, JitterMs: 30, LossPct: 20, DuplicatePct: 20})
		sendAll(t, faulty, "n1", "n3", 100)
		sendAll(t, plain, "n1", "n3", 100)
		if nodes := faulty.StopPacket(); !slices.Equal(nodes, []string{"n1", "n3"}) {
			t.Errorf("StopPacket = %v, want [n1 n3]", nodes)
		}
		a, b := sendAll(t, faulty, "n2", "n1", 300), sendAll(t, plain, "n2", "n1", 300)
		for i := range a {
			if a[i].at != b[i].at {
				t.Fatalf("delivery %d at %v after packet faults, %v without", i, a[i].at, b[i].at)
			}
		}
		if len(a) != 300 {
			t.Errorf("%d of 300 delivered after StopPacket", len(a))
		}
	})
}

func TestPacketFaultErrors(t *testing.T) {
	n := newNet(t, Latency{Dist: Constant})
	for _, c := range []struct {
		nodes []string
		f     PacketFault
		want  string
	}{
		{[]string{"n1"}, PacketFault{DelayMs: -1}, "must be >= 0"},
		{[]string{"n1"}, PacketFault{LossPct: 101}, "not a percentage"},
		{[]string{"n9"}, PacketFault{LossPct: 1}, `node "n9"`},
	} {
		if err := n.StartPacket(c.nodes, c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("StartPacket(%v, %+v) = %v, want %q", c.nodes, c.f, err, c.want)
		}
	}
}
