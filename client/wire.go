package client

import (
	"encoding/json"
	"strconv"

	"chunklease/internal/jsonstr"
)

// op is one endpoint of the client API (contract section 3).
type op uint8

const (
	opGrant op = iota
	opRenew
	opCheck
	opRelease
	opMasterStart
	opMasterStop
	opMasterStatus
	opMemberList
	opMemberAdd
	opMemberRemove
	numOps
)

// String is the request type: the path after /v1/.
func (o op) String() string {
	return [...]string{"lease_grant", "lease_renew", "lease_check", "lease_release", "master_start", "master_stop", "master_status",
		"member_list", "member_add", "member_remove"}[o]
}

// okType is the type of a success reply.
func (o op) okType() string { return o.String() + "_ok" }

// request is one call's request fields; zero LeaseMs and Token are left
// out of the body.
type request struct {
	op      op
	chunk   string
	server  string
	leaseMs int64
	token   int64
	// member, addr and force: a membership change (member.go).
	member, addr string
	force        bool
}

// appendBody appends the request body: the message body of contract
// section 1 without type and msg_id. Written by hand: the fields are few
// and fixed, so no reflection runs on the hot path.
func (r *request) appendBody(dst []byte) []byte {
	dst = append(dst, '{')
	sep := false
	field := func(name string) {
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}
	if r.op <= opRelease {
		field("chunk_handle")
		dst = jsonstr.Append(dst, r.chunk)
	}
	if r.op == opGrant || r.op == opRenew || r.op == opRelease {
		field("server")
		dst = jsonstr.Append(dst, r.server)
	}
	if r.leaseMs != 0 {
		field("lease_ms")
		dst = strconv.AppendInt(dst, r.leaseMs, 10)
	}
	if r.op == opRelease {
		field("token")
		dst = strconv.AppendInt(dst, r.token, 10)
	}
	if r.op == opMemberAdd || r.op == opMemberRemove {
		field("node")
		dst = jsonstr.Append(dst, r.member)
	}
	if r.addr != "" {
		field("addr")
		dst = jsonstr.Append(dst, r.addr)
	}
	if r.force {
		field("force")
		dst = append(dst, "true"...)
	}
	return append(dst, '}')
}

// describe is the request for a person, e.g. `lease_renew ch_1 for cs1`.
func (r *request) describe(node string) string {
	s := r.op.String()
	switch r.op {
	case opGrant, opRenew:
		s += " " + strconv.Quote(r.chunk) + " for " + strconv.Quote(r.server)
	case opCheck:
		s += " " + strconv.Quote(r.chunk)
	case opRelease:
		s += " " + strconv.Quote(r.chunk) + " for " + strconv.Quote(r.server) + " token " + strconv.FormatInt(r.token, 10)
	case opMemberAdd, opMemberRemove:
		s += " " + strconv.Quote(r.member)
	case opMemberList:
	default:
		s += " on " + node
	}
	return s
}

// reply holds the fields of every reply body the client reads: the
// success replies of contract section 1 and the error body.
type reply struct {
	Type           string  `json:"type"`
	ChunkHandle    string  `json:"chunk_handle"`
	Primary        *string `json:"primary"`
	ExpiresInMs    int64   `json:"expires_in_ms"`
	NewExpiresInMs int64   `json:"new_expires_in_ms"`
	Token          int64   `json:"token"`
	RemainingMs    int64   `json:"remaining_ms"`
	Expired        bool    `json:"expired"`
	IsMaster       bool    `json:"is_master"`
	Master         *string `json:"master"`
	Code           *int    `json:"code"`
	Text           string  `json:"text"`
	// Membership (member.go).
	Epoch          uint64            `json:"epoch"`
	Members        []string          `json:"members"`
	NextChangeInMs int64             `json:"next_change_in_ms"`
	Addrs          map[string]string `json:"addrs"`
	RetryInMs      int64             `json:"retry_in_ms"`
}

func (r *reply) decode(b []byte) error {
	*r = reply{}
	if r.decodeFlat(b) {
		return nil
	}
	*r = reply{}
	return json.Unmarshal(b, r)
}

// code is the error body's code, or -1.
func (r *reply) code() int {
	if r.Code == nil {
		return -1
	}
	return *r.Code
}
