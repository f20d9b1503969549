package lease

import (
	"encoding/json"

	"chunklease/workloads"
)

// Call is one lease op as a client sends it, for workloads that plan
// their own lease ops (package leasebench) and share this workload's
// wire form, history values and reply checks.
type Call struct {
	F       string // FGrant, FRenew, FCheck or FRelease
	Chunk   string
	Server  string // "" for check
	LeaseMs int64  // grant and renew
	Token   int64  // release; 0 sends none
}

func (c Call) call() leaseCall {
	return leaseCall{f: c.F, chunk: c.Chunk, server: c.Server, leaseMs: c.LeaseMs, token: c.Token}
}

// Invocation is the call's invoke: f and the history value.
func (c Call) Invocation() workloads.Invocation { return c.call().invocation() }

// Request is the call's Maelstrom request body.
func (c Call) Request() json.RawMessage { return c.call().request() }

// Complete maps the node's reply (nil: a timeout) to the call's
// completion, as the lease workload does, and returns the fencing token
// an ok grant naming the requester or an ok renew carried (0: none).
func (c Call) Complete(inv workloads.Invocation, reply json.RawMessage) (workloads.Completion, int64) {
	out := completeLease(inv, c.call(), reply)
	return out.c, out.token
}

// DecodeCall reads an invocation of the lease workload back into a call.
func DecodeCall(inv workloads.Invocation) (Call, error) {
	c, err := decodeCall(inv)
	return Call{F: c.f, Chunk: c.chunk, Server: c.server, LeaseMs: c.leaseMs, Token: c.token}, err
}

// DecodeValue decodes a lease op's history value (json.Unmarshal into a
// LeaseValue, faster).
func DecodeValue(b []byte) (LeaseValue, error) { return decodeLeaseValue(b) }
