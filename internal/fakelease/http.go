package fakelease

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const maxBodyBytes = 64 << 10

var opsKnown = map[string]bool{
	"lease_grant": true, "lease_renew": true, "lease_check": true, "lease_release": true,
	"master_start": true, "master_stop": true, "master_status": true,
}

// ServeHTTP is the client API of contract section 3.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.c.handlers.Add(1)
	defer n.c.handlers.Done()
	n.mu.Lock()
	killed := n.killed
	n.mu.Unlock()
	op, _ := strings.CutPrefix(r.URL.Path, "/v1/")
	call := Call{Node: n.ID, Op: op, Received: time.Now()}
	early := func(a answer) {
		call.At, call.Status = call.Received, a.status
		n.c.logCall(call) // before the answer: a client that has it finds it logged
		writeAnswer(w, a)
	}
	if tok := n.c.opts.Token; tok != "" && r.Header.Get("Authorization") != "Bearer "+tok {
		early(refuse(401, 12, "this node asks for a bearer token: send the header Authorization: Bearer TOKEN"))
		return
	}
	if !opsKnown[op] && !(op == "batch" && n.c.opts.Batch) {
		early(refuse(404, 10, "no endpoint %s", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		early(refuse(405, 10, "/v1/%s takes POST with a JSON body, not %s", op, r.Method))
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		early(refuse(413, 12, "the body is over 64 KiB; a lease request is a small JSON object"))
		return
	}
	if err != nil {
		n.c.logCall(call)
		return
	}
	if op == "batch" {
		n.serveBatch(w, r, b, killed, &call)
		return
	}
	n.serveOp(w, r, op, b, killed, &call)
}

// serveBatch serves POST /v1/batch as a member does: each call answered
// as its own endpoint would, in order. A fault for op "batch" meets the
// request as a whole (Apply performs every call before it), and so do the
// member's latencies (its answer leaves DelayOut after the calls were
// performed).
func (n *Node) serveBatch(w http.ResponseWriter, r *http.Request, b []byte, killed <-chan struct{}, call *Call) {
	var calls []struct {
		Op   string          `json:"op"`
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(b, &calls); err != nil || len(calls) == 0 {
		n.answer(w, call, refuse(400, 12, "/v1/batch takes a JSON array of calls"))
		return
	}
	call.Calls = len(calls)
	for _, bc := range calls {
		var body struct {
			ChunkHandle string `json:"chunk_handle"`
		}
		json.Unmarshal(bc.Body, &body) // a call without one is refused below
		call.Chunks = append(call.Chunks, body.ChunkHandle)
	}
	f := n.takeFault("batch")
	if !n.pause(f.DelayIn, killed, r.Context().Done()) {
		n.c.logCall(*call)
		return
	}
	results := make([]answer, len(calls))
	if (f.Status == 0 && !f.Reset) || f.Apply {
		for i, bc := range calls {
			c := Call{Node: n.ID, Op: bc.Op, Received: call.Received, At: time.Now(), Batched: true}
			if opsKnown[bc.Op] && !strings.HasPrefix(bc.Op, "master_") {
				results[i] = n.decideAndPerform(bc.Op, bc.Body, &c)
			} else {
				results[i] = refuse(404, 10, "%q is not a lease call a batch can carry", bc.Op)
			}
			c.Status = results[i].status
			n.c.logCall(c)
		}
	}
	if !n.pause(f.DelayOut, killed, r.Context().Done()) {
		n.c.logCall(*call)
		return
	}
	call.At = time.Now()
	out := make([]map[string]any, len(results))
	for i, a := range results {
		out[i] = map[string]any{"status": a.status, "body": a.body}
	}
	all := answer{status: 200, body: map[string]any{"results": out}}
	switch {
	case f.Reset:
		call.Cut = true
		n.c.logCall(*call)
		reset(w)
	case f.BreakOff:
		call.Status, call.Cut = all.status, true
		n.c.logCall(*call)
		breakOff(w, all)
	case f.Status != 0:
		if f.Status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		n.answer(w, call, refuse(f.Status, 13, "injected failure %d", f.Status))
	default:
		n.answer(w, call, all)
	}
}

// serveOp meets the request's fault, performs it and answers. The call
// is logged before the answer is written (or the connection cut), so a
// client that has the answer finds the call in the log.
func (n *Node) serveOp(w http.ResponseWriter, r *http.Request, op string, b []byte, killed <-chan struct{}, call *Call) {
	f := n.takeFault(op)
	gone := r.Context().Done()
	if !n.pause(f.DelayIn, killed, gone) {
		n.c.logCall(*call)
		return
	}
	call.At = time.Now()
	if f.Status == http.StatusServiceUnavailable && !f.Apply {
		ra := f.RetryAfter
		if ra == "" {
			ra = "1"
		}
		w.Header().Set("Retry-After", ra)
		n.answer(w, call, refuse(503, 11, "no majority answered in time; nothing was done"))
		return
	}
	var ans answer
	if (f.Status == 0 && !f.Reset) || f.Apply {
		ans = n.decideAndPerform(op, b, call)
	}
	if !n.pause(f.DelayOut, killed, gone) {
		n.c.logCall(*call)
		return
	}
	switch {
	case f.Reset:
		call.Cut = true
		n.c.logCall(*call)
		reset(w)
	case f.BreakOff:
		call.Status, call.Cut = ans.status, true
		n.c.logCall(*call)
		breakOff(w, ans)
	case f.Status == http.StatusGatewayTimeout:
		n.answer(w, call, refuse(504, 0, "the proposes went out but no majority answered in time; the request may have taken effect"))
	case f.Status != 0:
		n.answer(w, call, refuse(f.Status, 13, "injected failure %d", f.Status))
	default:
		n.answer(w, call, ans)
	}
}

// answer logs the call with the answer's status, then writes it.
func (n *Node) answer(w http.ResponseWriter, call *Call, a answer) {
	call.Status = a.status
	n.c.logCall(*call)
	writeAnswer(w, a)
}

// decideAndPerform decodes b and applies it to the model.
func (n *Node) decideAndPerform(op string, b []byte, call *Call) answer {
	q, bad := decode(op, b, n.c.opts.MaxLeaseMs)
	if bad != nil {
		return *bad
	}
	call.Chunk, call.Server, call.LeaseMs, call.Token = q.chunk, q.server, q.leaseMs, q.token
	c := n.c
	c.mu.Lock()
	defer c.mu.Unlock()
	ans := c.perform(n, q, time.Now())
	if ans.status == 200 {
		call.Applied = true
		if tok, ok := ans.body["token"].(int64); ok && op != "lease_release" {
			call.Token = tok
		}
	}
	return ans
}

// decode reads a request body as the real node does (same rules, shorter
// texts).
func decode(op string, b []byte, maxLeaseMs int64) (req, *answer) {
	var f struct {
		ChunkHandle *string `json:"chunk_handle"`
		Server      *string `json:"server"`
		LeaseMs     *int64  `json:"lease_ms"`
		Token       *int64  `json:"token"`
	}
	if len(b) == 0 {
		b = []byte("{}")
	}
	bad := func(format string, args ...any) (req, *answer) {
		a := refuse(400, 12, format, args...)
		return req{}, &a
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return bad("the body is not a JSON object with the request's fields: %v", err)
	}
	q := req{op: op}
	if strings.HasPrefix(op, "master_") {
		return q, nil
	}
	if f.ChunkHandle == nil || *f.ChunkHandle == "" {
		return bad("%s needs chunk_handle, a non-empty string", op)
	}
	q.chunk = *f.ChunkHandle
	if op != "lease_check" {
		if f.Server == nil || *f.Server == "" {
			return bad("%s needs server, a non-empty string", op)
		}
		q.server = *f.Server
	}
	if f.LeaseMs != nil {
		if *f.LeaseMs <= 0 || *f.LeaseMs > maxLeaseMs {
			return bad("lease_ms %d is out of range: give 1..%d ms, or leave it out for the default", *f.LeaseMs, maxLeaseMs)
		}
		q.leaseMs = *f.LeaseMs
	}
	if f.Token != nil {
		q.token, q.hasToken = *f.Token, true
	}
	return q, nil
}

func writeAnswer(w http.ResponseWriter, a answer) {
	b, err := json.Marshal(a.body)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	w.Write(b)
}

// breakOff writes the status line, the headers with the whole body's
// Content-Length and the first half of the body, then closes the
// connection: the client sees the answer start and break off.
func breakOff(w http.ResponseWriter, a answer) {
	b, err := json.Marshal(a.body)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(a.status)
	w.Write(b[:len(b)/2])
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	conn.Close()
}

// reset cuts the client's connection: an RST on TCP, a close on a pipe.
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	conn.Close()
}
