package lease

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"time"
)

// Cores sharing one member (doc.go "Cores sharing one member"). A member
// may run its lease state on several cores, each a Node of its own on its
// own event loop: Config.Cores says how many, Config.Core which one this
// is. Chunks are partitioned among them by CoreOf; the master lease and
// the sync rounds of a restarted member belong to core 0, the lead. A
// member with one core is exactly the Node of before.

// MaxCores bounds Config.Cores: a sync answer names its core among at
// most this many, one bit each in the asker's tally.
const MaxCores = 64

// CoreOf is the core that serves chunk in a member running cores cores:
// a 64-bit multiplicative hash of the handle, eight bytes a step, mapped
// onto the cores by a multiply and a shift. The empty handle (the master
// lease's instance, and the master_* requests, which name no chunk) is
// the lead core's, core 0.
//
// Every input of a member of several cores hashes its chunk at least
// twice (the shell routes it, the core checks it is its own: owns), so
// the hash is on every call's path. A byte-at-a-time hash (FNV-1a) and a
// division took about 2 % of a member's CPU at two cores in
// BenchmarkMemberCores; BenchmarkCoreOf (2-core AMD EPYC, Go 1.26.8)
// gave it 12 ns for an 8-byte handle and 45 for a 35-byte one, against
// 6 and 15 for this one. Only the member itself must agree with its own
// CoreOf (Route): a member of another version or count hashes for
// itself, and answers carry their chunk back.
func CoreOf(chunk string, cores int) int {
	if cores <= 1 || chunk == "" {
		return 0
	}
	h := uint64(len(chunk)) * 0x9e3779b97f4a7c15
	for ; len(chunk) >= 8; chunk = chunk[8:] {
		h = bits.RotateLeft64((h^load64(chunk))*0xbf58476d1ce4e5b9, 31)
	}
	var tail uint64
	for i := len(chunk) - 1; i >= 0; i-- {
		tail = tail<<8 | uint64(chunk[i])
	}
	h = (h ^ tail) * 0x94d049bb133111eb
	h ^= h >> 32
	return int(uint64(uint32(h)) * uint64(cores) >> 32)
}

// load64 is s's first eight bytes, little-endian (one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Route is where a member running cores cores hands peer message m: to
// the core of its chunk, or, when every is true, to every core. Each
// member routes by its own count, so members that run different numbers
// of cores talk to each other unchanged: an answer carries its chunk
// back to the core that asked. The node-level messages, which name no
// chunk, go to every core: a sync (each core answers with its own
// high-water mark, naming itself), a sync answer (every core of a
// restarted member needs every answer) and a change prepare (the lead
// promises, each core reports its own high-water mark, naming itself).
// The other membership messages name no chunk and go to the lead, which
// runs the change instance; a configuration it adopts reaches the other
// cores through the shell (Output.Adopted, Node.Adopt).
func Route(m *Msg, cores int) (core int, every bool) {
	if m.Type.nodeLevel() {
		return 0, true
	}
	return CoreOf(m.Chunk, cores), false
}

// nodeLevel reports whether a message is about the member rather than a
// chunk (Route sends it to every core): a sync and its answer, and a
// change prepare (membership: the lead promises, every other core
// answers with its high-water mark, member.go).
func (t MsgType) nodeLevel() bool { return t == MsgSync || t == MsgSyncResp || t == MsgChangePrepare }

// namesCore reports whether an answer of this type names the core it
// comes from (Msg.Core, Cores) when its member runs several.
func (t MsgType) namesCore() bool { return t == MsgSyncResp || t == MsgChangePrepareResp }

// NewCores builds the cores of one member at now from the member's
// Config: core i gets Core i, Cores cores and the random source
// rand(i); every other setting is the member's, the incarnation and the
// nonce included (the cores are one process start, one identity on the
// wire). cores 1 builds the one Node NewNode would.
func NewCores(cfg Config, cores int, now time.Duration, rnd func(core int) *rand.Rand) ([]*Node, error) {
	return BuildCores(cfg, cores, now, rnd, func(n int, build func(i int)) {
		for i := range n {
			build(i)
		}
	})
}

// BuildCores is NewCores with the builds run by each, which calls
// build(i) once for every i < n and returns once all have returned. A
// shell that runs its cores on several CPUs may run the builds at once,
// on goroutines of its own, so that each core's memory comes from
// another CPU's allocation cache and two cores' objects seldom share a
// cache line (internal/apart.Each); rnd is then called from all of
// them at once. The core starts no goroutine of its own: it stays a
// state machine.
func BuildCores(cfg Config, cores int, now time.Duration, rnd func(core int) *rand.Rand, each func(n int, build func(i int))) ([]*Node, error) {
	if cores < 1 || cores > MaxCores {
		return nil, fmt.Errorf("%d cores; a member runs 1..%d", cores, MaxCores)
	}
	nodes := make([]*Node, cores)
	errs := make([]error, cores)
	each(cores, func(i int) {
		c := cfg
		c.Core, c.Cores, c.Rand = i, cores, rnd(i)
		nodes[i], errs[i] = NewNode(c, now)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// lead reports whether this core speaks for the member: it serves the
// master lease and sends a restarted member's sync rounds.
func (n *Node) lead() bool { return n.cfg.Core == 0 }

// owns reports whether this core serves chunk.
func (n *Node) owns(chunk string) bool {
	return n.cfg.Cores <= 1 || CoreOf(chunk, n.cfg.Cores) == n.cfg.Core
}

// misrouted is the error for a request handed to a core that does not
// serve its chunk: a shell's mistake, answered definitely (nothing was
// sent) so that the client may retry.
func (n *Node) misrouted(chunk string) *Error {
	return &Error{Code: CodeTemporarilyUnavailable, Text: fmt.Sprintf(
		"request for chunk %q reached core %d of %d, but core %d serves it: the node's shell routed it wrongly; retry",
		chunk, n.cfg.Core, n.cfg.Cores, CoreOf(chunk, n.cfg.Cores))}
}

// coreAnswers is what a recovering core heard from one acceptor that runs
// several cores: which of them answered (a bit each), how many it runs,
// and whether any said it is restarting. The acceptor counts as answered
// once every one of its cores did: each core's high-water mark covers
// only the chunks that core serves, and this core's chunks may be any of
// them (the two members partition chunks by their own counts).
type coreAnswers struct {
	cores      int
	heard      uint64
	restarting uint64 // the cores whose latest answer said they restart
}

// note records one core's sync answer. fresh is false for a duplicate of
// an answer already counted; complete is true once every core of the
// acceptor answered (at once for an acceptor with one core).
func (s *syncRound) note(idx int, m Msg, w weakening) (fresh, complete, restarting bool) {
	if m.Cores <= 1 || w == weakSyncOneCore {
		return true, true, m.Recovering
	}
	if s.parts == nil {
		s.parts = map[int]*coreAnswers{}
	}
	a := s.parts[idx]
	if a == nil || a.cores != m.Cores {
		// The first answer, or one from a later start of that member
		// with another count: count its cores afresh.
		a = &coreAnswers{cores: m.Cores}
		s.parts[idx] = a
	}
	bit := uint64(1) << uint(m.Core)
	if a.heard&bit != 0 && (a.restarting&bit != 0) == m.Recovering {
		return false, false, false
	}
	// A first answer from this core, or one that says it finished
	// restarting (membership asks restarting peers again, recovery.go).
	a.heard |= bit
	if m.Recovering {
		a.restarting |= bit
	} else {
		a.restarting &^= bit
	}
	return true, a.heard == 1<<uint(a.cores)-1, a.restarting != 0 // 1<<64 is 0 in Go: all 64 bits
}

// restartAnswers is what a recovering core heard from one node about its
// restart (membership's fallback, wholeRestart): which of its cores said
// in their latest answer that they are restarting, and how many it runs.
// The node counts as restarting only while every one of its cores says
// so: a core that recovered holds what the node remembers.
type restartAnswers struct {
	cores      int
	restarting uint64
}

// noteRestarting records whether the core that sent sync answer m is
// restarting.
func (s *syncRound) noteRestarting(m Msg) {
	if s.restartingIDs == nil {
		s.restartingIDs = map[string]*restartAnswers{}
	}
	cores := max(m.Cores, 1)
	a := s.restartingIDs[m.From]
	if a == nil || a.cores != cores {
		a = &restartAnswers{cores: cores}
		s.restartingIDs[m.From] = a
	}
	bit := uint64(1) << uint(m.Core)
	if m.Recovering {
		a.restarting |= bit
	} else {
		a.restarting &^= bit
	}
}

// restartingNode reports whether every core of node id said, in its
// latest answer, that it is restarting.
func (s *syncRound) restartingNode(id string) bool {
	a := s.restartingIDs[id]
	return a != nil && a.restarting == 1<<uint(a.cores)-1
}
