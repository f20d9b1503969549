package workloads

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// service answers client requests in a simulation. It processes a request
// at its invoke time and returns the reply (nil: lost) and its delay.
type service interface {
	handle(now time.Duration, node int, req json.RawMessage) (json.RawMessage, time.Duration)
}

type simConfig struct {
	workers, nodes int
	duration       time.Duration // no op is invoked at or after it
	timeout        time.Duration
}

type simEvent struct {
	at     time.Duration
	seq    int
	worker int
	inv    Invocation
	reply  json.RawMessage
}

// simulate drives a workload in virtual time the way the harness does in
// real time: completions first, then every free worker is offered an op,
// then time jumps to the next completion or Wake. It fails the test when
// Next refuses a free worker while Wake says an op is due.
func simulate(tb testing.TB, w Workload, svc service, cfg simConfig) []Op {
	hw := NewWriter(io.Discard)
	free := make([]bool, cfg.workers)
	procs := make([]int, cfg.workers)
	for i := range free {
		free[i], procs[i] = true, i
	}
	var pending []simEvent
	seq := 0
	record := func(op Op) {
		if _, err := hw.Append(op); err != nil {
			tb.Fatal(err)
		}
	}
	for now := time.Duration(0); ; {
		for len(pending) > 0 && pending[0].at <= now {
			ev := pending[0]
			pending = pending[1:]
			c := w.Complete(now, ev.worker, ev.inv, ev.reply)
			record(Op{Time: int64(now), Process: Process{ID: procs[ev.worker]}, Type: c.Type, F: ev.inv.F,
				Node: fmt.Sprintf("n%d", ev.worker%cfg.nodes+1), Value: c.Value, Error: c.Error})
			if c.Type == Info {
				procs[ev.worker] += cfg.workers // Jepsen: a crashed process is replaced
			}
			free[ev.worker] = true
		}
		anyFree := false
		for wk := range free {
			if !free[wk] || now >= cfg.duration {
				continue
			}
			inv, ok := w.Next(now, wk)
			if !ok {
				if wake := w.Wake(); wake <= now {
					tb.Fatalf("Next refused free worker %d at %v but Wake() = %v", wk, now, wake)
				}
				anyFree = true
				continue
			}
			record(Op{Time: int64(now), Process: Process{ID: procs[wk]}, Type: Invoke, F: inv.F,
				Node: fmt.Sprintf("n%d", wk%cfg.nodes+1), Value: inv.Value})
			free[wk] = false
			reply, delay := svc.handle(now, wk%cfg.nodes, w.Request(inv))
			if reply == nil || delay > cfg.timeout {
				reply, delay = nil, cfg.timeout
			}
			seq++
			ev := simEvent{at: now + delay, seq: seq, worker: wk, inv: inv, reply: reply}
			i, _ := slices.BinarySearchFunc(pending, ev, func(a, b simEvent) int {
				if a.at != b.at {
					return compareDuration(a.at, b.at)
				}
				return a.seq - b.seq
			})
			pending = slices.Insert(pending, i, ev)
		}
		next := Never
		if len(pending) > 0 {
			next = pending[0].at
		}
		if wake := w.Wake(); anyFree && wake < next && wake < cfg.duration {
			next = wake
		}
		if next == Never {
			return hw.Ops()
		}
		now = next
	}
}

func compareDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// idealLeases is a correct, linearizable lease service (one authoritative
// state, each request applied at its invoke time), with random reply
// delays, lost replies and definite failures. It keeps every lease a
// holder was told about (protection never shrinks) and releases exactly
// the lease a token names. Its broken switches are negative controls.
type idealLeases struct {
	rng                *rand.Rand
	chunks             map[string]*idealChunk
	minDelay, maxDelay time.Duration
	lossRate           float64       // the request is applied, the reply lost
	failRate           float64       // answered error 11, nothing applied
	stormFrom          time.Duration // from then on every request fails (or is lost)
	stormLoss          bool
	lastToken          int64            // tokens are 1, 2, 3, ... across all chunks
	serverTokens       map[string]int64 // tokenPerServer: each server's own count

	grantBlindly   bool // broken: a grant always makes the requester primary
	shrink         bool // broken: a renewal replaces the holder's leases (a shorter one shrinks the protection)
	releaseAnyone  bool // broken: a release ends the holder's leases up to its token, whichever server sent it
	tokenPerServer bool // broken: each server counts its own tokens (they collide and do not grow across servers)
	noTokens       bool // broken: ok grants and renews carry no token
}

type idealChunk struct {
	holder string
	leases []idealLease // the holder's leases; the chunk is held while one is live
	seen   bool
}

// idealLease is one lease instance, named by its token.
type idealLease struct {
	token int64
	endAt time.Duration
}

// endAt is when the last of the holder's leases ends.
func (c *idealChunk) endAt() time.Duration {
	var end time.Duration
	for _, l := range c.leases {
		end = max(end, l.endAt)
	}
	return end
}

func (c *idealChunk) live(now time.Duration) bool { return c.seen && now < c.endAt() }

func newIdeal(seed int64) *idealLeases {
	return &idealLeases{rng: rand.New(rand.NewPCG(uint64(seed), 99)), chunks: map[string]*idealChunk{},
		minDelay: time.Millisecond, maxDelay: 30 * time.Millisecond, stormFrom: Never, serverTokens: map[string]int64{}}
}

type idealRequest struct {
	Type        string `json:"type"`
	ChunkHandle string `json:"chunk_handle"`
	Server      string `json:"server"`
	LeaseMs     int64  `json:"lease_ms"`
	Token       *int64 `json:"token"`
}

func (s *idealLeases) handle(now time.Duration, _ int, raw json.RawMessage) (json.RawMessage, time.Duration) {
	delay := s.minDelay + time.Duration(s.rng.Int64N(int64(s.maxDelay-s.minDelay)+1))
	if now >= s.stormFrom {
		if s.stormLoss {
			return nil, 0
		}
		return json.RawMessage(`{"type":"error","code":11,"text":"no majority answered"}`), delay
	}
	if s.rng.Float64() < s.failRate {
		return json.RawMessage(`{"type":"error","code":11,"text":"no majority answered"}`), delay
	}
	var req idealRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		panic(err)
	}
	reply := s.apply(now, req)
	if s.rng.Float64() < s.lossRate {
		return nil, 0
	}
	return reply, delay
}

func (s *idealLeases) apply(now time.Duration, req idealRequest) json.RawMessage {
	c := s.chunks[req.ChunkHandle]
	if c == nil {
		c = &idealChunk{}
		s.chunks[req.ChunkHandle] = c
	}
	live := c.live(now)
	switch req.Type {
	case "lease_grant":
		if live && c.holder != req.Server && !s.grantBlindly {
			// The holder's token rides along as an extra key, which the
			// workload must not take for the requester's.
			return fmt.Appendf(nil, `{"type":"lease_grant_ok","chunk_handle":%q,"primary":%q,"expires_in_ms":%d,"token":%d}`,
				req.ChunkHandle, c.holder, (c.endAt()-now)/time.Millisecond, c.leases[len(c.leases)-1].token)
		}
		return fmt.Appendf(nil, `{"type":"lease_grant_ok","chunk_handle":%q,"primary":%q,"expires_in_ms":%d%s}`,
			req.ChunkHandle, req.Server, req.LeaseMs, s.hold(now, c, req))
	case "lease_renew":
		if live && c.holder != req.Server {
			return json.RawMessage(`{"type":"error","code":22,"text":"held by another server"}`)
		}
		return fmt.Appendf(nil, `{"type":"lease_renew_ok","new_expires_in_ms":%d%s}`, req.LeaseMs, s.hold(now, c, req))
	case "lease_check":
		primary := "null"
		if c.seen {
			primary = fmt.Sprintf("%q", c.holder)
		}
		return fmt.Appendf(nil, `{"type":"lease_check_ok","primary":%s,"remaining_ms":%d,"expired":%v}`,
			primary, max(c.endAt()-now, 0)/time.Millisecond, !live)
	default:
		if req.Token == nil {
			return json.RawMessage(`{"type":"error","code":12,"text":"lease_release needs the token of the lease to end"}`)
		}
		s.release(now, c, req.Server, *req.Token)
		return fmt.Appendf(nil, `{"type":"lease_release_ok","chunk_handle":%q}`, req.ChunkHandle)
	}
}

// hold makes req's server the holder of a new lease and returns the
// reply's token field.
func (s *idealLeases) hold(now time.Duration, c *idealChunk, req idealRequest) string {
	if !c.live(now) || c.holder != req.Server || s.shrink {
		c.leases = c.leases[:0]
	}
	c.leases = slices.DeleteFunc(c.leases, func(l idealLease) bool { return l.endAt <= now })
	token := s.token(req.Server)
	c.holder, c.seen = req.Server, true
	c.leases = append(c.leases, idealLease{token, now + time.Duration(req.LeaseMs)*time.Millisecond})
	if s.noTokens {
		return ""
	}
	return fmt.Sprintf(`,"token":%d`, token)
}

func (s *idealLeases) token(server string) int64 {
	if s.tokenPerServer {
		s.serverTokens[server]++
		return s.serverTokens[server]
	}
	s.lastToken++
	return s.lastToken
}

// release ends the holder's leases whose tokens are at most token (rule 6).
func (s *idealLeases) release(now time.Duration, c *idealChunk, server string, token int64) {
	if c.holder != server && !s.releaseAnyone {
		return
	}
	for i := range c.leases {
		if c.leases[i].token <= token {
			c.leases[i].endAt = min(c.leases[i].endAt, now)
		}
	}
}
