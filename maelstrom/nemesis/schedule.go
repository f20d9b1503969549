package nemesis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The history f of the nemesis ops, as Jepsen names them.
const (
	StartPartition = "start-partition"
	StopPartition  = "stop-partition"
	KillOp         = "kill"   // SIGKILL the chosen nodes
	StartOp        = "start"  // start every killed node again, with a fresh init
	PauseOp        = "pause"  // SIGSTOP the chosen nodes
	ResumeOp       = "resume" // SIGCONT every paused node

	// The clock fault (clock.go): the harness draws each op's
	// ClockSettings (DrawClock) and records them as its value.
	ClockSkew  = "clock-skew"  // chosen nodes' wall-clock offsets and rates (ClockSettings)
	ClockReset = "clock-reset" // every clock back to normal

	// The packet fault (settings.go: PacketSettings, drawn by the
	// schedule). An op carries its settings in Op.Settings.
	StartPacket = "start-packet" // delay, jitter, loss, duplication, reordering on links (PacketSettings)
	StopPacket  = "stop-packet"  // every link back to normal

	// The member fault: the harness picks the change (a member removed or
	// a node added, through a node it picks) and records the node's
	// answer as the op's completion.
	MemberOp = "member"
)

// Op is one scheduled nemesis operation.
type Op struct {
	At     time.Duration // when it is due, since the test started
	F      string        // one of the op names above
	Target Target        // a start-partition's shape
	// Nodes is a kill's, pause's, clock-skew's or start-packet's node
	// specification; start, resume, clock-reset and stop-packet act on
	// all nodes (SpecAll), as Jepsen's do.
	Nodes NodeSpec
	// Clock is a clock-skew's mode: a bump or a strobe.
	Clock ClockMode
	// Settings are what the schedule drew for a fault whose op carries
	// more than a shape or nodes (a packet fault's PacketSettings, a clock
	// fault's ClockSettings); nil for the others. They are the op's
	// invoke value in the history.
	Settings any
}

// Schedule yields the nemesis ops of the enabled faults in time order. It
// is Jepsen's combined nemesis: the partition package, the packet
// package, the process package (kill and pause) and the clock package are
// independent generators, each stagger(interval, ...), combined with
// gen/any (the earlier op first; at a tie, in that order). Within the
// process package, each op picks the kill/start or the pause/resume
// flip-flop uniformly (gen/mix) and takes its next op; the clock package
// picks a reset, a bump or a strobe uniformly (Jepsen's clock-gen: mix of
// reset-gen, bump-gen and strobe-gen). It is not safe for concurrent use.
type Schedule struct {
	streams []*stream
}

// stream is one package's generator: stagger(interval, mix(modes)).
type stream struct {
	interval time.Duration
	rng      *rand.Rand
	modes    []mode
	next     Op
}

// mode yields a package's next op of one kind.
type mode interface {
	next(rng *rand.Rand) Op
}

// flipFlop alternates a fault's begin op (with a random target) and its
// end op: Jepsen's flip-flop over (begin, repeat(end)).
type flipFlop struct {
	began bool
	begin func(rng *rand.Rand) Op
	end   Op
}

func (m *flipFlop) next(rng *rand.Rand) Op {
	m.began = !m.began
	if m.began {
		return m.begin(rng)
	}
	return m.end
}

// Streams are the schedule's random sources, one per package, so that
// enabling one fault leaves the others' schedules as they were. A
// package's source may be nil when its faults are off.
type Streams struct {
	Partition *rand.Rand // partition shapes and times
	Process   *rand.Rand // kill and pause: mode, node specification, times
	Clock     *rand.Rand // clock: kind of op, node specification, times
	Packet    *rand.Rand // packet: node specification, settings, times
	Member    *rand.Rand // member: times
}

// NewSchedule returns the schedule of faults for --nemesis-interval
// interval (> 0), each package drawing from its own stream. Each
// package's first op is due at t=0, and its ops are a uniform gap in
// [0, 2*interval) apart.
func NewSchedule(faults Faults, interval time.Duration, rngs Streams) (*Schedule, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("nemesis interval must be > 0, got %v", interval)
	}
	if !faults.Any() {
		return nil, errors.New("no fault to schedule")
	}
	s := &Schedule{}
	if faults.Partition {
		s.add(interval, rngs.Partition, partitionFlipFlop())
	}
	if faults.Packet {
		s.add(interval, rngs.Packet, packetFlipFlop())
	}
	var modes []mode
	if faults.Pause { // Jepsen's order: pause/resume, then kill/start
		modes = append(modes, processFlipFlop(PauseOp, ResumeOp))
	}
	if faults.Kill {
		kill := processFlipFlop(KillOp, StartOp)
		if faults.Member {
			kill = oneKill()
		}
		modes = append(modes, kill)
	}
	if len(modes) > 0 {
		s.add(interval, rngs.Process, modes...)
	}
	if faults.Clock {
		s.add(interval, rngs.Clock, clockMix{})
	}
	if faults.Member {
		s.add(interval, rngs.Member, memberChange{})
	}
	return s, nil
}

// memberChange is the member package's only kind of op: a change, which
// the harness draws when it performs it (it needs the configuration the
// nodes answered so far).
type memberChange struct{}

func (memberChange) next(*rand.Rand) Op { return Op{F: MemberOp} }

func (s *Schedule) add(interval time.Duration, rng *rand.Rand, modes ...mode) {
	st := &stream{interval: interval, rng: rng, modes: modes}
	st.next = st.draw(0)
	s.streams = append(s.streams, st)
}

func partitionFlipFlop() *flipFlop {
	return &flipFlop{
		begin: func(rng *rand.Rand) Op {
			return Op{F: StartPartition, Target: Targets[rng.IntN(len(Targets))]} // rand-nth
		},
		end: Op{F: StopPartition},
	}
}

// packetFlipFlop: start-packet on a node specification with settings
// drawn from the stream (DrawPacket), stop-packet on every link.
func packetFlipFlop() *flipFlop {
	return &flipFlop{
		begin: func(rng *rand.Rand) Op {
			spec := NodeSpecs[rng.IntN(len(NodeSpecs))]
			return Op{F: StartPacket, Nodes: spec, Settings: DrawPacket(rng)}
		},
		end: Op{F: StopPacket, Nodes: SpecAll},
	}
}

// oneKill is the kill mode beside the member fault: a restarted member
// votes only once n-q+1 other members of its configuration that did not
// restart answered it (lease/doc.go "Restarts"), and the configuration
// may have shrunk to three members, where that is both others; so two
// members killed at once wait until every node restarted. Operators
// replace a dead member before restarting another (docs/service.md);
// the kills take one node at a time, as the simulation's crashes with
// membership keep a majority of the configuration remembering.
func oneKill() *flipFlop {
	return &flipFlop{
		begin: func(rng *rand.Rand) Op {
			rng.IntN(len(NodeSpecs)) // the draw the other kill modes make, so the stream's other ops stay as they were
			return Op{F: KillOp, Nodes: SpecOne}
		},
		end: Op{F: StartOp, Nodes: SpecAll},
	}
}

func processFlipFlop(begin, end string) *flipFlop {
	return &flipFlop{
		begin: func(rng *rand.Rand) Op {
			return Op{F: begin, Nodes: NodeSpecs[rng.IntN(len(NodeSpecs))]}
		},
		end: Op{F: end, Nodes: SpecAll},
	}
}

// draw picks the stream's op due at: a mode (when there are several),
// then that mode's next op.
func (st *stream) draw(at time.Duration) Op {
	m := st.modes[0]
	if len(st.modes) > 1 {
		m = st.modes[st.rng.IntN(len(st.modes))]
	}
	op := m.next(st.rng)
	op.At = at
	return op
}

// Peek returns the next op without consuming it.
func (s *Schedule) Peek() Op { return s.streams[s.first()].next }

// Pop returns the next op and schedules its package's op after it.
func (s *Schedule) Pop() Op {
	st := s.streams[s.first()]
	op := st.next
	gap := time.Duration(st.rng.Int64N(int64(2 * st.interval)))
	st.next = st.draw(op.At + gap)
	return op
}

// first is the stream whose op is due first (the earlier stream at a tie).
func (s *Schedule) first() int {
	best := 0
	for i, st := range s.streams {
		if st.next.At < s.streams[best].next.At {
			best = i
		}
	}
	return best
}

// FinalOps are the ops that heal every fault at the end of a test, in
// Jepsen's order (the packages' final generators one after the other):
// stop-partition, stop-packet, then clock-reset, then resume, then start
// (so nodes started again begin with true clocks). Each is performed
// whether or not its fault is in force, as Jepsen does.
func FinalOps(faults Faults) []Op {
	var ops []Op
	if faults.Partition {
		ops = append(ops, Op{F: StopPartition})
	}
	if faults.Packet {
		ops = append(ops, Op{F: StopPacket, Nodes: SpecAll})
	}
	if faults.Clock {
		ops = append(ops, Op{F: ClockReset, Nodes: SpecAll})
	}
	if faults.Pause {
		ops = append(ops, Op{F: ResumeOp, Nodes: SpecAll})
	}
	if faults.Kill {
		ops = append(ops, Op{F: StartOp, Nodes: SpecAll})
	}
	return ops
}
