package maelstrom

import (
	"errors"
	"fmt"
	"strconv"
)

// Reply answers req with a body of type typ and the given fields: a struct
// with json tags, a map, json.RawMessage, or nil for none. The fields are
// spliced between "type"/"in_reply_to" and "msg_id" in the order they
// encode. A request is answered at most once.
//
// Reply returns an error, also logged, and sends nothing when: typ is empty
// or "error" (use ReplyError); fields do not encode as a JSON object or
// contain a reserved key; req was not delivered to a handler by this node;
// req has no msg_id (nothing could match the answer); req was already
// answered; or req came from a Maelstrom client longer ago than the stale
// age (the client has given up, and answering a closed client silences the
// node under Maelstrom). Callers may ignore the error.
func (n *Node) Reply(req Message, typ string, fields any) error {
	if typ == "" || typ == "error" {
		err := fmt.Errorf("maelstrom: reply type %q refused: use a non-empty type, and ReplyError for errors", typ)
		n.Logf("%v", err)
		return err
	}
	inner, err := fieldsInner(fields)
	if err != nil {
		err = fmt.Errorf("maelstrom: reply %s to %s: %w", typ, req.Src, err)
		n.Logf("%v", err)
		return err
	}
	return n.sendReply(n.id, req, typ, inner)
}

// ReplyError answers req with Maelstrom's error body
// {"type":"error","in_reply_to":..,"code":..,"text":..,"msg_id":..}, under
// the same rules as Reply.
func (n *Node) ReplyError(req Message, code Code, text string) error {
	return n.sendError(n.id, req, &Error{Code: code, Text: text})
}

func (n *Node) sendError(src string, req Message, e *Error) error {
	inner := append([]byte(`"code":`), strconv.Itoa(int(e.Code))...)
	inner = append(inner, `,"text":`...)
	inner = appendString(inner, e.Text)
	return n.sendReply(src, req, "error", inner)
}

// sendReply enforces the reply rules and writes the reply from src.
func (n *Node) sendReply(src string, req Message, typ string, inner []byte) error {
	var err error
	switch {
	case req.reply == nil:
		err = errors.New("the message was not delivered to a handler by this node, or is itself a reply")
	case !req.HasMsgID:
		err = errors.New("the request has no msg_id, so no answer could be matched to it")
	case req.reply.replied:
		err = errors.New("the request was already answered")
	case n.stale(req):
		req.reply.replied = true
		err = fmt.Errorf("the request is %v old, past the stale age %v: its client has given up",
			n.Now()-req.receivedAt, n.cfg.staleClientAge)
	}
	if err != nil {
		err = fmt.Errorf("maelstrom: dropped %s to %s answering %s: %w", typ, req.Src, describe(req), err)
		n.Logf("%v", err)
		return err
	}
	req.reply.replied = true
	n.write(src, req.Src, typ, req.MsgID, true, inner)
	return nil
}

// stale reports whether req came from a Maelstrom client (a "c..." id that is
// not one of the nodes) longer ago than the stale age.
func (n *Node) stale(req Message) bool {
	if n.cfg.staleClientAge <= 0 || !n.isClient(req.Src) {
		return false
	}
	return n.Now()-req.receivedAt > n.cfg.staleClientAge
}

func (n *Node) isClient(id string) bool {
	return len(id) > 0 && id[0] == 'c' && !n.peers[id]
}

// write numbers one line from the node's single counter and queues it. It
// is the only place a line is produced, so msg_ids on stdout are 0, 1, 2...
// in line order.
func (n *Node) write(src, dest, typ string, inReplyTo int64, hasInReplyTo bool, inner []byte) int64 {
	id := n.nextMsgID
	n.nextMsgID++
	line := make([]byte, 0, 96+len(src)+len(dest)+len(typ)+len(inner))
	n.writer.push(appendLine(line, src, dest, typ, inReplyTo, hasInReplyTo, inner, id))
	return id
}
