package server

import (
	"bytes"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"chunklease/internal/jsonstr"
	"chunklease/internal/peer"
	"chunklease/lease"
)

// The client API (contract section 3): POST /v1/<type> with the message
// body of section 1 without type and msg_id; 200 with the reply body
// (with type, without in_reply_to and msg_id); errors as
// {type:"error",code,text} with the status of the table below.

// maxBodyBytes bounds a request body; a longer one is refused with 413.
const maxBodyBytes = 64 << 10

// refusal is one way the service says no: the Maelstrom code in the
// body, the HTTP status, and the outcome label of the metrics. core marks
// the rows a core error code maps to.
type refusal struct {
	code    int
	status  int
	outcome string
	core    bool
}

// refusals is the one table of the mapping.
var refusals = []refusal{
	{lease.CodeMalformedRequest, http.StatusBadRequest, "malformed", true},                 // 12: fix the request
	{lease.CodeNotSupported, http.StatusNotFound, "not_supported", true},                   // 10: no such endpoint
	{lease.CodePreconditionFailed, http.StatusConflict, "precondition_failed", true},       // 22: held by another server
	{lease.CodeTemporarilyUnavailable, http.StatusServiceUnavailable, "unavailable", true}, // 11: nothing happened; retry
	{lease.CodeTimeout, http.StatusGatewayTimeout, "timeout", true},                        // 0: may have happened
	{lease.CodeMalformedRequest, http.StatusUnauthorized, "unauthorized", false},           // missing or wrong bearer token
	{lease.CodeNotSupported, http.StatusMethodNotAllowed, "wrong_method", false},           // e.g. GET /v1/lease_grant
	{lease.CodeMalformedRequest, http.StatusRequestEntityTooLarge, "too_large", false},     // body over 64 KiB
}

// refusalFor returns the row of a core error code.
func refusalFor(code int) refusal {
	for _, r := range refusals {
		if r.core && r.code == code {
			return r
		}
	}
	return refusal{code: code, status: http.StatusInternalServerError, outcome: "unknown_code"}
}

// refusalWith returns the row of an HTTP-level refusal by status.
func refusalWith(status int) refusal {
	for _, r := range refusals {
		if r.status == status {
			return r
		}
	}
	panic(fmt.Sprintf("no refusal row for status %d", status))
}

// endpoints lists the client endpoints, for texts.
const endpoints = "POST /v1/lease_grant, /v1/lease_renew, /v1/lease_check, /v1/lease_release, /v1/batch, /v1/master_start, /v1/master_stop, /v1/master_status, /v1/member_list, /v1/member_add, /v1/member_remove; GET /healthz, /readyz, /metrics"

func (n *serveNode) newHTTPServer() *http.Server {
	s := &http.Server{
		Handler:           n,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// A request waits at most the quorum timeout in the core.
		WriteTimeout: time.Duration(n.cfg.node.QuorumTimeoutMs)*time.Millisecond + 10*time.Second,
		// An idle keep-alive connection holds a descriptor and about
		// 20 KiB: it is closed after 30 s (and sooner at the connection
		// limit, conns.go).
		IdleTimeout:    30 * time.Second,
		MaxHeaderBytes: 16 << 10,
		// HTTP/1.1 only, also over TLS.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     log.New(n.log.Writer(), n.log.Prefix()+"http: ", n.log.Flags()),
	}
	if n.cfg.clientCert != nil {
		s.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*n.cfg.clientCert}}
	}
	return s
}

// serveHTTP serves clients until the server is closed (then it returns
// http.ErrServerClosed).
func (n *serveNode) serveHTTP() error {
	if n.cfg.clientCert != nil {
		return n.http.ServeTLS(n.httpLn, "", "")
	}
	return n.http.Serve(n.httpLn)
}

// ServeHTTP routes every client request. While the node drains, every
// answer closes its connection (Connection: close), so that clients go
// to other members without a request cut on a closed connection.
func (n *serveNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if n.inflight.isDraining() {
		w.Header().Set("Connection", "close")
	}
	switch path := r.URL.Path; {
	case path == batchPath:
		n.serveBatch(w, r)
	case strings.HasPrefix(path, "/v1/"):
		n.serveV1(w, r, strings.TrimPrefix(path, "/v1/"))
	case path == "/healthz":
		if n.onlyGet(w, r) && n.begin(r) {
			writeJSON(w, http.StatusOK, []byte(`{"status":"up","node":`+string(jsonstr.Append(nil, n.cfg.id))+`}`))
		}
	case path == "/readyz":
		if n.onlyGet(w, r) && n.begin(r) {
			n.serveReady(w)
		}
	case path == "/metrics":
		if n.onlyGet(w, r) && n.authorized(w, r, "metrics") && n.begin(r) {
			n.metrics.handler.ServeHTTP(w, r)
		}
	default:
		n.refuse(w, "other", refusalFor(lease.CodeNotSupported), fmt.Sprintf("no endpoint %s; the endpoints are %s", path, endpoints))
	}
}

// begin marks r's connection busy, a complete request in hand, so that
// the connection limits never shed it (conns.go); false if the limiter
// shed it first: the request is not served (its connection is closed).
func (n *serveNode) begin(r *http.Request) bool { return n.conns == nil || n.conns.begin(r) }

func (n *serveNode) onlyGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	n.refuse(w, "other", refusalWith(http.StatusMethodNotAllowed), fmt.Sprintf("%s takes GET, not %s", r.URL.Path, r.Method))
	return false
}

// serveV1 serves one lease request: token, endpoint, method, body size,
// admission, decoding (the Maelstrom node's own, so the texts are the
// same), then the loop.
func (n *serveNode) serveV1(w http.ResponseWriter, r *http.Request, typ string) {
	start := n.clock.Now()
	op, known := lease.Ops[typ]
	label := typ
	if !known {
		label = "other"
	}
	switch {
	case !n.authorized(w, r, label):
		return
	case !known:
		n.refuse(w, label, refusalFor(lease.CodeNotSupported), fmt.Sprintf("%q is not a lease request type; the endpoints are %s", typ, endpoints))
		return
	}
	body, done, ok := n.openPost(w, r, label, fmt.Sprintf("/v1/%s takes POST with a JSON body", typ))
	if !ok {
		return
	}
	defer done()
	req, derr := lease.DecodeRequest(typ, body.bytes())
	if derr != nil {
		n.refuse(w, label, refusalFor(derr.Code), derr.Text)
		return
	}
	if op == lease.OpMemberAdd && req.Addr != "" {
		if err := checkHostPort(req.Addr); err != nil {
			n.refuse(w, label, refusalFor(lease.CodeMalformedRequest), "member_add: addr, the new member's peer address: "+err.Error())
			return
		}
		// The change asks the new member whether it is up: this node must
		// be able to reach it (and accept its certificate) before the
		// configuration that names it exists.
		n.peers.AddMember(peer.Member{ID: req.Member, Addr: req.Addr})
	}
	n.serveCall(w, r, op, req, start)
}

// openPost is the door of the POST endpoints after the token: the
// method (usage says what the endpoint takes), the body (at most
// maxBodyBytes) and a place among the requests in flight, refused while
// the node drains. When it answers a refusal ok is false; otherwise the
// caller calls done when the request is answered.
func (n *serveNode) openPost(w http.ResponseWriter, r *http.Request, label, usage string) (b *body, done func(), ok bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		n.refuse(w, label, refusalWith(http.StatusMethodNotAllowed), fmt.Sprintf("%s, not %s", usage, r.Method))
		return nil, nil, false
	}
	if b, ok = n.readBody(w, r, label); !ok {
		return nil, nil, false
	}
	if !n.begin(r) {
		putBody(b)
		return nil, nil, false
	}
	if !n.inflight.enter() {
		putBody(b)
		w.Header().Set("Connection", "close")
		n.refuse(w, label, refusalFor(lease.CodeTemporarilyUnavailable), fmt.Sprintf("node %s is shutting down; send the request to another member", n.cfg.id))
		return nil, nil, false
	}
	return b, func() { n.inflight.leave(); putBody(b) }, true
}

// serveCall hands the request to the loop and writes its answer.
func (n *serveNode) serveCall(w http.ResponseWriter, r *http.Request, op lease.Op, req lease.Request, start time.Duration) {
	c := callPool.Get().(*call)
	c.req = req
	if !n.call(c) {
		n.refuse(w, op.String(), refusalFor(lease.CodeTemporarilyUnavailable), "the node is stopping")
		return
	}
	if status, b, ok := n.awaitReply(r, op, c, start); ok {
		writeAnswer(w, status, b)
	}
}

// awaitReply waits for the core's reply to c and renders it. A client
// that leaves first is not waited for (ok false): the core still answers,
// into the call's buffered channel, and the call is left to the
// collector.
func (n *serveNode) awaitReply(r *http.Request, op lease.Op, c *call, start time.Duration) (status int, b []byte, ok bool) {
	select {
	case rep := <-c.done:
		server := c.req.Server
		callPool.Put(c)
		status, b = n.rendered(op, server, rep)
		n.metrics.observe(op, n.clock.Now()-start)
		return status, b, true
	case <-r.Context().Done():
		n.metrics.count(op.String(), "abandoned")
		return 0, nil, false
	case <-n.loopDone:
		// The drain's bound passed: the request may have gone out.
		status, b = n.refusal(op.String(), refusalFor(lease.CodeTimeout), "the node stopped before the request was decided; it may have taken effect")
		return status, b, true
	}
}

// rendered is the core's reply to a request for server as the client API
// answers it (status and body), counted in the metrics: the single
// endpoints and the batch endpoint answer alike. A grant that leaves the
// chunk with another server is 409 with its lease_grant_ok body naming
// the holder (heldStatus), so that a client reading only the status
// (curl --fail) sees the refusal.
func (n *serveNode) rendered(op lease.Op, server string, rep lease.Reply) (int, []byte) {
	if rep.Err != nil {
		if rep.Err.Code == lease.CodeTimeout || rep.Err.Code == lease.CodeTemporarilyUnavailable {
			n.metrics.quorumTimeout(rep.Err.Code)
		}
		status, b := n.refusal(op.String(), refusalFor(rep.Err.Code), rep.Err.Text)
		if rep.Err.RetryInMs > 0 {
			b = append(append(b[:len(b)-1], `,"retry_in_ms":`...), strconv.FormatInt(rep.Err.RetryInMs, 10)+"}"...)
		}
		return status, b
	}
	b, err := appendReply(make([]byte, 0, 128), rep.Type, rep.Body)
	if err != nil {
		n.log.Printf("cannot encode %s: %v", rep.Type, err)
		return n.refusal(op.String(), refusal{code: 13, status: http.StatusInternalServerError, outcome: "encode_error"}, "the reply could not be encoded")
	}
	if g, ok := rep.Body.(lease.GrantOK); ok && g.Primary != server {
		n.metrics.count(op.String(), "held")
		return heldStatus, b
	}
	n.metrics.count(op.String(), "ok")
	return http.StatusOK, b
}

// heldStatus answers a grant of a chunk another server holds: the
// status of a renew's error 22 (another server holds the chunk), with
// the grant's own reply as the body (primary names the holder, with its
// remaining time and token), as the Maelstrom node answers it.
const heldStatus = http.StatusConflict

// appendReply renders {"type":typ, ...body's fields}: the replies of
// grant, renew and check field by field (a busy member renders one per
// request; encoding/json's reflection cost more than the rest of the
// rendering), every other body through encoding/json. Both write the
// same bytes (TestAppendReplyAsJSON).
func appendReply(dst []byte, typ string, body any) ([]byte, error) {
	switch b := body.(type) {
	case lease.RenewOK:
		dst = appendType(dst, typ)
		dst = strconv.AppendInt(append(dst, `,"new_expires_in_ms":`...), b.NewExpiresInMs, 10)
		dst = strconv.AppendInt(append(dst, `,"token":`...), b.Token, 10)
		return append(dst, '}'), nil
	case lease.GrantOK:
		dst = appendType(dst, typ)
		dst = jsonstr.Append(append(dst, `,"chunk_handle":`...), b.ChunkHandle)
		dst = jsonstr.Append(append(dst, `,"primary":`...), b.Primary)
		dst = strconv.AppendInt(append(dst, `,"expires_in_ms":`...), b.ExpiresInMs, 10)
		dst = strconv.AppendInt(append(dst, `,"token":`...), b.Token, 10)
		return append(dst, '}'), nil
	case lease.CheckOK:
		dst = append(appendType(dst, typ), `,"primary":`...)
		if b.Primary == nil {
			dst = append(dst, "null"...)
		} else {
			dst = jsonstr.Append(dst, *b.Primary)
		}
		dst = strconv.AppendInt(append(dst, `,"remaining_ms":`...), b.RemainingMs, 10)
		dst = strconv.AppendBool(append(dst, `,"expired":`...), b.Expired)
		return append(dst, '}'), nil
	}
	return appendReplyJSON(dst, typ, body)
}

// appendType opens a reply: {"type":typ (the fields follow, each with its
// leading comma).
func appendType(dst []byte, typ string) []byte {
	return jsonstr.Append(append(dst, `{"type":`...), typ)
}

// appendReplyJSON renders a reply's body through encoding/json.
func appendReplyJSON(dst []byte, typ string, body any) ([]byte, error) {
	fields, err := json.Marshal(body)
	if err != nil || len(fields) < 2 || fields[0] != '{' {
		return nil, fmt.Errorf("reply body %T is not a JSON object (%v)", body, err)
	}
	dst = appendType(dst, typ)
	if len(fields) > 2 {
		dst = append(dst, ',')
	}
	return append(dst, fields[1:]...), nil
}

// refuse writes an error body with the row's status and counts it.
func (n *serveNode) refuse(w http.ResponseWriter, label string, rf refusal, text string) {
	status, b := n.refusal(label, rf, text)
	writeAnswer(w, status, b)
}

// refusal is the error body of a row, counted in the metrics.
func (n *serveNode) refusal(label string, rf refusal, text string) (int, []byte) {
	b := append([]byte(`{"type":"error","code":`), strconv.Itoa(rf.code)...)
	b = append(b, `,"text":`...)
	b = append(jsonstr.Append(b, text), '}')
	n.metrics.count(label, rf.outcome)
	return rf.status, b
}

// writeAnswer writes an answer; a 503 asks the client to wait a second
// before it sends this member more (Retry-After), and a refusal that says
// when asking again can succeed (retry_in_ms: a membership change during
// the waiting rule) gets that as Retry-After, in whole seconds, rounded up.
func writeAnswer(w http.ResponseWriter, status int, b []byte) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if ms := retryInMs(b); ms > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt((ms+999)/1000, 10))
	}
	writeJSON(w, status, b)
}

// retryInMs is the retry_in_ms an error body ends with (rendered above),
// or 0.
func retryInMs(b []byte) int64 {
	const key = `,"retry_in_ms":`
	i := bytes.LastIndex(b, []byte(key))
	if i < 0 || !bytes.HasSuffix(b, []byte("}")) {
		return 0
	}
	v, err := strconv.ParseInt(string(b[i+len(key):len(b)-1]), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// authorized checks the bearer token, when one is set, and refuses with
// 401 otherwise.
func (n *serveNode) authorized(w http.ResponseWriter, r *http.Request, label string) bool {
	if n.cfg.token == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	ok := len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") // the scheme is case-insensitive (RFC 9110)
	if ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h[7:])), []byte(n.cfg.token)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="chunklease"`)
	text := "this node asks for a bearer token: send the header Authorization: Bearer TOKEN"
	if ok {
		text = "the bearer token is wrong; send the cluster's client token"
	}
	n.refuse(w, label, refusalWith(http.StatusUnauthorized), text)
	return false
}

var jsonContentType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	w.Write(b)
}

// body is a request body read into a pooled buffer.
type body struct{ buf bytes.Buffer }

var bodyPool = sync.Pool{New: func() any { return new(body) }}

func putBody(b *body) {
	if b.buf.Cap() <= 2*maxBodyBytes {
		b.buf.Reset()
		bodyPool.Put(b)
	}
}

// bytes is the body, an empty one read as {} (master_start needs none).
func (b *body) bytes() []byte {
	if b.buf.Len() == 0 {
		return []byte("{}")
	}
	return b.buf.Bytes()
}

// readBody reads at most maxBodyBytes, refusing a longer body with 413.
func (n *serveNode) readBody(w http.ResponseWriter, r *http.Request, label string) (*body, bool) {
	tooLarge := fmt.Sprintf("the body is over %d KiB; a lease request is a small JSON object", maxBodyBytes>>10)
	if r.ContentLength > maxBodyBytes {
		n.refuse(w, label, refusalWith(http.StatusRequestEntityTooLarge), tooLarge)
		return nil, false
	}
	b := bodyPool.Get().(*body)
	_, err := b.buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		putBody(b)
		n.refuse(w, label, refusalWith(http.StatusRequestEntityTooLarge), tooLarge)
		return nil, false
	case err != nil:
		putBody(b)
		n.refuse(w, label, refusalFor(lease.CodeMalformedRequest), "reading the body failed: "+err.Error())
		return nil, false
	}
	return b, true
}

// serveReady answers /readyz: 200 once the boot wait is over, recovery
// no longer holds it back (it heard a majority's high-water marks and
// gave the others a round), and a majority of the acceptors (this node counted) answered
// a ping sent within the peer transport's readiness window (internal/peer
// liveness.go; 500 ms by default), else 503 with the reason.
func (n *serveNode) serveReady(w http.ResponseWriter) {
	ready, reason, reachable := n.readiness()
	conf := n.config.Load()
	b := append([]byte(`{"ready":`), strconv.FormatBool(ready)...)
	b = append(b, `,"node":`...)
	b = jsonstr.Append(b, n.cfg.id)
	b = append(b, `,"acceptors_reachable":`...)
	b = strconv.AppendInt(b, int64(reachable), 10)
	b = append(b, `,"acceptors_needed":`...)
	b = strconv.AppendInt(b, int64(len(conf.Members)/2+1), 10)
	b = append(b, `,"epoch":`...)
	b = strconv.AppendUint(b, conf.Epoch, 10)
	b = append(b, `,"members":`...)
	members, _ := json.Marshal(conf.Members)
	b = append(b, members...)
	b = append(b, `,"member":`...)
	b = strconv.AppendBool(b, slices.Contains(conf.Members, n.cfg.id))
	b = append(b, `,"window_ms":`...)
	b = strconv.AppendInt(b, n.peers.ReadyWindow().Milliseconds(), 10)
	if !ready {
		b = append(b, `,"reason":`...)
		b = jsonstr.Append(b, reason)
	}
	b = append(b, '}')
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, b)
}

// readiness counts as reachable the acceptors that answered a recent ping
// and are past their boot wait (their pongs say so): an acceptor in its
// boot wait answers no lease message, so it cannot make a majority. The
// acceptors are the members of the node's configuration (membership: the
// one it adopted last).
func (n *serveNode) readiness() (ready bool, reason string, reachable int) {
	booting := 0
	acceptors := n.config.Load().Members
	for _, a := range acceptors {
		switch {
		case n.peers.Serving(a):
			reachable++
		case n.peers.Reachable(a):
			booting++
		}
	}
	need := len(acceptors)/2 + 1
	switch left := n.bootUntil - n.clock.Now(); {
	case n.inflight.isDraining():
		return false, "shutting down", reachable
	case left > 0:
		return false, fmt.Sprintf("boot wait: the acceptor stays silent %d ms more", left.Milliseconds()+1), reachable
	case reachable < need:
		why := fmt.Sprintf("%d of the acceptors %v answered a ping within the last %v and serve (this node counted), %d needed: ",
			reachable, acceptors, n.peers.ReadyWindow(), need)
		if booting > 0 {
			why += fmt.Sprintf("%d more answered from their boot wait and serve once it ends; ", booting)
		}
		return false, why + "the others are down, paused or cut off", reachable
	case n.recovering() && n.cfg.node.Membership:
		return false, "recovering: the restarted acceptor has not yet learnt the configuration from n-q+1 members that did not restart " +
			"(membership: it votes once they answered; it asks again each round)", reachable
	case n.recovering():
		return false, "recovering: the acceptor is learning the ballot high-water marks of a majority of the acceptors (this node counted), and gives the others a round to answer", reachable
	}
	return true, "", reachable
}
