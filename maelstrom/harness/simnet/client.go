package simnet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/netsim"
)

// InitTimeout is how long a node has to answer init by default, as in
// Maelstrom (maelstrom-spec D.4); Config.InitTimeout (--init-timeout)
// changes it.
const InitTimeout = 10 * time.Second

// errTimeout is a request whose reply did not come in time: the
// runner's harness.ErrTimeout.
var errTimeout = harness.ErrTimeout

// timeoutError is errTimeout with the messages the client discarded while
// it waited: a node that answers with the wrong in_reply_to looks silent
// otherwise.
type timeoutError struct {
	strays int             // messages that answered no request in flight
	first  json.RawMessage // the first of them
}

func (e *timeoutError) Error() string {
	if e.strays == 0 {
		return errTimeout.Error()
	}
	return fmt.Sprintf("%v; meanwhile %d message(s) came that answer no request in flight, the first: %s", errTimeout, e.strays, truncate(string(e.first), 300))
}

// Is makes errors.Is(err, errTimeout) hold.
func (e *timeoutError) Is(target error) bool { return target == errTimeout }

// client is one Maelstrom client c<k>: its own msg_id counter from 1 and
// at most one request in flight (the caller's loop guarantees it). stray,
// when set, hears of every message it discards.
type client struct {
	name      string
	lastMsgID int64
	stray     func(client string, msgID int64, m netsim.Message)
	owner     *Network
}

// call sends one request from c to dest and waits up to timeout for the
// reply whose in_reply_to equals the request's msg_id (a JSON integer).
// Every other message the client receives is discarded, as Maelstrom's
// client does: stale replies, duplicates, unsolicited messages. It
// returns an error that is errTimeout (a *timeoutError, naming what was
// discarded) when no reply came, and ctx's error when the run is being
// aborted.
func (c *client) call(ctx context.Context, net *network, dest string, req json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	c.lastMsgID++
	msgID := c.lastMsgID
	body, err := withMsgID(req, msgID)
	if err != nil {
		return nil, err
	}
	if _, err := net.Send(c.name, dest, body); err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var discarded timeoutError
	for {
		m, err := net.Recv(waitCtx, c.name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, &discarded
			}
			return nil, err
		}
		if repliesTo(m.Body, msgID) {
			return m.Body, nil
		}
		if discarded.strays++; discarded.first == nil {
			discarded.first = m.Body
		}
		if c.stray != nil {
			c.stray(c.name, msgID, m)
		}
	}
}

// withMsgID adds "msg_id" to a request body (a JSON object), keeping the
// workload's key order.
func withMsgID(req json.RawMessage, msgID int64) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, req); err != nil || kindOf(buf.Bytes()) != "object" {
		return nil, fmt.Errorf("workload request is not a JSON object: %s", req)
	}
	obj := buf.Bytes()
	out := append([]byte{}, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"msg_id":`...)
	out = strconv.AppendInt(out, msgID, 10)
	return append(out, '}'), nil
}

// repliesTo reports whether body's in_reply_to is the JSON integer msgID
// (1.0, "1" and null do not match, as with Maelstrom's Clojure =).
func repliesTo(body json.RawMessage, msgID int64) bool {
	var b struct {
		InReplyTo json.RawMessage `json:"in_reply_to"`
	}
	if json.Unmarshal(body, &b) != nil || !isJSONInt(b.InReplyTo) {
		return false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b.InReplyTo)), 10, 64)
	return err == nil && n == msgID
}

// truncate cuts s to n runes, marking the cut, for lines quoted in
// messages.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// newClient opens the next client c<k>.
func (n *Network) newClient() *client {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := &client{name: fmt.Sprintf("c%d", n.nextClient), stray: n.noteStray, owner: n}
	n.nextClient++
	n.opened[c.name] = time.Now()
	n.net.Register(c.name)
	n.clients = append(n.clients, c)
	return c
}

// Call is a request as the runner makes it (harness.Client); a timeout is
// harness.ErrTimeout.
func (c *client) Call(ctx context.Context, node string, req json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	return c.call(ctx, c.owner.net, node, req, timeout)
}

// Close closes the client: later replies to it are a node error (or
// dropped, when their node was paused: lateReply).
func (c *client) Close() {
	n := c.owner
	n.mu.Lock()
	defer n.mu.Unlock()
	if i := slices.Index(n.clients, c); i >= 0 {
		n.net.Close(c.name)
		n.clients = slices.Delete(n.clients, i, i+1)
	}
}

// noteStray counts a message a client discarded because it answers no
// request in flight (a stale reply, a duplicate, a wrong in_reply_to) and
// warns on the first: Maelstrom's clients discard them silently, but a
// node whose every reply is discarded otherwise looks merely silent.
func (n *Network) noteStray(client string, msgID int64, m netsim.Message) {
	if n.strays.Add(1) == 1 {
		n.host.Log(fmt.Sprintf("maelstrom: warning: %s discarded a message from %s that answers no request in flight (its request is msg_id %d): %s; "+
			"Maelstrom's clients discard these too (results.json net.stray_replies counts them)", client, m.Src, msgID, truncate(string(m.Body), 300)))
	}
}

// lateReply is nodeConfig.lateReply: a reply to a closed client is a
// pause's doing when the node was paused at some time after the client
// was opened (the request, or the reply, waited in a stopped process).
// Such replies are dropped and counted; any other is judged.
func (n *Network) lateReply(nd *node, client string) bool {
	n.mu.Lock()
	opened, ok := n.opened[client]
	n.mu.Unlock()
	if !ok || !nd.PausedSince(opened) {
		return false
	}
	n.lateReplies.Add(1)
	return true
}
