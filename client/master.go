package client

import (
	"context"
	"time"
)

// The master requests (contract section 1, "Master lease") are about one
// node, not the cluster: a node starts or stops trying to hold the
// cluster-wide master lease for itself, and answers master_status from
// its own timer. So they go to the node named, once, without failover.
// node is one of the endpoints' URLs (or any member's client URL).

// MasterStatus is a node's master_status answer.
type MasterStatus struct {
	// Node is the endpoint that answered.
	Node string
	// IsMaster is true only while the node's own master lease is live by
	// its own timer.
	IsMaster bool
	// Master is the node the answering node last learned holds the master
	// lease (a node id such as "n1"); "" when it never learned one.
	Master string
	// RemainingMs is the answering node's remaining mastership; 0 when it
	// is not master.
	RemainingMs int64
	// Token is the master lease's fencing token while IsMaster (0
	// otherwise): strictly greater for each new mastership and each
	// renewal than any token an earlier master was told, so storage can
	// refuse a deposed master's actions (package fence).
	Token int64
	// Sent is when the answered request was sent (see Until).
	Sent time.Time
}

// Until is the believed end of the node's mastership on the caller's
// clock: Sent plus RemainingMs, less driftMargin (as Lease.Until). It is
// the zero Time when the node is not master.
func (m MasterStatus) Until(driftMargin time.Duration) time.Time {
	if !m.IsMaster {
		return time.Time{}
	}
	return m.Sent.Add(time.Duration(m.RemainingMs)*time.Millisecond - driftMargin)
}

// MasterStart makes node try to become and stay master (idempotent).
func (c *Client) MasterStart(ctx context.Context, node string) error {
	return c.masterCall(ctx, node, opMasterStart, nil)
}

// MasterStop makes node stop renewing the master lease and give it back
// if it holds it (idempotent).
func (c *Client) MasterStop(ctx context.Context, node string) error {
	return c.masterCall(ctx, node, opMasterStop, nil)
}

// MasterStatus asks node whether it is master, from its own state.
func (c *Client) MasterStatus(ctx context.Context, node string) (MasterStatus, error) {
	var rep reply
	at, err := c.masterCallAt(ctx, node, opMasterStatus, &rep)
	if err != nil {
		return MasterStatus{}, err
	}
	if rep.IsMaster && rep.Token <= 0 {
		return MasterStatus{}, &Error{Request: (&request{op: opMasterStatus}).describe(at.endpoint), Endpoint: at.endpoint, Code: -1, Status: 200, kind: ErrUnknown,
			Text: "the node says is_master without a token; a mastership that cannot be fenced is not one to act on (is the member older than the master lease's tokens?)"}
	}
	st := MasterStatus{Node: at.endpoint, IsMaster: rep.IsMaster, RemainingMs: rep.RemainingMs, Sent: at.sent}
	if rep.IsMaster {
		st.Token = rep.Token
	}
	if rep.Master != nil {
		st.Master = *rep.Master
	}
	return st, nil
}

func (c *Client) masterCall(ctx context.Context, node string, o op, rep *reply) error {
	if rep == nil {
		rep = new(reply)
	}
	_, err := c.masterCallAt(ctx, node, o, rep)
	return err
}

func (c *Client) masterCallAt(ctx context.Context, node string, o op, rep *reply) (answered, error) {
	r := request{op: o}
	at, err := c.callAt(ctx, node, &r, rep)
	if err == nil && rep.Type != o.okType() {
		err = badReply(&r, rep, at)
	}
	return at, err
}
