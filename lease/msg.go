package lease

// MsgType names a peer message; the strings are the Maelstrom body types.
type MsgType string

// Peer messages. Every request is answered by its "_ok" message, whose OK
// field says whether the acceptor granted what was asked; a refusal is a
// normal protocol answer, not a Maelstrom error.
const (
	MsgPrepare     MsgType = "prepare"    // proposer -> acceptor: promise me Ballot
	MsgPrepareResp MsgType = "prepare_ok" // OK: promised; Lease: the live lease, if any
	MsgPropose     MsgType = "propose"    // proposer -> acceptor: accept Server for LeaseMs at Ballot
	MsgProposeResp MsgType = "propose_ok" // OK: accepted; else Promised and Lease say why not
	MsgRead        MsgType = "read"       // reader -> acceptor: what lease do you hold? (changes nothing)
	MsgReadResp    MsgType = "read_ok"    // Lease: the current record, live or expired
	MsgRelease     MsgType = "release"    // holder's courier -> acceptor: drop exactly (Server, Ballot)
	MsgReleaseResp MsgType = "release_ok" // OK: that lease was live here and is gone
)

// Msg is one peer message, to or from an acceptor. Fields a type does not
// use are zero. From and To are node ids (the envelope's src and dest).
type Msg struct {
	Type  MsgType
	From  string
	To    string
	Chunk string
	// Ballot: the proposal (prepare, propose, release and their answers).
	Ballot Ballot
	// Server and LeaseMs: the proposed lease (propose) or the lease to
	// drop (release, Server only).
	Server  string
	LeaseMs int64
	// ReadID matches a read_ok to its read.
	ReadID uint64
	// OK, Promised and Lease: the acceptor's answer.
	OK       bool
	Promised Ballot
	Lease    *Record
}

// Record is an acceptor's lease record as it reports it. Prepare and
// propose answers carry only live records (contract rule 5); read answers
// carry expired ones too, so a check can name the last holder.
type Record struct {
	Server string `json:"server"`
	Ballot Ballot `json:"ballot"`
	// RemainingMs is what was left of the nominal lease when the acceptor
	// answered, in whole milliseconds.
	RemainingMs int64 `json:"remaining_ms"`
	// Expired is true once the acceptor no longer protects the lease.
	Expired bool `json:"expired"`
}

// isRequest reports whether an acceptor handles this type.
func (t MsgType) isRequest() bool {
	switch t {
	case MsgPrepare, MsgPropose, MsgRead, MsgRelease:
		return true
	}
	return false
}
