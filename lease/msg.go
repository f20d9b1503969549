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

	// Membership (member.go): the change instance of an epoch, and the
	// configuration itself.
	MsgChangePrepare     MsgType = "member_prepare"    // changer -> members: promise Ballot in the change instance of Epoch
	MsgChangePrepareResp MsgType = "member_prepare_ok" // OK: promised; Accepted, Value: what it accepted; Counter: its high-water mark; WaitMs: the waiting rule's time left
	MsgChangePropose     MsgType = "member_propose"    // changer -> members: accept Value at Ballot in the change instance of Epoch
	MsgChangeProposeResp MsgType = "member_propose_ok" // OK: accepted
	MsgConfig            MsgType = "member_config"     // any node -> any node: adopt Conf (a chosen configuration)
	MsgConfigResp        MsgType = "member_config_ok"  // Epoch: the configuration the answerer holds now
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
	// OK, Promised and Lease: the acceptor's answer. A Node reads Lease
	// while it handles the message and keeps no pointer to it after: a
	// shell may reuse the Record once Receive returns, and the answers a
	// node's acceptor gives its own proposer point into a buffer the node
	// reuses after the call (Node.selfRecords).
	OK       bool
	Promised Ballot
	Lease    *Record
	// Counter and Recovering: a sync answer. Recovering also marks a
	// booting answer from a restarted member whose boot wait is over but
	// which has not recovered the configuration yet (membership).
	Counter    uint64
	Recovering bool
	// Core and Cores: which of the answering member's cores a sync
	// answer comes from, and how many that member runs (0: one, Core 0);
	// every core answers a sync for the chunks it serves (cores.go).
	Core, Cores int
	// Epoch is the sender's configuration epoch (membership): on prepare,
	// propose, read and release and their answers, and on the change
	// messages. 0 until the first change, and then left off the wire.
	Epoch uint64
	// Conf is a configuration: the one a member_config commits or pushes,
	// an acceptor's own when it refuses a lower epoch, the answerer's in
	// a sync answer (membership), and the proposer's on a request it sends
	// again to an acceptor it found behind.
	Conf *Membership
	// Value and Accepted: the configuration a member_propose asks to
	// accept; in a member_prepare_ok or a sync answer, the value the
	// acceptor accepted in its epoch's change instance, and its ballot.
	Value    *Membership
	Accepted Ballot
	// WaitMs: a member_prepare_ok that did not promise because of the
	// waiting rule (rule 11): how long until it ends.
	WaitMs int64
	// Learner: a member_prepare_ok or member_propose_ok from a node that
	// votes on nothing now (outside the configuration, or restarting):
	// it did nothing, but it is up.
	Learner bool
	// Active: a member_prepare from a changer that knows its
	// configuration is active (member.go).
	Active bool
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
	case MsgPrepare, MsgPropose, MsgRead, MsgRelease, MsgSync, MsgCancel, MsgChangePrepare, MsgChangePropose, MsgConfig:
		return true
	}
	return false
}

// leaseRequest reports whether a type asks an acceptor to act on a
// chunk's lease: those carry the proposer's epoch.
func (t MsgType) leaseRequest() bool {
	switch t {
	case MsgPrepare, MsgPropose, MsgRead, MsgRelease:
		return true
	}
	return false
}
