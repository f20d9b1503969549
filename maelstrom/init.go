package maelstrom

import (
	"errors"
	"slices"
)

// initBody is Maelstrom's init request: {"type":"init","node_id":"n3",
// "node_ids":["n1","n2","n3"],"msg_id":1}.
type initBody struct {
	NodeID  *string  `json:"node_id"`
	NodeIDs []string `json:"node_ids"`
}

// handleInit records the node's identity, runs the init hook and answers
// init_ok. A repeated init with the same identity is answered init_ok again
// without running the hook (a retransmission); one with another identity is
// refused with CodePreconditionFailed, because a node's id never changes.
func (n *Node) handleInit(m Message) {
	src := n.id
	if src == "" {
		src = m.Dest // no identity yet: answer as the address we were reached at
	}
	m.reply = &replyState{}
	nodeID, nodeIDs, err := decodeInit(m)
	if err != nil {
		_ = n.sendError(src, m, asError(err))
		return
	}
	if n.id != "" {
		if nodeID != n.id || !slices.Equal(nodeIDs, n.nodeIDs) {
			_ = n.sendError(src, m, Errorf(CodePreconditionFailed,
				"already initialised as %s of %v; a node's identity cannot change (got %s of %v)", n.id, n.nodeIDs, nodeID, nodeIDs))
			return
		}
		_ = n.sendReply(n.id, m, "init_ok", nil)
		return
	}
	n.setIdentity(nodeID, nodeIDs)
	n.startProfile()
	if n.initHook != nil {
		if err := n.initHook(); err != nil {
			n.setIdentity("", nil)
			_ = n.sendError(src, m, &Error{Code: CodeMalformedRequest, Text: errorText(err)})
			n.Logf("init hook failed, node stays uninitialised: %v", err)
			return
		}
	}
	_ = n.sendReply(n.id, m, "init_ok", nil)
}

func (n *Node) setIdentity(id string, ids []string) {
	n.id, n.nodeIDs = id, ids
	n.peers = make(map[string]bool, len(ids))
	for _, p := range ids {
		n.peers[p] = true
	}
}

// decodeInit checks init's fields: node_id a non-empty string, node_ids a
// list of distinct non-empty strings that contains node_id.
func decodeInit(m Message) (string, []string, error) {
	var b initBody
	if err := m.DecodeBody(&b); err != nil {
		return "", nil, err
	}
	if b.NodeID == nil || *b.NodeID == "" {
		return "", nil, Errorf(CodeMalformedRequest, `init needs "node_id", a non-empty string`)
	}
	if len(b.NodeIDs) == 0 {
		return "", nil, Errorf(CodeMalformedRequest, `init needs "node_ids", a non-empty list of node ids`)
	}
	seen := make(map[string]bool, len(b.NodeIDs))
	for _, id := range b.NodeIDs {
		if id == "" || seen[id] {
			return "", nil, Errorf(CodeMalformedRequest, "init node_ids %q must be distinct non-empty ids", b.NodeIDs)
		}
		seen[id] = true
	}
	if !seen[*b.NodeID] {
		return "", nil, Errorf(CodeMalformedRequest, "init node_ids %q does not contain node_id %q", b.NodeIDs, *b.NodeID)
	}
	return *b.NodeID, b.NodeIDs, nil
}

// errorText is an error's text without the code prefix *Error adds.
func errorText(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Text
	}
	return err.Error()
}
