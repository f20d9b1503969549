package simnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"chunklease/maelstrom/harness"
)

// initAll sends every init at once and waits for all answers, a node
// failure or the user's interrupt.
func (n *Network) initAll(ctx context.Context, clients []*client) error {
	err := n.fail.AwaitEach(ctx, len(clients), func(ctx context.Context, i int) error {
		return n.initNode(ctx, clients[i], n.host.Nodes[i])
	})
	if ctx.Err() != nil {
		return harness.ErrInterrupted
	}
	return err
}

// initRequest is Maelstrom's init body.
type initRequest struct {
	Type    string   `json:"type"`
	NodeID  string   `json:"node_id"`
	NodeIDs []string `json:"node_ids"`
}

// initNode sends init to node id and checks the answer is init_ok.
func (n *Network) initNode(ctx context.Context, c *client, id string) error {
	req, _ := json.Marshal(initRequest{Type: "init", NodeID: id, NodeIDs: n.host.Nodes}) // strings always marshal
	reply, err := c.call(ctx, n.net, id, req, n.cfg.InitTimeout)
	var discarded *timeoutError
	switch {
	case errors.As(err, &discarded) && discarded.strays > 0:
		return fmt.Errorf("init failed: expected node %s to respond to an init message within %v with in_reply_to %d, but its %d message(s) to %s answer no request, the first: %s",
			id, n.cfg.InitTimeout, c.lastMsgID, discarded.strays, c.name, truncate(string(discarded.first), 300))
	case errors.Is(err, errTimeout):
		return fmt.Errorf("init failed: expected node %s to respond to an init message within %v, but it did not respond (does it read stdin line by line, and write each reply as one line to stdout, flushed?)", id, n.cfg.InitTimeout)
	case err != nil:
		return fmt.Errorf("init of node %s: %w", id, err)
	}
	var b struct {
		Type string          `json:"type"`
		Code json.RawMessage `json:"code"`
		Text json.RawMessage `json:"text"`
	}
	_ = json.Unmarshal(reply, &b) // the network only passes objects
	switch b.Type {
	case "init_ok":
		return nil
	case "error":
		return fmt.Errorf("init failed: node %s answered init with an error (code %s, text %s); it must answer init_ok", id, b.Code, b.Text)
	}
	return fmt.Errorf("init failed: node %s answered init with a %q message; it must answer {\"type\":\"init_ok\",\"in_reply_to\":1}: %s", id, b.Type, reply)
}
