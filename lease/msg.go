package lease

// MsgType names a peer message; the strings are the Maelstrom body types.
type MsgType string

// Peer messages. Every request is answered by its "_ok" message, whose OK
// field says whether the acceptor did what was asked; a refusal is a
// normal protocol answer, not a Maelstrom error.
const (
	MsgPrepare     MsgType = "prepare"    // proposer -> acceptor: promise me Ballot, for Server
	MsgPrepareResp MsgType = "prepare_ok" // OK: promised; Lease: the live lease, if any
	MsgPropose     MsgType = "propose"    // proposer -> acceptor: accept Server for LeaseMs at Ballot
	MsgProposeResp MsgType = "propose_ok" // OK: accepted; else Promised and Lease say why not
	MsgRead        MsgType = "read"       // reader -> acceptor: what lease do you hold? (changes nothing)
	MsgReadResp    MsgType = "read_ok"    // Lease: the current record, live or expired
	MsgRelease     MsgType = "release"    // holder's courier -> acceptor: drop exactly (Server, Token)
	MsgReleaseResp MsgType = "release_ok" // OK: that lease instance was live here and is gone
	MsgSync        MsgType = "sync"       // restarted acceptor -> acceptors: what is your ballot high-water mark?
	MsgCancel      MsgType = "cancel"     // proposer -> acceptor: my prepare at Ballot gave up; drop its sticky promise
	MsgCancelResp  MsgType = "cancel_ok"  // OK: a sticky promise was dropped
	MsgSyncResp    MsgType = "sync_ok"    // Counter: the high-water mark; Recovering: the answerer is restarting too
	// MsgBooting answers prepare, propose, read or release from an acceptor
	// in its boot wait (rule 7): it did nothing, and serves in BootingMs.
	// It lets the proposer's error name the acceptor instead of calling it
	// silent; it counts towards no quorum.
	MsgBooting MsgType = "booting"
)

// Msg is one peer message, to or from an acceptor. Fields a type does not
// use are zero. From and To are node ids (the envelope's src and dest).
type Msg struct {
	Type  MsgType
	From  string
	To    string
	Chunk string
	// Ballot: the proposal (prepare, propose and their answers).
	Ballot Ballot
	// Server and LeaseMs: the lease asked for (prepare: Server only;
	// propose) or the lease to drop (release, with Token).
	Server  string
	LeaseMs int64
	// Fast marks a renewal propose sent without prepare: the acceptor
	// accepts it only while it holds a live lease of Server.
	Fast bool
	// Token names the lease instance a release drops.
	Token int64
	// ReqID and Nonce match an answer to its read, release or sync: the
	// asker's request id and its incarnation's Config.Nonce, echoed.
	ReqID uint64
	Nonce uint64
	// OK, Promised and Lease: the acceptor's answer.
	OK       bool
	Promised Ballot
	Lease    *Record
	// Counter and Recovering: a sync answer. Core and Cores: which of
	// the answering member's cores it comes from, and how many that
	// member runs (0: one, Core 0); every core answers a sync for the
	// chunks it serves (cores.go).
	Counter     uint64
	Recovering  bool
	Core, Cores int
	// BootingMs: a booting answer's remaining boot wait.
	BootingMs int64
	// Request is the client request a propose was sent for (Request.ID;
	// 0 for none or the node's own master lease). It is not put on the
	// wire: it is for tracing, and for the simulation's check that a
	// request answered with error 11 sent no propose.
	Request uint64
}

// Record is an acceptor's lease record as it reports it. Prepare and
// propose answers carry only live records (rule 5); read answers
// carry expired ones too, so a check can name the last holder.
type Record struct {
	Server string `json:"server"`
	// Token is the fencing token of the latest lease instance of Server
	// this acceptor accepted; 0 once it expired (idle instances keep only
	// the holder's name).
	Token int64 `json:"token"`
	// RemainingMs is what was left of the lease (of every instance of
	// Server the acceptor protects) when the acceptor answered, in whole
	// milliseconds.
	RemainingMs int64 `json:"remaining_ms"`
	// Expired is true once the acceptor no longer protects the lease.
	Expired bool `json:"expired"`
}

// isRequest reports whether an acceptor handles this type.
func (t MsgType) isRequest() bool {
	switch t {
	case MsgPrepare, MsgPropose, MsgRead, MsgRelease, MsgSync, MsgCancel:
		return true
	}
	return false
}
