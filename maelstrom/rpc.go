package maelstrom

import (
	"errors"
	"fmt"
	"time"

	"chunklease/internal/shrink"
)

// ErrTimeout is what an RPC callback receives (wrapped, test with
// errors.Is) when no matching reply arrived before the deadline. The
// request may or may not have been processed.
var ErrTimeout = errors.New("maelstrom: RPC timed out")

// services are Maelstrom's built-in service nodes, valid destinations
// besides node_ids (spec §A.9).
var services = map[string]bool{"lin-kv": true, "seq-kv": true, "lww-kv": true, "lin-tso": true}

// pendingRPC is one request awaiting its reply. It leaves the pending table
// exactly once: at a matching reply or at its deadline, whichever is first.
type pendingRPC struct {
	dest     string
	cb       func(reply Message, err error)
	deadline *timer
}

// RPC sends a request of type typ with fields (as for Reply) to dest and
// calls cb exactly once, on the loop: with the reply and a nil error; with
// the reply and its *Error when the reply is an error body; or with a zero
// Message and an error wrapping ErrTimeout when no reply came within
// timeout. A reply matches when its in_reply_to is this request's msg_id
// AND its src is dest; anything else leaves the request pending.
//
// RPC returns an error, and cb is never called, when the node is not
// initialised, timeout <= 0 (nothing waits forever), cb is nil, dest is not
// in node_ids nor a Maelstrom service (sending to an unknown id silences the
// node under Maelstrom), or the fields cannot be encoded.
func (n *Node) RPC(dest, typ string, fields any, timeout time.Duration, cb func(reply Message, err error)) error {
	if timeout <= 0 || cb == nil {
		return fmt.Errorf("maelstrom: RPC %s to %s needs a timeout > 0 (got %v) and a callback", typ, dest, timeout)
	}
	inner, err := n.prepareSend(dest, typ, fields)
	if err != nil {
		return err
	}
	id := n.write(n.id, dest, typ, 0, false, inner)
	p := &pendingRPC{dest: dest, cb: cb}
	p.deadline = n.addTimer(n.deadlineAfter(timeout), func() {
		n.forget(id)
		cb(Message{}, fmt.Errorf("%w: %s to %s (msg_id %d) got no reply within %v", ErrTimeout, typ, dest, id, timeout))
	})
	n.pending[id] = p
	n.pending = shrink.Map(n.pending, &n.pendingPeak)
	return nil
}

// Send sends a message that expects no reply (it still carries a msg_id
// from the node's counter). Errors as for RPC.
func (n *Node) Send(dest, typ string, fields any) error {
	inner, err := n.prepareSend(dest, typ, fields)
	if err != nil {
		return err
	}
	n.write(n.id, dest, typ, 0, false, inner)
	return nil
}

func (n *Node) prepareSend(dest, typ string, fields any) ([]byte, error) {
	switch {
	case n.id == "":
		return nil, fmt.Errorf("maelstrom: cannot send %s to %s before init: the node has no id yet", typ, dest)
	case typ == "":
		return nil, fmt.Errorf("maelstrom: message to %s needs a type", dest)
	case !n.peers[dest] && !services[dest]:
		return nil, fmt.Errorf("maelstrom: cannot send %s to %q: not in node_ids %v nor a Maelstrom service", typ, dest, n.nodeIDs)
	}
	inner, err := fieldsInner(fields)
	if err != nil {
		return nil, fmt.Errorf("maelstrom: %s to %s: %w", typ, dest, err)
	}
	return inner, nil
}

// handleReply hands a reply to its pending RPC, or logs and drops it. An
// unmatched reply is never answered: answering replies invites reply loops.
func (n *Node) handleReply(m Message) {
	p, ok := n.pending[m.InReplyTo]
	if !ok {
		n.Logf("dropped %s from %s in_reply_to %d: no pending request (late, duplicate or unsolicited)", typeName(m), m.Src, m.InReplyTo)
		return
	}
	if p.dest != m.Src {
		n.Logf("dropped %s from %s in_reply_to %d: that request went to %s", typeName(m), m.Src, m.InReplyTo, p.dest)
		return
	}
	n.forget(m.InReplyTo)
	n.removeTimer(p.deadline)
	if e := m.Err(); e != nil {
		p.cb(m, e)
		return
	}
	p.cb(m, nil)
}

// forget removes a pending RPC; after a burst of RPCs the table gives its
// memory back (internal/shrink).
func (n *Node) forget(id int64) {
	delete(n.pending, id)
	n.pending = shrink.Map(n.pending, &n.pendingPeak)
}
