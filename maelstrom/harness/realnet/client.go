package realnet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/netns"
)

// The client side of the contract's section 3: a request body as the
// workload renders it ({"type": T, fields...}) becomes POST /v1/T with
// the fields alone; the answer's body is what the workload reads, as if
// the node had sent it over Maelstrom's protocol.

// maxReplyBytes bounds a reply body; the service's replies are small.
const maxReplyBytes = 1 << 20

// probeTimeout bounds one readiness probe.
const probeTimeout = time.Second

// newClients returns the harness's HTTP clients, both dialling from the
// lab's client namespace: one for the workers (connections kept alive,
// timeouts from each call's context) and one for readiness probes.
func (n *Network) newClients() (workers, probes *http.Client) {
	n.dials = &dials{ns: n.lab.Client()}
	dial := n.dials.DialContext
	// Idle connections close before the node's 30 s idle timeout, so a
	// request never races the node closing its end.
	workers = &http.Client{Transport: &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 64,
		IdleConnTimeout: 20 * time.Second, DisableCompression: true}}
	probes = &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	return workers, probes
}

// dials dials from the client namespace and keeps count, so that the lab
// is closed only once no dial is in flight: a dial enters the namespace
// on a thread of its own, and an HTTP transport dials on goroutines that
// outlive a cancelled request (netns: Close must come after the last use
// of the lab).
type dials struct {
	ns       *netns.Namespace
	mu       sync.Mutex
	closed   bool
	inFlight sync.WaitGroup
}

// dialTimeout bounds one dial; inside the lab a connect is answered at
// once (the client's packets are never dropped), so it only bounds the
// wait for the lab to close.
const dialTimeout = 2 * time.Second

var errClosing = errors.New("the real network is shutting down")

// DialContext dials address from the client namespace (http.Transport's
// DialContext), unless the lab is closing.
func (d *dials) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, errClosing
	}
	d.inFlight.Add(1)
	d.mu.Unlock()
	defer d.inFlight.Done()
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	return d.ns.DialContext(ctx, network, address)
}

// close refuses new dials and waits for those in flight.
func (d *dials) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.inFlight.Wait()
}

// client is one client identity of the harness (harness.Client): it
// numbers its requests from 1, as a Maelstrom client numbers its msg_id,
// and each reply body gets the request's number as in_reply_to, so that
// a workload reads it as it reads a Maelstrom reply. A call's reply is
// read within the call, so nothing can come late after Close.
type client struct {
	net       *Network
	lastMsgID atomic.Int64
}

// Call sends req to node as POST /v1/<type> and maps the answer (Reply,
// Unanswered), with in_reply_to added to the reply body.
// A node that refuses the connection (it is down) is dialled again every
// redialEvery until the call's time is up, as a Maelstrom client's
// message to a dead node waits out the timeout: a worker bound to a
// killed node does not spin through failures that starve the others of
// ops. If it never connected, nothing was sent: a definite failure.
func (c *client) Call(ctx context.Context, node string, req json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	if c.net.node(node) == nil {
		return nil, fmt.Errorf("no node %q in this run", node)
	}
	typ, body, err := SplitRequest(req)
	if err != nil {
		return nil, err
	}
	msgID := c.lastMsgID.Add(1)
	reply, err := c.send(ctx, node, typ, body, timeout)
	if reply != nil {
		reply, err = withInReplyTo(reply, msgID)
	}
	return reply, err
}

// send posts body to node's endpoint typ until it connects (at most
// until timeout) and maps the outcome.
func (c *client) send(ctx context.Context, node, typ string, body []byte, timeout time.Duration) (json.RawMessage, error) {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := c.net.clientURL(node) + "/v1/" + typ
	for {
		reply, err := c.post(callCtx, node, url, typ, body)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return reply, err
		}
		select {
		case <-time.After(redialEvery):
		case <-callCtx.Done():
			return Unanswered(node, err)
		}
	}
}

// withInReplyTo adds "in_reply_to": msgID to a reply object.
func withInReplyTo(reply json.RawMessage, msgID int64) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(reply, &fields); err != nil {
		return nil, fmt.Errorf("reply %.300q is not a JSON object: %w", reply, err)
	}
	fields["in_reply_to"] = json.RawMessage(strconv.FormatInt(msgID, 10))
	return json.Marshal(fields)
}

// redialEvery is how often a call dials a node that refused it again.
const redialEvery = 100 * time.Millisecond

// post makes one attempt: the mapped answer, or (nil, the transport's
// error) when the connection was refused.
func (c *client) post(ctx context.Context, node, url, typ string, body []byte) (json.RawMessage, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.net.http.Do(hreq)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return nil, err
	}
	if err == nil {
		var data []byte
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
		resp.Body.Close()
		if err == nil {
			return Reply(node, typ, resp.StatusCode, data)
		}
	}
	return Unanswered(node, err)
}

// Close retires the client; there is nothing to discard.
func (c *client) Close() {}

// SplitRequest turns a workload's request body into the endpoint's type
// and the HTTP body: the same object without "type" and "msg_id".
func SplitRequest(req json.RawMessage) (typ string, body []byte, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(req, &fields); err != nil {
		return "", nil, fmt.Errorf("request %s is not a JSON object: %w", req, err)
	}
	if err := json.Unmarshal(fields["type"], &typ); err != nil || typ == "" {
		return "", nil, fmt.Errorf("request %s has no type", req)
	}
	delete(fields, "type")
	delete(fields, "msg_id")
	body, err = json.Marshal(fields)
	return typ, body, err
}

// Reply maps an HTTP answer to the reply body the workloads understand,
// as the contract's section 3 maps error codes to statuses:
//
//	200                         the _ok body, as it is
//	409 with lease_grant_ok     a grant that left the chunk with the primary it names: ok, as a 200
//	400 401 404 405 409 413 503 the {type:"error",code,text} body, as it is (503 is code 11: fail)
//	504                         harness.ErrTimeout: the request may have taken effect (info)
//
// An answer that is not such a body (not JSON, no type, an error body
// with 200 or a success with an error status) is an error naming the node,
// the endpoint and the answer: the run fails, as it does on a line
// Maelstrom rejects.
func Reply(node, typ string, status int, data []byte) (json.RawMessage, error) {
	if status == http.StatusGatewayTimeout {
		return nil, fmt.Errorf("%w: node %s answered %s with HTTP 504 (its quorum timed out; the request may have taken effect)", harness.ErrTimeout, node, typ)
	}
	var b struct {
		Type string `json:"type"`
	}
	err := json.Unmarshal(data, &b)
	switch {
	case err != nil || b.Type == "":
		return nil, fmt.Errorf("node %s answered POST /v1/%s with HTTP %d and a body that is not a reply object with a type: %.300q", node, typ, status, data)
	case status == http.StatusConflict && typ == "lease_grant" && b.Type == "lease_grant_ok":
		return json.RawMessage(data), nil // the chunk stays with the primary the body names
	case (status == http.StatusOK) != (b.Type != "error"):
		return nil, fmt.Errorf("node %s answered POST /v1/%s with HTTP %d and a %q body: a success is 200, an error body any other status", node, typ, status, b.Type)
	}
	return json.RawMessage(data), nil
}

// Unanswered maps a request that got no HTTP answer. A refused
// connection sent nothing (the node is down, and stayed down for the
// call's time): a definite error 11, which the workloads record as fail. Anything else (a connection broken or
// reset after the request went out, no answer in time) may have taken
// effect: harness.ErrTimeout, info.
func Unanswered(node string, err error) (json.RawMessage, error) {
	if errors.Is(err, syscall.ECONNREFUSED) {
		text := fmt.Sprintf("node %s refused every connection until the client timeout (it is down); nothing was sent", node)
		body, _ := json.Marshal(struct {
			Type string `json:"type"`
			Code int    `json:"code"`
			Text string `json:"text"`
		}{"error", 11, text})
		return body, nil
	}
	return nil, fmt.Errorf("%w: no answer from node %s: %v", harness.ErrTimeout, node, err)
}
