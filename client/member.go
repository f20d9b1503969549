package client

import (
	"context"
	"errors"
	"slices"
)

// The membership requests (docs/service.md, "Replacing a member"): the
// acceptor set of a cluster started with -membership on changes one
// member at a time. A change is agreed by a majority of the current
// members and answered once it is in force; the next change can start
// only after the waiting rule (every lease the previous configuration
// could have granted has run out), NextChangeInMs.

// Membership is a configuration of the acceptor set as a member answered
// it.
type Membership struct {
	// Epoch counts changes: 0 is the set the cluster was started with.
	Epoch uint64
	// Members are the voting members, in the order they joined.
	Members []string
	// NextChangeInMs is how long until the next change can start, by the
	// answering member's waiting rule (0: now).
	NextChangeInMs int64
	// Addrs are the peer addresses of members added at run time.
	Addrs map[string]string
	// Endpoint is the member that answered.
	Endpoint string
}

// Has reports whether id is a member.
func (m Membership) Has(id string) bool { return slices.Contains(m.Members, id) }

// ErrChangeRefused: a membership change was refused (409): another change
// is waiting out its waiting rule (Error.RetryInMs says how long),
// another change won the epoch, or the new configuration would have no
// majority of members up (force it only if you know better).
var ErrChangeRefused = errors.New("membership change refused")

// Members asks a member for the configuration it holds (any member; with
// failover).
func (c *Client) Members(ctx context.Context) (Membership, error) {
	return c.member(ctx, request{op: opMemberList})
}

// AddMember adds node id to the acceptor set. addr is its peer address
// (host:port), needed when the members were not started with id in their
// -cluster list; "" otherwise. A node that is already a member is not an
// error: the answer is the configuration. Unless force, a change whose
// new configuration would not have a majority of members that answered
// is refused.
func (c *Client) AddMember(ctx context.Context, id, addr string, force bool) (Membership, error) {
	return c.member(ctx, request{op: opMemberAdd, member: id, addr: addr, force: force})
}

// RemoveMember removes node id from the acceptor set (a dead member
// first: see docs/service.md). A node that is not a member is not an
// error.
func (c *Client) RemoveMember(ctx context.Context, id string, force bool) (Membership, error) {
	return c.member(ctx, request{op: opMemberRemove, member: id, force: force})
}

func (c *Client) member(ctx context.Context, r request) (Membership, error) {
	var rep reply
	at, err := c.call(ctx, &r, &rep)
	if err != nil {
		var e *Error
		if r.op != opMemberList && errors.As(err, &e) && e.Status == 409 {
			e.kind = ErrChangeRefused
		}
		return Membership{}, err
	}
	if rep.Type != r.op.okType() || len(rep.Members) == 0 {
		return Membership{}, badReply(&r, &rep, at)
	}
	return Membership{Epoch: rep.Epoch, Members: rep.Members, NextChangeInMs: rep.NextChangeInMs, Addrs: rep.Addrs, Endpoint: at.endpoint}, nil
}
