package lease

import "fmt"

// Op is a client operation.
type Op uint8

// Client operations, in the order of the contract's client table.
const (
	OpGrant Op = iota + 1
	OpRenew
	OpCheck
	OpRelease
	OpMasterStart
	OpMasterStop
	OpMasterStatus
	// Membership (member.go): the operator's changes of the acceptor set,
	// one member at a time, and a look at it.
	OpMemberAdd
	OpMemberRemove
	OpMemberReplace
	OpMemberList
)

// String is the Maelstrom request type.
func (o Op) String() string {
	switch o {
	case OpGrant:
		return "lease_grant"
	case OpRenew:
		return "lease_renew"
	case OpCheck:
		return "lease_check"
	case OpRelease:
		return "lease_release"
	case OpMasterStart:
		return "master_start"
	case OpMasterStop:
		return "master_stop"
	case OpMasterStatus:
		return "master_status"
	case OpMemberAdd:
		return "member_add"
	case OpMemberRemove:
		return "member_remove"
	case OpMemberReplace:
		return "member_replace"
	case OpMemberList:
		return "member_list"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Request is one client request. ID is the caller's handle, echoed in the
// Reply; it must be unique among the node's pending requests.
type Request struct {
	ID     uint64
	Op     Op
	Chunk  string
	Server string // grant, renew, release
	// LeaseMs is the lease length asked for; 0 means the node's default.
	LeaseMs int64
	// Token names the lease instance a release ends (release only).
	Token int64
	// Member is the node a membership change adds or removes (replace:
	// removes), Replacement the node a replace adds, Addr the peer
	// address an added member is reached at (for shells that need it).
	// Force makes a change that would leave the new configuration
	// without a reachable majority go ahead.
	Member, Replacement, Addr string
	Force                     bool
}

// Reply answers one Request: Err, or Type with Body (a struct that
// marshals to the reply's fields in the task's key order).
type Reply struct {
	ID   uint64
	Type string
	Body any
	Err  *Error
}

// GrantOK answers lease_grant. Primary is the server that holds the chunk:
// the requester, or the other server that already held it. Token is the
// fencing token of the lease instance: the new one when Primary is the
// requester, else the holder's latest the acceptors reported.
type GrantOK struct {
	ChunkHandle string `json:"chunk_handle"`
	Primary     string `json:"primary"`
	ExpiresInMs int64  `json:"expires_in_ms"`
	Token       int64  `json:"token"`
}

// RenewOK answers lease_renew. Token is the new lease instance's fencing
// token, larger than the one it renews.
type RenewOK struct {
	NewExpiresInMs int64 `json:"new_expires_in_ms"`
	Token          int64 `json:"token"`
}

// CheckOK answers lease_check. Primary is null when no acceptor of the
// majority read ever saw a lease; Expired is true when no server holds the
// chunk now (Primary then names the most recent holder seen).
type CheckOK struct {
	Primary     *string `json:"primary"`
	RemainingMs int64   `json:"remaining_ms"`
	Expired     bool    `json:"expired"`
}

// ReleaseOK answers lease_release.
type ReleaseOK struct {
	ChunkHandle string `json:"chunk_handle"`
}
