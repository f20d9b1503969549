package nemesis

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	cases := []struct {
		in   string
		want Faults
		err  string
	}{
		{"", Faults{}, ""},
		{"partition", Faults{Partition: true}, ""},
		{"partition,partition", Faults{Partition: true}, ""}, // a set, as in Maelstrom
		{"kill, pause", Faults{Kill: true, Pause: true}, ""},
		{"pause,kill,partition", Faults{Partition: true, Kill: true, Pause: true}, ""},
		{"partition,clock", Faults{Partition: true, Clock: true}, ""},
		{"clock,kill,pause,partition", Faults{Partition: true, Kill: true, Pause: true, Clock: true}, ""},
		{"partition,packet", Faults{Partition: true, Packet: true}, ""},
		{"partition,netem", Faults{}, `unknown fault "netem"`},
		{"partition,", Faults{}, `unknown fault ""`},
	}
	for _, c := range cases {
		got, err := ParseFaults(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseFaults(%q) = %v, %v; want error %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseFaults(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	if s := (Faults{Pause: true, Partition: true}).String(); s != "partition,pause" {
		t.Errorf("String = %q", s)
	}
}

// TestPickNodesSizes: each specification picks Jepsen's number of
// distinct nodes, in the nodes' order.
func TestPickNodesSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	want := map[NodeSpec][8]int{ // index n: nodes picked of n
		SpecOne:           {0, 1, 1, 1, 1, 1, 1, 1},
		SpecMinorityThird: {0, 0, 0, 0, 1, 1, 1, 2},
		SpecMinority:      {0, 0, 1, 1, 2, 2, 3, 3},
		SpecMajority:      {0, 1, 2, 2, 3, 3, 4, 4},
		SpecAll:           {0, 1, 2, 3, 4, 5, 6, 7},
	}
	for n := 0; n <= 7; n++ {
		nodes := make([]string, n)
		for i := range nodes {
			nodes[i] = "n" + string(rune('a'+i))
		}
		for spec, sizes := range want {
			got, err := PickNodes(spec, nodes, rng)
			if err != nil || len(got) != sizes[n] || !inOrder(got, nodes) {
				t.Errorf("PickNodes(%q, %d nodes) = %v, %v; want %d nodes in order", spec, n, got, err, sizes[n])
			}
		}
		for range 50 {
			got, _ := PickNodes(SpecRandom, nodes, rng)
			if (n > 0 && (len(got) < 1 || len(got) > n)) || (n == 0 && len(got) != 0) || !inOrder(got, nodes) {
				t.Fatalf("random subset of %d nodes: %v", n, got)
			}
		}
	}
	if _, err := PickNodes("most", []string{"n1"}, rng); err == nil {
		t.Error("an unknown specification was accepted")
	}
}

// inOrder reports whether sub is a subsequence of all without repeats.
func inOrder(sub, all []string) bool {
	j := 0
	for _, x := range sub {
		i := slices.Index(all[j:], x)
		if i < 0 {
			return false
		}
		j += i + 1
	}
	return true
}

// TestRandomSubsetSizesAreUniform: Jepsen's random-nonempty-subset takes
// 1 + rand-int(n) nodes, so every size 1..n is equally likely.
func TestRandomSubsetSizesAreUniform(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 2))
	nodes := []string{"n1", "n2", "n3", "n4", "n5"}
	const draws = 10000
	counts := make([]int, 6)
	for range draws {
		got, _ := PickNodes(SpecRandom, nodes, rng)
		counts[len(got)]++
	}
	for size := 1; size <= 5; size++ {
		if f := float64(counts[size]) / draws; math.Abs(f-0.2) > 0.03 { // > 7 standard errors
			t.Errorf("size %d drawn %.3f of the time, want 0.2: %v", size, f, counts)
		}
	}
}

// TestProcessSchedule: with kill and pause, one stagger drives both
// flip-flops (gen/mix): kills and starts alternate, pauses and resumes
// alternate, the two interleave at random, the first op is due at t=0,
// gaps are U[0, 2*interval), and specifications are uniform.
func TestProcessSchedule(t *testing.T) {
	const interval, n = time.Second, 20000
	s, err := NewSchedule(Faults{Kill: true, Pause: true}, interval, Streams{Process: rand.New(rand.NewPCG(testSeed(t), 4))})
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]string{} // mode -> last op of that mode
	partner := map[string]string{KillOp: StartOp, StartOp: KillOp, PauseOp: ResumeOp, ResumeOp: PauseOp}
	mode := map[string]string{KillOp: "kill", StartOp: "kill", PauseOp: "pause", ResumeOp: "pause"}
	counts, specs := map[string]int{}, map[NodeSpec]int{}
	var prev Op
	var sum time.Duration
	for i := range n {
		op := s.Pop()
		if i == 0 && op.At != 0 {
			t.Fatalf("first op at %v, want 0", op.At)
		}
		if gap := op.At - prev.At; gap < 0 || gap >= 2*interval {
			t.Fatalf("gap %v outside [0, %v)", gap, 2*interval)
		}
		sum += op.At - prev.At
		m := mode[op.F]
		if m == "" {
			t.Fatalf("op %+v is not a process op", op)
		}
		if before := last[m]; before != "" && op.F != partner[before] {
			t.Fatalf("%s after %s: each fault's ops must alternate", op.F, before)
		}
		if last[m] == "" && op.F != KillOp && op.F != PauseOp {
			t.Fatalf("the %s mode began with %s", m, op.F)
		}
		if op.F == StartOp || op.F == ResumeOp {
			if op.Nodes != SpecAll {
				t.Fatalf("%s acts on %q, want all", op.F, op.Nodes)
			}
		} else {
			specs[op.Nodes]++
		}
		last[m] = op.F
		counts[op.F]++
		prev = op
	}
	if mean := sum / n; math.Abs(float64(mean-interval)) > float64(30*time.Millisecond) {
		t.Errorf("mean gap %v, want %v", mean, interval)
	}
	kills, pauses := counts[KillOp]+counts[StartOp], counts[PauseOp]+counts[ResumeOp]
	if f := float64(kills) / n; math.Abs(f-0.5) > 0.03 {
		t.Errorf("kill/start ops are %.3f of all, want 0.5 (gen/mix): %v", f, counts)
	}
	if pauses+kills != n {
		t.Errorf("counts %v", counts)
	}
	begins := counts[KillOp] + counts[PauseOp]
	for _, spec := range NodeSpecs {
		if f := float64(specs[spec]) / float64(begins); math.Abs(f-1.0/6) > 0.03 {
			t.Errorf("spec %q chosen %.3f of the time, want 1/6", spec, f)
		}
	}
}

// TestCombinedSchedule: partitions, packet faults, process faults and
// clock faults are independent staggers merged in time order; all begin
// at t=0, partitions first, then packets, then process, then clock; and
// each package's ops are the ones it draws alone.
func TestCombinedSchedule(t *testing.T) {
	seed := testSeed(t)
	rng := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
	all := Faults{Partition: true, Kill: true, Pause: true, Clock: true, Packet: true}
	s, err := NewSchedule(all, time.Second, Streams{Partition: rng(1), Process: rng(2), Clock: rng(3), Packet: rng(4)})
	if err != nil {
		t.Fatal(err)
	}
	alone := map[string]*Schedule{}
	alone["partition"], _ = NewSchedule(Faults{Partition: true}, time.Second, Streams{Partition: rng(1)})
	alone["process"], _ = NewSchedule(Faults{Kill: true, Pause: true}, time.Second, Streams{Process: rng(2)})
	alone["clock"], _ = NewSchedule(Faults{Clock: true}, time.Second, Streams{Clock: rng(3)})
	alone["packet"], _ = NewSchedule(Faults{Packet: true}, time.Second, Streams{Packet: rng(4)})
	pkg := func(op Op) string {
		switch op.F {
		case StartPartition, StopPartition:
			return "partition"
		case ClockSkew, ClockReset:
			return "clock"
		case StartPacket, StopPacket:
			return "packet"
		}
		return "process"
	}
	var prev Op
	counts := map[string]int{}
	for i := range 4000 {
		op := s.Pop()
		if op.At < prev.At {
			t.Fatalf("op %d at %v before the previous at %v", i, op.At, prev.At)
		}
		if want := []string{"partition", "packet", "process", "clock"}; i < 4 && (op.At != 0 || pkg(op) != want[i]) {
			t.Fatalf("op %d is %+v, want the first %s op at 0", i, op, want[i])
		}
		if want := alone[pkg(op)].Pop(); !reflect.DeepEqual(op, want) {
			t.Fatalf("%s op %d is %+v with every fault, %+v alone", pkg(op), counts[pkg(op)], op, want)
		}
		counts[pkg(op)]++
		prev = op
	}
	for name, n := range counts {
		if n < 800 {
			t.Errorf("%d %s ops of 4000 (%v): the packages must share the time", n, name, counts)
		}
	}
}

func TestFinalOps(t *testing.T) {
	var fs []string
	for _, op := range FinalOps(Faults{Partition: true, Kill: true, Pause: true}) {
		fs = append(fs, op.F)
	}
	if strings.Join(fs, ",") != "stop-partition,resume,start" {
		t.Errorf("final ops %v, want Jepsen's order stop-partition, resume, start", fs)
	}
	fs = nil
	for _, op := range FinalOps(Faults{Partition: true, Kill: true, Pause: true, Clock: true}) {
		fs = append(fs, op.F)
	}
	if strings.Join(fs, ",") != "stop-partition,clock-reset,resume,start" {
		t.Errorf("final ops %v, want stop-partition, clock-reset, resume, start", fs)
	}
	if ops := FinalOps(Faults{Kill: true}); len(ops) != 1 || ops[0].F != StartOp || ops[0].Nodes != SpecAll {
		t.Errorf("kill only: %+v", ops)
	}
}
