package lease_test

import (
	"encoding/json"
	"fmt"
	"time"

	"chunklease/history"
	"chunklease/lease"
	"chunklease/workloads"
)

// The simulated clients. Each worker holds one call at a time; its
// request reaches its node at once (Maelstrom's clients have zero latency)
// and, with probability dupClientP, a copy reaches a node again later,
// possibly long after the client gave up and moved on: the duplicated and
// late requests a real network and a retrying client produce. A copy of a
// chunk-lease request reaches a random node (any node answers it alike,
// and a retrying client may go through another); a copy of a master
// request reaches the call's own node (copiesHome), since master_start,
// master_stop and master_status speak for the node that gets them: a
// status answered by another node and recorded as the call's node's
// would claim that node was master. A worker's clock runs at its own
// rate: what it believes about a lease it was granted is what its clock
// makes of the reply, so the history records its belief in real time
// (scaleBelief).

type simCall struct {
	id     uint64
	worker int
	node   int
	inv    workloads.Invocation
	req    lease.Request
	done   bool
}

type simWorker struct {
	process int
	call    *simCall
	ppm     int64 // clock-rate error of this client, parts per million
}

type clients struct {
	w       *world
	workers []simWorker
	calls   map[uint64]*simCall // calls in flight, by call id
	done    map[uint64]*simCall // finished calls, for requests that reach a node late
	reqs    map[uint64]uint64   // node request id -> call id
	callSeq uint64
	reqSeq  uint64
}

func newClients(w *world) clients {
	c := clients{w: w, calls: map[uint64]*simCall{}, done: map[uint64]*simCall{}, reqs: map[uint64]uint64{}}
	c.workers = make([]simWorker, w.sc.workers)
	for i := range c.workers {
		c.workers[i] = simWorker{process: i, ppm: w.drawClientRate()}
	}
	return c
}

// drawClientRate draws a client's clock-rate error: within the bound the
// nodes assume, or, in the control's schedules, a slow clock beyond it.
func (w *world) drawClientRate() int64 {
	rho := w.sc.driftPPM
	switch {
	case w.sc.clientOutside:
		return -3 * max(rho, 10_000)
	case w.sc.clientsInMargin:
		// 80% of what the margin covers beyond rho: a belief of T-m at
		// 1-rho' real time stays within T at 1-rho when rho' <= rho + (m/T)(1-rho).
		extra := 800_000 * w.sc.marginMs / w.sc.leaseMs * (1_000_000 - rho) / 1_000_000
		return -(rho + extra)
	case rho == 0:
		return 0
	case w.sc.clockEdge:
		return []int64{-rho, rho}[w.rng.IntN(2)]
	}
	return w.rng.Int64N(2*rho+1) - rho
}

// idle reports whether no client op is in flight.
func (c *clients) idle() bool {
	for _, wk := range c.workers {
		if wk.call != nil {
			return false
		}
	}
	return true
}

// poll offers every free worker an operation, and books the next poll.
func (c *clients) poll() {
	w := c.w
	if w.now >= w.sc.duration {
		return
	}
	if w.quiet() {
		w.pollAt = w.now + 10*time.Millisecond
		w.push(event{at: w.pollAt, kind: evPoll})
		return
	}
	for i := range c.workers {
		if c.workers[i].call == nil {
			if inv, ok := w.wl.Next(w.now, i); ok {
				c.invoke(i, inv)
			}
		}
	}
	at := max(w.wl.Wake(), w.now+time.Millisecond)
	if w.pollAt < 0 || at < w.pollAt {
		w.pollAt = at
		w.push(event{at: at, kind: evPoll})
	}
}

func (c *clients) invoke(worker int, inv workloads.Invocation) {
	w := c.w
	c.callSeq++
	call := &simCall{id: c.callSeq, worker: worker, node: w.route(worker), inv: inv}
	c.calls[call.id] = call
	c.workers[worker].call = call
	w.record(history.Op{Process: history.Process{ID: c.workers[worker].process}, Type: history.Invoke,
		F: inv.F, Node: w.ids[call.node], Value: inv.Value})
	w.push(event{at: w.now + clientTimeout, kind: evTimeout, call: call.id})
	body := w.wl.Request(inv)
	var head struct{ Type string }
	_ = json.Unmarshal(body, &head)
	req, err := lease.DecodeRequest(head.Type, body)
	if err != nil {
		c.complete(call, errorBody(call.id, err))
		return
	}
	call.req = req
	w.arrive(event{kind: evRequest, node: call.node, call: call.id})
	if w.rng.Float64() < w.sc.dupClientP {
		late := time.Duration(w.rng.Int64N(int64(2 * clientTimeout)))
		to := w.rng.IntN(w.sc.nodes) // drawn either way: the rest of the schedule stays the same
		if w.sc.copiesHome {
			to = call.node
		}
		w.push(event{at: w.now + late, kind: evRequest, node: to, call: call.id})
	}
}

// serve hands a call's request to its node under a fresh request id (a
// duplicate may arrive while the first is still pending there).
func (c *clients) serve(e event) {
	call := c.calls[e.call]
	if call == nil {
		call = c.findDone(e.call)
	}
	n := c.w.nodes[e.node]
	c.reqSeq++
	c.reqs[c.reqSeq] = e.call
	req := call.req
	req.ID = c.reqSeq
	c.w.absorb(e.node, n.core.Request(n.local(c.w.now), req))
}

// opOf names the call a node request served, for messages.
func (c *clients) opOf(reqID uint64) string {
	id := c.reqs[reqID]
	call := c.calls[id]
	if call == nil {
		call = c.done[id]
	}
	if call == nil {
		return "unknown"
	}
	return fmt.Sprintf("%s %s by worker %d", call.inv.F, call.inv.Value, call.worker)
}

// findDone keeps finished calls reachable for their late duplicates.
func (c *clients) findDone(id uint64) *simCall {
	if call, ok := c.done[id]; ok {
		return call
	}
	panic(fmt.Sprintf("duplicate of unknown call %d", id))
}

// reply renders a node's answer as the Maelstrom body a client would get
// and completes the op. A reply after the client completed (timed out, or
// answered by another copy of the request) is dropped.
func (c *clients) reply(r lease.Reply) {
	call := c.calls[c.reqs[r.ID]]
	delete(c.reqs, r.ID)
	if call == nil || call.done {
		return
	}
	if r.Err != nil {
		c.complete(call, errorBody(call.id, r.Err))
		return
	}
	body := c.scaleBelief(call, r.Body)
	fields, _ := json.Marshal(body)
	raw := []byte(fmt.Sprintf(`{"type":%q,"in_reply_to":%d`, r.Type, call.id))
	if len(fields) > 2 { // not an empty object
		raw = append(append(raw, ','), fields[1:]...)
	} else {
		raw = append(raw, '}')
	}
	c.complete(call, raw)
}

// scaleBelief turns the times in a reply into what the client, whose
// clock runs at 1+ppm, believes in real time: a slow clock (ppm < 0)
// counts the same milliseconds over a longer real time. A client believes
// every time it is told on its own clock: its own lease (a grant naming
// it, a renew) and what a read promises (a check's remaining time, a
// grant's naming another primary), which checkProtectedPromise judges.
// So with clients slower than rho by what the drift margin covers, the
// margin must shorten checks as it shortens grants.
func (c *clients) scaleBelief(call *simCall, body any) any {
	ppm := c.workers[call.worker].ppm
	scale := func(ms int64) int64 { return scaleMs(ms, ppm) }
	switch b := body.(type) {
	case lease.GrantOK:
		b.ExpiresInMs = scale(b.ExpiresInMs)
		return b
	case lease.RenewOK:
		b.NewExpiresInMs = scale(b.NewExpiresInMs)
		return b
	case lease.CheckOK:
		if !b.Expired {
			b.RemainingMs = scale(b.RemainingMs)
		}
		return b
	}
	return body
}

// scaleMs is ms of a clock running at 1+ppm in real milliseconds, rounded
// up.
func scaleMs(ms, ppm int64) int64 { return (ms*1_000_000 + 999_999 + ppm) / (1_000_000 + ppm) }

// scaleAsked puts the lease_ms an ok completion's value repeats from its
// request into the same real-time units as the reply's remaining time
// (scaleBelief), so the checker compares like with like: the time told
// never exceeds the time asked for, on any client's clock.
func scaleAsked(value json.RawMessage, ppm int64) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(value, &fields) != nil {
		return value
	}
	var asked int64
	if raw, ok := fields["lease_ms"]; !ok || json.Unmarshal(raw, &asked) != nil {
		return value
	}
	fields["lease_ms"], _ = json.Marshal(scaleMs(asked, ppm))
	scaled, err := json.Marshal(fields)
	if err != nil {
		return value
	}
	return scaled
}

func errorBody(id uint64, err *lease.Error) json.RawMessage {
	body, _ := json.Marshal(map[string]any{"type": "error", "in_reply_to": id, "code": err.Code, "text": err.Text})
	return body
}

func (c *clients) timeout(id uint64) {
	if call := c.calls[id]; call != nil && !call.done {
		c.complete(call, nil)
	}
}

func (c *clients) complete(call *simCall, body json.RawMessage) {
	w := c.w
	call.done = true
	delete(c.calls, call.id)
	c.done[call.id] = call
	wk := &c.workers[call.worker]
	comp := w.wl.Complete(w.now, call.worker, call.inv, body)
	if comp.Type == history.OK && wk.ppm != 0 {
		comp.Value = scaleAsked(comp.Value, wk.ppm)
	}
	w.record(history.Op{Process: history.Process{ID: wk.process}, Type: comp.Type, F: call.inv.F,
		Node: w.ids[call.node], Value: comp.Value, Error: comp.Error})
	if comp.Type == history.Info {
		wk.process += w.sc.workers
	}
	wk.call = nil
	c.poll()
}
