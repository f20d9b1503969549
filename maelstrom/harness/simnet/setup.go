package simnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
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
		return n.initTimeoutError(id)
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

// initTimeoutError is the failure of a node that did not answer init in
// time. Maelstrom says only that the node did not respond; the two usual
// causes need different remedies, and what the program printed so far
// helps tell them apart: a slow start (a loaded machine, an interpreter
// that takes seconds to load) needs a longer --init-timeout, while a
// node that is up and still silent does not speak the protocol.
func (n *Network) initTimeoutError(id string) error {
	longer := strconv.FormatFloat(3*n.cfg.InitTimeout.Seconds(), 'f', -1, 64)
	return fmt.Errorf("init failed: expected node %s to respond to an init message within %v (--init-timeout), but it did not respond; %s.\n"+
		"  A node that starts slowly (a loaded machine, a slow interpreter) needs more time: rerun with --init-timeout %s.\n"+
		"  A node that is up must read stdin line by line and write each reply, init_ok included, as one line to stdout, flushed.",
		id, n.cfg.InitTimeout, n.printedSoFar(id), longer)
}

// printedSoFar says what node id's running program has printed: nothing
// at all hints at a slow start, lines at a node that is up.
func (n *Network) printedSoFar(id string) string {
	var inc *nodeproc.Incarnation
	for _, nd := range n.nodes {
		if nd.id == id {
			inc = nd.Current()
		}
	}
	if inc == nil {
		return "its program is not running"
	}
	out, errs := inc.StdoutTail(), inc.StderrTail()
	if len(out) == 0 && len(errs) == 0 {
		return "it has printed nothing on stdout or stderr yet"
	}
	var parts []string
	if len(out) > 0 {
		parts = append(parts, "its last stdout line: "+nodeproc.QuoteLine(out[len(out)-1]))
	} else {
		parts = append(parts, "nothing on stdout")
	}
	if len(errs) > 0 {
		parts = append(parts, "its last stderr line: "+nodeproc.QuoteLine(errs[len(errs)-1]))
	}
	return strings.Join(parts, "; ")
}
