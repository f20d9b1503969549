package workloadtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"chunklease/workloads"
)

// IdealLeases is a correct, linearizable lease service (one authoritative
// state, each request applied at its invoke time), with random reply
// delays, lost replies and definite failures. It keeps every lease a
// holder was told about (protection never shrinks) and releases exactly
// the lease a token names. Its broken switches are negative controls.
type IdealLeases struct {
	rng                *rand.Rand
	chunks             map[string]*idealChunk
	minDelay, maxDelay time.Duration
	LossRate           float64       // the request is applied, the reply lost
	FailRate           float64       // answered error 11, nothing applied
	StormFrom          time.Duration // from then on every request fails (or is lost)
	StormLoss          bool
	lastToken          int64            // tokens are 1, 2, 3, ... across all chunks
	serverTokens       map[string]int64 // TokenPerServer: each server's own count

	GrantBlindly   bool // broken: a grant always makes the requester primary
	Shrink         bool // broken: a renewal replaces the holder's leases (a shorter one shrinks the protection)
	ReleaseAnyone  bool // broken: a release ends the holder's leases up to its token, whichever server sent it
	TokenPerServer bool // broken: each server counts its own tokens (they collide and do not grow across servers)
	NoTokens       bool // broken: ok grants and renews carry no token
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

// NewIdealLeases is a correct service whose random choices (delays,
// losses, failures) come from seed; set its fields to break it.
func NewIdealLeases(seed int64) *IdealLeases {
	return &IdealLeases{rng: rand.New(rand.NewPCG(uint64(seed), 99)), chunks: map[string]*idealChunk{},
		minDelay: time.Millisecond, maxDelay: 30 * time.Millisecond, StormFrom: workloads.Never, serverTokens: map[string]int64{}}
}

type idealRequest struct {
	Type        string `json:"type"`
	ChunkHandle string `json:"chunk_handle"`
	Server      string `json:"server"`
	LeaseMs     int64  `json:"lease_ms"`
	Token       *int64 `json:"token"`
}

// Handle answers one request (Service).
func (s *IdealLeases) Handle(now time.Duration, _ int, raw json.RawMessage) (json.RawMessage, time.Duration) {
	delay := s.minDelay + time.Duration(s.rng.Int64N(int64(s.maxDelay-s.minDelay)+1))
	if now >= s.StormFrom {
		if s.StormLoss {
			return nil, 0
		}
		return json.RawMessage(`{"type":"error","code":11,"text":"no majority answered"}`), delay
	}
	if s.rng.Float64() < s.FailRate {
		return json.RawMessage(`{"type":"error","code":11,"text":"no majority answered"}`), delay
	}
	var req idealRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		panic(err)
	}
	reply := s.apply(now, req)
	if s.rng.Float64() < s.LossRate {
		return nil, 0
	}
	return reply, delay
}

func (s *IdealLeases) apply(now time.Duration, req idealRequest) json.RawMessage {
	c := s.chunks[req.ChunkHandle]
	if c == nil {
		c = &idealChunk{}
		s.chunks[req.ChunkHandle] = c
	}
	live := c.live(now)
	switch req.Type {
	case "lease_grant":
		if live && c.holder != req.Server && !s.GrantBlindly {
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
func (s *IdealLeases) hold(now time.Duration, c *idealChunk, req idealRequest) string {
	if !c.live(now) || c.holder != req.Server || s.Shrink {
		c.leases = c.leases[:0]
	}
	c.leases = slices.DeleteFunc(c.leases, func(l idealLease) bool { return l.endAt <= now })
	token := s.token(req.Server)
	c.holder, c.seen = req.Server, true
	c.leases = append(c.leases, idealLease{token, now + time.Duration(req.LeaseMs)*time.Millisecond})
	if s.NoTokens {
		return ""
	}
	return fmt.Sprintf(`,"token":%d`, token)
}

func (s *IdealLeases) token(server string) int64 {
	if s.TokenPerServer {
		s.serverTokens[server]++
		return s.serverTokens[server]
	}
	s.lastToken++
	return s.lastToken
}

// release ends the holder's leases whose tokens are at most token (rule 6 of package lease).
func (s *IdealLeases) release(now time.Duration, c *idealChunk, server string, token int64) {
	if c.holder != server && !s.ReleaseAnyone {
		return
	}
	for i := range c.leases {
		if c.leases[i].token <= token {
			c.leases[i].endAt = min(c.leases[i].endAt, now)
		}
	}
}
