package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// The failover loop. A call tries one member at a time, starting with the
// one that answered last (Client.preferred). An attempt that fails in a
// way another member may not (a connection error, 503, 504 or another
// 5xx, an attempt timeout) cools that member down and moves on: for its
// Retry-After (503), or for a backoff that doubles with its consecutive
// failures (50 ms to 2 s, jittered; attempts that were in flight
// together fail as one). A cooling member is skipped while
// another is available; when all are cooling, the call waits for the
// first to come back, unless the context's deadline comes first. A
// definite refusal (400, 401, 404, 409, 413) ends the call at once. The
// call ends after MaxAttempts attempts, or when its context is done.
//
// The outcome across attempts: success if any attempt succeeded; else a
// definite refusal if one ended the call; else ErrUnknown if ANY attempt
// may have taken effect (a 504, or a connection that broke after the
// request was written); else ErrUnavailable (nothing was sent, or every
// member said 503). A grant whose first attempt got 504 is never
// reported as "not granted".

const (
	backoffBase = 50 * time.Millisecond
	backoffMax  = 2 * time.Second
	// maxReplyBytes bounds a reply body read; replies are ~100 bytes.
	maxReplyBytes = 64 << 10
	// minAttempt is the least time an attempt is given when the context's
	// deadline leaves more: below it, half the time left is too little for
	// a round trip to mean anything.
	minAttempt = 20 * time.Millisecond
)

// attempt is what one try at one member came to.
type attempt struct {
	ep   *endpoint
	sent time.Time // taken before the request could be written
	// body tells whether the request was written (see body.wasRead);
	// broken is set when an answer came but broke off or made no sense.
	body   body
	broken bool
	// status is the HTTP status; 0 when no answer came.
	status     int
	code       int
	text       string
	retryAfter time.Duration
	retryInMs  int64 // an error body's retry_in_ms (a membership change during the waiting rule)
	err        error // from the network or the context
	// batched: the call went in a batch (Config.Batching); batchWrote
	// then says whether the batch may have reached the member, as
	// body.wasRead does for a call sent alone.
	batched, batchWrote bool
}

// answered says which attempt succeeded: when it started (a lease's
// believed expiry counts from it) and at which member.
type answered struct {
	sent     time.Time
	endpoint string
}

// call sends r with failover and decodes a 200 answer into out.
func (c *Client) call(ctx context.Context, r *request, out *reply) (answered, error) {
	var unknown, last *attempt
	var tried uint64 // endpoints tried in this call, by index (mod 64)
	attempts := 0
	for attempts < c.maxAttempts {
		ep, wait, probe := c.pick(tried)
		if wait > 0 {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				// Waiting would outlast the deadline. A member kept away
				// only by this client's own backoff may still be tried
				// now, once per call; a Retry-After is never cut short.
				if probe == nil {
					break
				}
				ep = probe
			} else if !sleepCtx(ctx, wait) {
				break
			}
		}
		attempts++
		tried |= 1 << (ep.idx % 64)
		a := c.try(ctx, ep, r, out)
		if a.err == nil && a.status == http.StatusOK {
			c.succeeded(ep)
			return answered{a.sent, ep.base}, nil
		}
		cls := a.class()
		if !cls.failover {
			return answered{}, c.failure(r, a, cls.kind, attempts)
		}
		c.cool(ep, a.sent, a.retryAfter)
		last = a
		if cls.kind == ErrUnknown {
			unknown = a
		}
		if ctx.Err() != nil {
			break
		}
	}
	return answered{}, c.exhausted(ctx, r, unknown, last, attempts)
}

// callAt sends r to one member only, once (the master requests, which a
// node answers about itself).
func (c *Client) callAt(ctx context.Context, node string, r *request, out *reply) (answered, error) {
	ep, err := c.endpointFor(node)
	if err != nil {
		return answered{}, &Error{Request: r.describe(node), Code: -1, Text: err.Error(), kind: ErrBadRequest}
	}
	a := c.try(ctx, ep, r, out)
	if a.err == nil && a.status == http.StatusOK {
		return answered{a.sent, ep.base}, nil
	}
	return answered{}, c.failure(r, a, a.class().kind, 1)
}

// exhausted is the error of a call that ran out of attempts or time.
func (c *Client) exhausted(ctx context.Context, r *request, unknown, last *attempt, attempts int) error {
	switch {
	case unknown != nil:
		return c.failure(r, unknown, ErrUnknown, attempts)
	case last != nil:
		return c.failure(r, last, ErrUnavailable, attempts)
	}
	// Nothing was tried: every member was cooling, and the context's
	// deadline (or its end) came before the first was back.
	e := &Error{Request: r.describe(""), Code: -1, Attempts: attempts, kind: ErrUnavailable, cause: ctx.Err()}
	e.Text = "every member failed recently or asked to wait (Retry-After), and the call's deadline came first"
	if ctx.Err() != nil {
		e.Text = "the call ended (" + ctx.Err().Error() + ") while every member was cooling down"
	}
	return e
}

// failure builds the call's error from the attempt that decides it.
func (c *Client) failure(r *request, a *attempt, kind error, attempts int) *Error {
	e := &Error{Request: r.describe(a.ep.base), Endpoint: a.ep.base, Status: a.status, Code: -1, Attempts: attempts, kind: kind, cause: a.err}
	switch {
	case a.status != 0:
		e.Code, e.Text, e.RetryInMs = a.code, a.text, a.retryInMs
	case a.text != "":
		e.Text = a.text
	case a.err != nil:
		e.Text = a.err.Error()
		if !a.wrote() {
			e.Text = "not sent: " + e.Text
		}
	}
	return e
}

// class says what a failed attempt means.
func (a *attempt) class() statusClass {
	switch {
	case a.status != 0:
		return classify(a.status)
	case a.wrote():
		// Written, then no answer: the member may have acted.
		return statusClass{kind: ErrUnknown, failover: true}
	}
	return statusClass{kind: ErrUnavailable, failover: true}
}

// try makes one attempt at ep. The attempt's deadline is the context's,
// capped by AttemptTimeout and by half the time left (see attemptBudget).
// With batching on, a lease call may go in a batch (batch.go).
func (c *Client) try(ctx context.Context, ep *endpoint, r *request, out *reply) *attempt {
	if c.batching && r.op <= opRelease && ep.idx >= 0 {
		return c.tryBatched(ctx, ep, r, out)
	}
	return c.trySingle(ctx, ep, r, out, nil)
}

// trySingle makes one attempt at ep with the call alone on its endpoint.
// written, when not nil, is called once the request is written, or a
// dial started for it, or it failed, whichever comes first (batch.go:
// the member's queue is held until then).
func (c *Client) trySingle(ctx context.Context, ep *endpoint, r *request, out *reply, written func()) *attempt {
	actx, cancel := context.WithTimeout(ctx, c.attemptBudget(ctx))
	defer cancel()
	if written != nil {
		actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
			ConnectStart: func(string, string) { written() },
			WroteRequest: func(httptrace.WroteRequestInfo) { written() },
		})
	}
	body := newBody(r)
	a := &attempt{ep: ep, code: -1, body: body}
	req := c.post(actx, ep.urls[r.op], body)
	a.sent = time.Now()
	resp, err := c.transport.RoundTrip(req)
	if written != nil {
		written()
	}
	if err != nil {
		a.err = err
		return a
	}
	a.read(resp, out)
	return a
}

// post is the request that sends body to u, within ctx.
func (c *Client) post(ctx context.Context, u *url.URL, body body) *http.Request {
	return (&http.Request{
		Method: http.MethodPost, URL: u, Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: c.header, Body: body.reader(), ContentLength: int64(body.len()),
	}).WithContext(ctx)
}

// read reads and decodes the answer.
func (a *attempt) read(resp *http.Response, out *reply) {
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	b, err := readAll(resp.Body, (*buf)[:0])
	*buf = b
	resp.Body.Close()
	a.status = resp.StatusCode
	if err != nil {
		// The status line came, the body broke: a 200 is then unknown.
		a.err = err
		if a.status == http.StatusOK {
			a.status, a.text, a.broken = 0, "the answer broke off: "+err.Error(), true
		}
		return
	}
	a.decode(b, parseRetryAfter(resp.Header.Get("Retry-After")), out)
}

// decode judges a complete answer with a.status: an error body's code and
// text (and the member's Retry-After), or the 200 reply into out, which
// makes the attempt broken when it is no reply body. A 409 that carries
// a grant's reply (the chunk stays with the server it names) is that
// reply: an answer, as a 200 is.
func (a *attempt) decode(b []byte, retryAfter time.Duration, out *reply) {
	if a.status == http.StatusConflict {
		var g reply
		if g.decode(b) == nil && g.Type == opGrant.okType() {
			*out, a.status = g, http.StatusOK
			return
		}
	}
	if a.status != http.StatusOK {
		a.retryAfter = retryAfter
		var e reply
		if e.decode(b) == nil {
			a.code, a.text, a.retryInMs = e.code(), e.Text, e.RetryInMs
		} else {
			a.text = "body: " + strconv.Quote(truncate(string(b), 200))
		}
		return
	}
	if err := out.decode(b); err != nil {
		a.status, a.err, a.broken = 0, fmt.Errorf("the 200 answer is not a reply body (%v): %q", err, truncate(string(b), 200)), true
	}
}

// wrote reports whether the member may have received the request. It is
// asked only of an attempt without an answer (see body.wasRead).
func (a *attempt) wrote() bool {
	if a.batched {
		return a.broken || a.batchWrote
	}
	return a.broken || a.body.wasRead()
}

// attemptBudget is how long the next attempt may take.
func (c *Client) attemptBudget(ctx context.Context) time.Duration {
	budget := c.attemptMax
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if half := left / 2; half >= minAttempt {
			budget = min(budget, half)
		} else {
			budget = min(budget, left)
		}
	}
	return budget
}

// pick returns the endpoint to try next, in order from the preferred
// one: the first that this call has not tried and that is not cooling,
// else the first that is not cooling, else the one that comes back first
// and how long until it does. probe is, when all are cooling, the one
// not tried in this call that comes back first among those kept away by
// the backoff alone (not by a Retry-After); nil if none.
func (c *Client) pick(tried uint64) (ep *endpoint, wait time.Duration, probe *endpoint) {
	now := c.now()
	p := int(c.preferred.Load())
	n := len(c.endpoints)
	var ready *endpoint
	best := c.endpoints[p]
	for k := range n {
		e := c.endpoints[(p+k)%n]
		until := e.coolUntil.Load()
		untried := tried&(1<<(e.idx%64)) == 0
		switch {
		case until <= now && untried:
			return e, 0, nil
		case until <= now:
			if ready == nil {
				ready = e
			}
			continue
		}
		if until < best.coolUntil.Load() {
			best = e
		}
		if untried && !e.askedWait.Load() && (probe == nil || until < probe.coolUntil.Load()) {
			probe = e
		}
	}
	if ready != nil {
		return ready, 0, nil
	}
	return best, time.Duration(best.coolUntil.Load() - now), probe
}

// cool keeps calls away from ep for retryAfter (capped), or for the
// backoff of its consecutive failures. Failures are counted by attempt
// sent: an attempt that went out before the member's last counted
// failure was in flight beside it, and its failure is the same episode
// (a stall that times out many concurrent calls at once, or the calls of
// one batch), not one more in a row; counting each would raise the
// backoff to its cap at once (5 concurrent timeouts: 800 ms).
func (c *Client) cool(ep *endpoint, sent time.Time, retryAfter time.Duration) {
	fails := ep.fails.Load()
	if last := ep.failedAt.Load(); fails == 0 || sent.Sub(c.epoch) >= time.Duration(last) {
		if ep.failedAt.CompareAndSwap(last, c.now()) {
			fails = ep.fails.Add(1)
		} else {
			fails = max(ep.fails.Load(), 1) // a concurrent failure counted it
		}
	}
	d := backoffBase << min(fails-1, 10)
	d = c.jitter(min(d, backoffMax), 0.2)
	if retryAfter > 0 {
		d = min(retryAfter, c.retryMax)
	}
	ep.askedWait.Store(retryAfter > 0)
	ep.coolUntil.Store(c.now() + int64(d))
}

// succeeded makes ep the preferred endpoint and clears its failures.
func (c *Client) succeeded(ep *endpoint) {
	if ep.fails.Load() != 0 {
		ep.fails.Store(0)
		ep.coolUntil.Store(0)
	}
	if ep.idx >= 0 && c.preferred.Load() != ep.idx {
		c.preferred.Store(ep.idx)
	}
}

func (c *Client) now() int64 { return int64(time.Since(c.epoch)) }

// endpointFor finds node among the endpoints (by base URL, or by index
// from 1), or makes an endpoint for a URL not configured.
func (c *Client) endpointFor(node string) (*endpoint, error) {
	for _, ep := range c.endpoints {
		if ep.base == node {
			return ep, nil
		}
	}
	scheme := "http"
	if c.transport.TLSClientConfig != nil {
		scheme = "https"
	}
	ep, err := newEndpoint(node, scheme, -1)
	if err != nil {
		return nil, err
	}
	for _, e := range c.endpoints {
		if e.base == ep.base {
			return e, nil
		}
	}
	return ep, nil
}

// sleepCtx waits d, or returns false at once if ctx's deadline comes
// first, or when ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// parseRetryAfter reads delta-seconds or an HTTP date; 0 when absent.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// readAll reads r into dst, failing past maxReplyBytes.
func readAll(r io.Reader, dst []byte) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			if len(dst) > maxReplyBytes {
				return dst, errors.New("the answer is over 64 KiB; this is not a lease-node member")
			}
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
