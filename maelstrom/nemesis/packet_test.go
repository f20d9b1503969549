package nemesis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestPacketSchedule: the packet package is its own stagger: start-packet
// and stop-packet alternate from t=0, each start carries a node
// specification (uniform) and settings in DrawPacket's ranges, every stop
// acts on all nodes, and the partition schedule is the same with or
// without it.
func TestPacketSchedule(t *testing.T) {
	seed := testSeed(t)
	const n = 6000
	s, err := NewSchedule(Faults{Partition: true, Packet: true}, time.Second,
		Streams{Partition: rand.New(rand.NewPCG(seed, 1)), Packet: rand.New(rand.NewPCG(seed, 2))})
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := NewSchedule(Faults{Partition: true}, time.Second, Streams{Partition: rand.New(rand.NewPCG(seed, 1))})
	specs := map[NodeSpec]int{}
	var last string
	starts := 0
	for i := range n {
		op := s.Pop()
		if i == 1 && (op.F != StartPacket || op.At != 0) {
			t.Fatalf("second op %+v, want start-packet at 0 (after the first partition)", op)
		}
		switch op.F {
		case StartPartition, StopPartition:
			if want := alone.Pop(); op.F != want.F || op.At != want.At || op.Target != want.Target {
				t.Fatalf("partition op %+v with packets, %+v without", op, want)
			}
			continue
		case StartPacket:
			checkPacketSettings(t, op.Settings.(PacketSettings))
			specs[op.Nodes]++
			starts++
		case StopPacket:
			if op.Nodes != SpecAll || op.Settings != nil {
				t.Fatalf("stop-packet %+v, want all nodes and no settings", op)
			}
		default:
			t.Fatalf("unexpected op %+v", op)
		}
		if op.F == last {
			t.Fatalf("%s twice in a row: start-packet and stop-packet alternate", op.F)
		}
		last = op.F
	}
	for _, spec := range NodeSpecs {
		if f := float64(specs[spec]) / float64(starts); math.Abs(f-1.0/6) > 0.04 {
			t.Errorf("spec %q chosen %.3f of the time, want 1/6", spec, f)
		}
	}
}

// checkPacketSettings holds drawn settings to DrawPacket's ranges.
func checkPacketSettings(t *testing.T, s PacketSettings) {
	t.Helper()
	ok := s.Nodes == nil && s.DelayMs%10 == 0 && s.DelayMs <= 100 && s.JitterMs >= 0 && s.JitterMs <= s.DelayMs/2 &&
		(s.LossPct == 0 || (s.LossPct >= 5 && s.LossPct <= 30)) &&
		(s.DuplicatePct == 0 || (s.DuplicatePct >= 5 && s.DuplicatePct <= 25)) &&
		(s.ReorderPct == 0 || (s.ReorderPct >= 10 && s.ReorderPct <= 30 && s.DelayMs > 0)) &&
		(s.DelayMs > 0 || s.LossPct > 0 || s.DuplicatePct > 0)
	if !ok {
		t.Fatalf("settings %+v outside DrawPacket's ranges", s)
	}
}

// TestDrawPacketBehaviours: each behaviour is in about half the draws
// (delay more often: reordering brings one), and every draw has one.
func TestDrawPacketBehaviours(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 7))
	const n = 20000
	var delay, loss, dup, reorder int
	for range n {
		s := DrawPacket(rng)
		checkPacketSettings(t, s)
		if s.DelayMs > 0 {
			delay++
		}
		if s.LossPct > 0 {
			loss++
		}
		if s.DuplicatePct > 0 {
			dup++
		}
		if s.ReorderPct > 0 {
			reorder++
		}
	}
	// Of the 15 non-empty subsets, 8 hold a given behaviour; 12 hold
	// delay or reorder.
	for name, c := range map[string]struct {
		got  int
		want float64
	}{"loss": {loss, 8.0 / 15}, "duplicate": {dup, 8.0 / 15}, "reorder": {reorder, 8.0 / 15}, "delay": {delay, 12.0 / 15}} {
		if f := float64(c.got) / n; math.Abs(f-c.want) > 0.02 {
			t.Errorf("%s in %.3f of the draws, want %.3f", name, f, c.want)
		}
	}
}

func TestPacketFaultName(t *testing.T) {
	f, err := ParseFaults("packet, partition")
	if err != nil || f != (Faults{Partition: true, Packet: true}) || f.String() != "partition,packet" || !f.Any() || f.Process() {
		t.Errorf("ParseFaults = %+v, %v; String %q", f, err, f.String())
	}
	if _, err := ParseFaults("packets"); err == nil || !strings.Contains(err.Error(), "partition, kill, pause, clock, packet") {
		t.Errorf("unknown fault error %v, want the list of faults", err)
	}
	var fs []string
	for _, op := range FinalOps(Faults{Partition: true, Kill: true, Pause: true, Packet: true}) {
		fs = append(fs, op.F)
	}
	if strings.Join(fs, ",") != "stop-partition,stop-packet,resume,start" {
		t.Errorf("final ops %v, want stop-partition, stop-packet, resume, start", fs)
	}
}
