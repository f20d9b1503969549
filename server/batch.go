package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"chunklease/lease"
)

// The batch endpoint: POST /v1/batch carries several lease calls in one
// HTTP request, and answers each as its own endpoint would. It exists for
// throughput: on loopback the HTTP request and its answer (a read and a
// write system call on each side, header parsing, a goroutine hand-off)
// cost more CPU than the lease round itself, and a client with many calls
// in flight (the client package's batching, client/batch.go) pays them
// once for all. Each call is submitted to its chunk's loop at once (the
// calls for one loop as one event, member.submit), so the calls of a
// batch run concurrently, as separate requests would; nothing about one
// call's outcome depends on another's.
//
// Request: a JSON array of {"op": "lease_grant" | "lease_renew" |
// "lease_check" | "lease_release", "body": <that endpoint's body>}, 1 to
// maxBatchCalls calls, within the body limit of every endpoint. Answer:
// 200 with {"results": [{"status": S, "body": B}, ...]}, in the calls'
// order, where S and B are the status and body that POST /v1/<op> would
// have answered (a 503 result carries "retry_after_s": 1, the endpoint's
// Retry-After). The request as a whole is refused as any endpoint's is:
// 401, 405, 413, 400 (not such an array), 503 (the node is draining).
// The master calls are not batched: they are about the node that answers.

const (
	batchPath = "/v1/batch"
	// maxBatchCalls bounds the calls of one batch; the client package
	// sends at most maxBatch (client/batch.go), far fewer.
	maxBatchCalls = 256
)

// batchCall is one call of a batch request.
type batchCall struct {
	Op   string          `json:"op"`
	Body json.RawMessage `json:"body"`
}

// batchEntry is one call of a batch as it is served: the call submitted
// to the loop, or the answer already decided (a refused call).
type batchEntry struct {
	op     lease.Op
	c      *call
	status int
	body   []byte
}

func (n *serveNode) serveBatch(w http.ResponseWriter, r *http.Request) {
	const label = "batch"
	start := n.clock.Now()
	switch {
	case !n.authorized(w, r, label):
		return
	}
	body, done, ok := n.openPost(w, r, label, batchPath+" takes POST with a JSON array of calls")
	if !ok {
		return
	}
	defer done()
	calls, err := decodeBatchCalls(body.bytes())
	if err != nil || len(calls) == 0 || len(calls) > maxBatchCalls {
		text := fmt.Sprintf("%s takes a JSON array of 1 to %d calls, each {\"op\": \"lease_grant\", \"body\": {...}}", batchPath, maxBatchCalls)
		if err != nil {
			text += ": " + err.Error()
		}
		n.refuse(w, label, refusalFor(lease.CodeMalformedRequest), text)
		return
	}
	entries := make([]batchEntry, len(calls))
	var submitted []*call
	for i, bc := range calls {
		entries[i] = n.decodeBatched(bc)
		if e := &entries[i]; e.c != nil {
			submitted = append(submitted, e.c)
		}
	}
	if refused := n.submit(submitted); len(refused) > 0 {
		for i := range entries {
			if e := &entries[i]; e.c != nil && slices.Contains(refused, e.c) {
				callPool.Put(e.c)
				e.c = nil
				e.status, e.body = n.refusal(e.op.String(), refusalFor(lease.CodeTemporarilyUnavailable), "the node is stopping")
			}
		}
	}
	for i := range entries {
		if !n.awaitBatched(r, &entries[i], start) {
			// The client left: each call it no longer waits for counts,
			// as a lone call's request would, and so does the batch.
			for _, e := range entries[i+1:] {
				if e.c != nil {
					n.metrics.count(e.op.String(), "abandoned")
				}
			}
			n.metrics.count(label, "abandoned")
			return
		}
	}
	n.metrics.count(label, "ok")
	writeJSON(w, http.StatusOK, appendBatchResults(make([]byte, 0, 64+160*len(entries)), entries))
}

// decodeBatched decodes one call of a batch into a call for the loop, or
// decides its refusal as its own endpoint would.
func (n *serveNode) decodeBatched(bc batchCall) batchEntry {
	op, known := lease.Ops[bc.Op]
	if !known || op < lease.OpGrant || op > lease.OpRelease {
		st, b := n.refusal("other", refusalFor(lease.CodeNotSupported), fmt.Sprintf("%q is not a lease call a batch can carry; a batch carries lease_grant, lease_renew, lease_check and lease_release", bc.Op))
		return batchEntry{status: st, body: b}
	}
	raw := []byte(bc.Body)
	if len(raw) == 0 { // no "body": as an endpoint reads an empty body
		raw = []byte("{}")
	}
	req, derr := lease.DecodeRequest(bc.Op, raw)
	if derr != nil {
		st, b := n.refusal(op.String(), refusalFor(derr.Code), derr.Text)
		return batchEntry{op: op, status: st, body: b}
	}
	c := callPool.Get().(*call)
	c.req = req
	return batchEntry{op: op, c: c}
}

// awaitBatched waits for a submitted call's reply and renders it. It
// returns false when the client left: the calls still in the loop are
// answered into their buffered channels and left to the collector.
func (n *serveNode) awaitBatched(r *http.Request, e *batchEntry, start time.Duration) bool {
	if e.c == nil {
		return true
	}
	var ok bool
	e.status, e.body, ok = n.awaitReply(r, e.op, e.c, start)
	e.c = nil
	return ok
}

// appendBatchResults renders {"results":[{"status":S,"body":B}, ...]}.
func appendBatchResults(dst []byte, entries []batchEntry) []byte {
	dst = append(dst, `{"results":[`...)
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"status":`...)
		dst = strconv.AppendInt(dst, int64(e.status), 10)
		if e.status == http.StatusServiceUnavailable {
			dst = append(dst, `,"retry_after_s":1`...)
		}
		dst = append(dst, `,"body":`...)
		dst = append(dst, e.body...)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}
