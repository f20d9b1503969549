package client

import (
	"context"
	"time"
)

// Lease is a grant's or a renew's answer: one lease instance of Server on
// Chunk, or, for a grant that found the chunk held, the holder's.
type Lease struct {
	Chunk  string
	Server string // the server the request was for
	// Primary is the server that holds the chunk: Server when granted,
	// else the other server that already held it (a grant's "who is
	// primary?" answer, contract section 1).
	Primary string
	// Token is the instance's fencing token (0 < Token < 2^53): Server's
	// new one when granted or renewed, else the holder's latest.
	Token int64
	// ExpiresInMs is what the member said remained when it answered
	// (expires_in_ms, or new_expires_in_ms for a renew).
	ExpiresInMs int64
	// Sent is when the answered request was sent: the instance began no
	// earlier, so a believed expiry counts from it (see Until).
	Sent time.Time
}

// Granted reports whether Server holds the chunk by this answer.
func (l Lease) Granted() bool { return l.Primary == l.Server }

// Until is the believed end of the lease on the caller's clock: Sent plus
// ExpiresInMs, less driftMargin for the caller's clock running slow
// against the member's. Until is never later than the lease's end while
// the caller's clock, over ExpiresInMs, loses less than driftMargin
// against the member's; the wall clocks do not matter (Sent carries Go's
// monotonic reading).
func (l Lease) Until(driftMargin time.Duration) time.Time {
	return l.Sent.Add(time.Duration(l.ExpiresInMs)*time.Millisecond - driftMargin)
}

// Check is a check's answer.
type Check struct {
	Chunk string
	// Primary is the holder, or the most recent holder when Expired; ""
	// when no lease of the chunk was ever seen (null on the wire).
	Primary string
	// RemainingMs is the holder's remaining time as the acceptors record
	// it; it can exceed the holder's own remaining time by message delay
	// and drift (docs/protocol.md, lease_check).
	RemainingMs int64
	// Expired is true when no server holds the chunk now.
	Expired bool
}

// Grant asks for a lease of chunk for server, leaseMs long (0: the
// members' default). A chunk that is free, expired or already held by
// server is granted (a fresh instance, a new token); a chunk held by
// another server is not, and the answer names the holder (Granted is
// false): that is an answer, not an error. An error with IsUnknown means
// the grant may have taken effect: never read it as "not granted".
func (c *Client) Grant(ctx context.Context, chunk, server string, leaseMs int64) (Lease, error) {
	r := request{op: opGrant, chunk: chunk, server: server, leaseMs: leaseMs}
	var rep reply
	at, err := c.call(ctx, &r, &rep)
	if err != nil {
		return Lease{}, err
	}
	l := Lease{Chunk: chunk, Server: server, Token: rep.Token, ExpiresInMs: rep.ExpiresInMs, Sent: at.sent}
	if rep.Primary != nil {
		l.Primary = *rep.Primary
	}
	if rep.Type != r.op.okType() || l.Primary == "" || (l.Granted() && l.Token <= 0) {
		return Lease{}, badReply(&r, &rep, at)
	}
	return l, nil
}

// Renew extends server's lease of chunk by a new instance leaseMs long
// (0: the members' default), with a new, larger token. It succeeds when
// the chunk is free or held by server; held by another server, the error
// is ErrHeld (the lease is lost). IsUnknown: the renew may have taken
// effect, with a token this client never saw.
func (c *Client) Renew(ctx context.Context, chunk, server string, leaseMs int64) (Lease, error) {
	r := request{op: opRenew, chunk: chunk, server: server, leaseMs: leaseMs}
	var rep reply
	at, err := c.call(ctx, &r, &rep)
	if err != nil {
		return Lease{}, err
	}
	if rep.Type != r.op.okType() || rep.Token <= 0 {
		return Lease{}, badReply(&r, &rep, at)
	}
	return Lease{Chunk: chunk, Server: server, Primary: server, Token: rep.Token, ExpiresInMs: rep.NewExpiresInMs, Sent: at.sent}, nil
}

// Check asks who holds chunk, from a majority of acceptors.
func (c *Client) Check(ctx context.Context, chunk string) (Check, error) {
	r := request{op: opCheck, chunk: chunk}
	var rep reply
	at, err := c.call(ctx, &r, &rep)
	if err != nil {
		return Check{}, err
	}
	if rep.Type != r.op.okType() {
		return Check{}, badReply(&r, &rep, at)
	}
	ch := Check{Chunk: chunk, RemainingMs: rep.RemainingMs, Expired: rep.Expired}
	if rep.Primary != nil {
		ch.Primary = *rep.Primary
	}
	return ch, nil
}

// Release gives chunk back early: it ends every instance of server on
// chunk whose token is <= token (rule 6 of package lease), so the token of the
// latest grant or renew ends the lease however often it was renewed. A
// newer instance (larger token) is untouched; another server's token, or
// a lease already ended, changes nothing and is not an error.
func (c *Client) Release(ctx context.Context, chunk, server string, token int64) error {
	r := request{op: opRelease, chunk: chunk, server: server, token: token}
	var rep reply
	at, err := c.call(ctx, &r, &rep)
	if err != nil {
		return err
	}
	if rep.Type != r.op.okType() {
		return badReply(&r, &rep, at)
	}
	return nil
}

// badReply is the error of a 200 answer that is not the reply the
// contract promises: its outcome is unknown.
func badReply(r *request, rep *reply, at answered) error {
	return &Error{Request: r.describe(at.endpoint), Endpoint: at.endpoint, Code: -1, Status: 200, kind: ErrUnknown,
		Text: "the member's 200 answer is not a " + r.op.okType() + " with the contract's fields (type " + rep.Type + ")"}
}
