package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Batching (Config.Batching). There is no fixed cap on the requests in
// flight to a member: a call goes out at once, alone on its own
// endpoint, unless it would wait anyway. It waits (queues) only while
// this client is busy handing another request to the member (from the
// moment a request is given to the transport until the transport has
// written it into its connection's buffer, which net/http reports just
// before the one system call that puts it on the socket, or has to dial
// a connection for it, which is the network's wait, not the client's;
// so a member that reads its requests slowly does not make calls
// queue, only one that answers slowly does, below), while a batch that came back hands
// its callers their answers and lets them run (so that those calling
// again at once, a holder renewing or a loop of calls, join the queue),
// and while the member itself is queueing: when its answers take more
// than twice as long as its quickest recent answer, requests wait there
// behind each other, and the client keeps no more in flight than it had
// (inflight.go, an adaptive limit that never comes below 2 and opens
// again when the answers are quick). When none of these holds, the
// queue goes out as one POST /v1/batch (at most maxBatch calls; a full
// queue goes at once), which the member answers call by call as the
// calls' own endpoints would. So a client whose calls come spread out,
// or whose members are far away, sends every call alone the moment it
// is made, however many are in flight; a client or member short of CPU
// gets its calls together, which costs the member (a request, a round
// to each peer) and this process once per batch instead of once per
// call.
//
// Every call keeps its own attempt: its deadline, its failover (a batch
// that fails fails each of its calls, which then move on as they would
// alone), and its outcome, decided as a lone call's is: a call still
// queued when its attempt ends was not sent; a taken call whose attempt
// ends (its deadline, or its context cancelled) before the batch went
// out ends the batch, so that it and its mates learn from the batch
// itself that nothing reached the member (not sent; the mates fail over
// as from any attempt that failed); once the batch may have gone out,
// such a call leaves it alone, unknown, and the others wait on for their
// answers. A member that answers 404 to /v1/batch has none: its calls go
// alone.

const (
	// maxBatch bounds the calls of one batch request, and maxBatchBytes
	// their bodies (about 100 bytes each with short names), well within
	// the member's 64 KiB limit of a request body, whatever the names.
	maxBatch      = 64
	maxBatchBytes = 32 << 10
)

// batcher is one member's queue of batched calls.
type batcher struct {
	mu sync.Mutex
	// holds counts what makes calls queue now: requests being handed to
	// the member (until written, or until a dial starts for them), and
	// returning batches whose callers are being answered.
	holds int
	// inFlight counts the requests from lease calls in flight to the
	// member; calls queue while it is at the limit (inflight.go).
	inFlight int
	limit    inflightLimit
	queue    []*queued
	// none: the member answered 404 to /v1/batch; calls go alone.
	none bool
}

// queued is a call waiting in a batcher's queue, then in a batch.
type queued struct {
	r     *request
	body  []byte          // the call's body, as its own endpoint takes it
	ctx   context.Context // the call's attempt: its end ends the batch, or the call leaves it
	taken bool            // under the batcher's lock: a batch took it
	done  chan batchAnswer
	once  sync.Once // one answer: the batch's, or its own when it leaves
}

// answer hands the call its answer, once: a call that left its batch
// (postBatch) has had its own.
func (q *queued) answer(a batchAnswer) { q.once.Do(func() { q.done <- a }) }

// batchAnswer is what a batch came to for one of its calls.
type batchAnswer struct {
	sent       time.Time
	status     int
	retryAfter time.Duration
	body       []byte
	err        error
	wrote      bool // no answer, but the batch may have reached the member
	broken     bool // an answer came but made no sense
	alone      bool // the member has no batch endpoint: send the call alone
}

// tryBatched is try for a lease call when batching is on.
func (c *Client) tryBatched(ctx context.Context, ep *endpoint, r *request, out *reply) *attempt {
	b := &ep.batch
	b.mu.Lock()
	if b.none {
		b.mu.Unlock()
		return c.trySingle(ctx, ep, r, out, nil)
	}
	if b.holds == 0 && len(b.queue) == 0 && b.allows() {
		b.holds++
		b.inFlight++
		b.mu.Unlock()
		a := c.trySingle(ctx, ep, r, out, sync.OnceFunc(func() { c.release(ep) }))
		c.requestDone(ep, a.sent, a.status != 0)
		return a
	}
	actx, cancel := context.WithTimeout(ctx, c.attemptBudget(ctx))
	defer cancel()
	q := &queued{r: r, body: r.appendBody(make([]byte, 0, 128)), ctx: actx, done: make(chan batchAnswer, 1)}
	b.queue = append(b.queue, q)
	batch := b.takeFull()
	b.mu.Unlock()
	if batch != nil {
		go c.sendBatch(ep, batch)
	}
	var ans batchAnswer
	select {
	case ans = <-q.done:
	case <-actx.Done():
		b.mu.Lock()
		taken := q.taken
		if !taken {
			b.queue = slices.DeleteFunc(b.queue, func(x *queued) bool { return x == q })
		}
		b.mu.Unlock()
		if !taken {
			return &attempt{ep: ep, code: -1, sent: time.Now(), err: actx.Err(), batched: true}
		}
		// The call leaves its batch, or ends it (postBatch): its answer
		// comes at once, and says whether the request may have gone out.
		ans = <-q.done
	}
	if ans.alone {
		return c.trySingle(ctx, ep, r, out, nil)
	}
	return ans.attempt(ep, out)
}

// allows says whether a request may go out now; the zero batcher has
// no limit yet. Called under b.mu.
func (b *batcher) allows() bool {
	if b.limit.limit == 0 {
		b.limit = newInflightLimit()
	}
	return b.limit.allows(b.inFlight)
}

// release ends one hold on ep's queue (a request written, or a returning
// batch's callers answered); the last one sends the queue as a batch.
func (c *Client) release(ep *endpoint) {
	b := &ep.batch
	b.mu.Lock()
	b.holds--
	batch := b.next()
	b.mu.Unlock()
	if batch != nil {
		go c.sendBatch(ep, batch)
	}
}

// requestDone ends a request to ep sent at sent (answered: an answer
// came, whose round trip the limit learns from), and sends the queue as
// a batch when nothing holds it.
func (c *Client) requestDone(ep *endpoint, sent time.Time, answered bool) {
	b := &ep.batch
	b.mu.Lock()
	b.answered(sent, answered)
	batch := b.next()
	b.mu.Unlock()
	if batch != nil {
		go c.sendBatch(ep, batch)
	}
}

// answered ends a request in flight. Called under b.mu.
func (b *batcher) answered(sent time.Time, answered bool) {
	if answered {
		now := time.Now()
		b.limit.observe(now.Sub(sent), b.inFlight, now)
	}
	b.inFlight--
}

// next takes the queue's head as a batch when nothing holds the queue and
// the limit allows a request; nil otherwise. Called under b.mu.
func (b *batcher) next() []*queued {
	if b.holds > 0 || !b.allows() {
		return nil
	}
	return b.take()
}

// take takes the head of the queue as a batch (at most maxBatch calls,
// maxBatchBytes of bodies), counts it in flight and holds the queue until
// it is written; nil when the queue is empty. Called under b.mu.
func (b *batcher) take() []*queued {
	if len(b.queue) == 0 {
		return nil
	}
	n, size := 1, len(b.queue[0].body)
	for n < min(len(b.queue), maxBatch) && size+len(b.queue[n].body) <= maxBatchBytes {
		size += len(b.queue[n].body)
		n++
	}
	batch := slices.Clone(b.queue[:n])
	b.queue = slices.Delete(b.queue, 0, n)
	for _, q := range batch {
		q.taken = true
	}
	b.holds++
	b.inFlight++
	return batch
}

// takeFull takes a batch when the queue holds as many calls as a batch
// can carry, whatever holds it and whatever the limit: a full batch
// gains nothing by waiting. Called under b.mu.
func (b *batcher) takeFull() []*queued {
	size := 0
	for _, q := range b.queue {
		size += len(q.body)
	}
	if len(b.queue) < maxBatch && size < maxBatchBytes {
		return nil
	}
	return b.take()
}

// sendBatch sends one batch and hands each call its answer.
func (c *Client) sendBatch(ep *endpoint, batch []*queued) {
	sent := time.Now()
	answers := c.postBatch(ep, batch, sync.OnceFunc(func() { c.release(ep) }))
	b := &ep.batch
	b.mu.Lock()
	b.answered(sent, answers[0].status != 0 || answers[0].broken)
	b.holds++
	b.mu.Unlock()
	for i, q := range batch {
		q.answer(answers[i])
	}
	// Let the callers just answered run before the queue goes out (the
	// release): a caller that calls again at once (a holder renewing, a
	// loop of calls) then joins the next batch instead of going alone
	// ahead of it. Without it a busy client's batches stay small (about
	// a third of its callers each, measured), and every batch costs a
	// member its fixed share (a request, a round to each peer). When no
	// caller is ready to run, Gosched returns at once.
	runtime.Gosched()
	c.release(ep)
}

// errBatchMateLeft ends a batch whose call's attempt ended first.
var errBatchMateLeft = errors.New("a call of the batch ran out of time or was cancelled before the batch went out, which ends the batch")

// postBatch makes the batch request; the answers are in the calls' order.
// The request lasts while its calls wait for it (watchCalls). written is
// called once the request is written, or a dial started for it, or it
// failed, whichever comes first.
func (c *Client) postBatch(ep *endpoint, batch []*queued, written func()) []batchAnswer {
	sent := time.Now()
	ctx, done := watchCalls(batch, sent, written)
	defer done()
	raw := appendBatch(make([]byte, 0, 96*len(batch)), batch)
	body := body{r: bytes.NewReader(raw), length: len(raw)}
	req := c.post(ctx, ep.batchURL, body)
	all := func(a batchAnswer) []batchAnswer {
		answers := make([]batchAnswer, len(batch))
		for i := range answers {
			answers[i] = a
		}
		return answers
	}
	resp, err := c.transport.RoundTrip(req)
	written()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		return all(batchAnswer{sent: sent, err: err, wrote: body.wasRead()})
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBatch*maxReplyBytes))
	resp.Body.Close()
	switch {
	case err != nil:
		return all(batchAnswer{sent: sent, err: fmt.Errorf("the batch's answer broke off: %w", err), wrote: true})
	case resp.StatusCode == http.StatusNotFound:
		ep.batch.mu.Lock()
		ep.batch.none = true
		ep.batch.mu.Unlock()
		return all(batchAnswer{alone: true})
	case resp.StatusCode != http.StatusOK:
		// The request as a whole was refused (401, 503 draining, ...):
		// each call was refused alike.
		return all(batchAnswer{sent: sent, status: resp.StatusCode, retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")), body: b})
	}
	var res batchResults
	if err := res.decode(b); err != nil || len(res.Results) != len(batch) {
		return all(batchAnswer{sent: sent, broken: true, err: fmt.Errorf("the batch's answer is not %d results: %q", len(batch), truncate(string(b), 200))})
	}
	answers := make([]batchAnswer, len(batch))
	for i, r := range res.Results {
		answers[i] = batchAnswer{sent: sent, status: r.Status, retryAfter: time.Duration(r.RetryAfterS) * time.Second, body: r.Body}
		if r.Status < 100 || r.Status > 599 {
			answers[i] = batchAnswer{sent: sent, broken: true, err: fmt.Errorf("the batch's answer gave call %d the status %d", i, r.Status)}
		}
	}
	return answers
}

// watchCalls returns the context of a batch's request, tied to its
// calls' attempts, and the function that ends it. A call whose attempt
// ends before the request went out (the transport had not begun writing
// it) ends the batch: its mates fail over, "not sent", as it does. Once
// the request may have gone out, such a call leaves alone, its outcome
// unknown, and the batch goes on for the others until the last has left.
// The request's trace also calls written when the request is written or
// a dial starts for it (see tryBatched: the queue's hold ends then).
func watchCalls(batch []*queued, sent time.Time, written func()) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	var out atomic.Bool // the transport began writing the request
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { out.Store(true) },
		ConnectStart: func(string, string) { written() },
		WroteRequest: func(httptrace.WroteRequestInfo) { written() },
	})
	var staying atomic.Int32
	staying.Store(int32(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, q := range batch {
		stops[i] = context.AfterFunc(q.ctx, func() {
			if !out.Load() {
				cancel(errBatchMateLeft)
				return
			}
			q.answer(batchAnswer{sent: sent, wrote: true,
				err: fmt.Errorf("the call's attempt ended while its batch was out: %w", context.Cause(q.ctx))})
			if staying.Add(-1) == 0 {
				cancel(nil) // nobody waits for the answer
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(nil)
	}
}

// appendBatch renders [{"op":"lease_renew","body":{...}}, ...].
func appendBatch(dst []byte, batch []*queued) []byte {
	dst = append(dst, '[')
	for i, q := range batch {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"op":"`...)
		dst = append(dst, q.r.op.String()...)
		dst = append(dst, `","body":`...)
		dst = append(dst, q.body...)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// attempt is the call's attempt as if it had gone alone.
func (ans batchAnswer) attempt(ep *endpoint, out *reply) *attempt {
	a := &attempt{ep: ep, code: -1, sent: ans.sent, err: ans.err, batched: true, batchWrote: ans.wrote, broken: ans.broken}
	if ans.broken {
		a.text = ans.err.Error()
		return a
	}
	if ans.err == nil {
		a.status = ans.status
		a.decode(ans.body, ans.retryAfter, out)
	}
	return a
}
