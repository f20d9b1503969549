package fakelease

import (
	"fmt"
	"time"
)

// record is one chunk's lease: its latest instance.
type record struct {
	server string
	token  int64
	end    time.Time // on the caller's clock
}

func (r *record) live(now time.Time) bool { return r != nil && now.Before(r.end) }

// answer is the model's reply: status 200 with fields, or an error.
type answer struct {
	status int
	body   map[string]any
}

func ok(typ string, fields map[string]any) answer {
	fields["type"] = typ
	return answer{status: 200, body: fields}
}

func refuse(status, code int, format string, args ...any) answer {
	return answer{status: status, body: map[string]any{"type": "error", "code": code, "text": fmt.Sprintf(format, args...)}}
}

// req is a decoded lease request.
type req struct {
	op      string
	chunk   string
	server  string
	leaseMs int64
	token   int64
	// hasToken says the release carried a token.
	hasToken bool
}

// perform applies r to the model at now. Called with c.mu held.
func (c *Cluster) perform(n *Node, r req, now time.Time) answer {
	switch r.op {
	case "lease_grant", "lease_renew":
		return c.grantOrRenew(r, now)
	case "lease_check":
		return c.check(r, now)
	case "lease_release":
		return c.release(r, now)
	case "master_start":
		c.master.wanted[n.ID] = true
		c.masterTick(now)
		return ok("master_start_ok", map[string]any{})
	case "master_stop":
		c.master.wanted[n.ID] = false
		if c.master.holder == n.ID {
			c.master.holder, c.master.end = "", now
		}
		return ok("master_stop_ok", map[string]any{})
	case "master_status":
		return c.masterStatus(n, now)
	}
	return refuse(404, 10, "%q is not a lease request type", r.op)
}

func (c *Cluster) grantOrRenew(r req, now time.Time) answer {
	leaseMs := r.leaseMs
	if leaseMs == 0 {
		leaseMs = c.opts.DefaultLeaseMs
	}
	rec := c.chunks[r.chunk]
	if rec.live(now) && rec.server != r.server {
		remaining := c.fakeMs(rec.end.Sub(now))
		if r.op == "lease_renew" {
			return refuse(409, 22, "chunk %q is held by %s for about %d ms more; %s cannot renew it (grant it after it expires)", r.chunk, rec.server, remaining, r.server)
		}
		held := ok("lease_grant_ok", map[string]any{"chunk_handle": r.chunk, "primary": rec.server, "expires_in_ms": remaining, "token": rec.token})
		held.status = 409 // the chunk stays with the holder: 409, the grant's own body
		return held
	}
	c.nextToken++
	end := now.Add(c.realDuration(leaseMs))
	if rec.live(now) && rec.end.After(end) {
		end = rec.end // protection never shrinks
	}
	c.chunks[r.chunk] = &record{server: r.server, token: c.nextToken, end: end}
	if r.op == "lease_renew" {
		return ok("lease_renew_ok", map[string]any{"new_expires_in_ms": leaseMs, "token": c.nextToken})
	}
	return ok("lease_grant_ok", map[string]any{"chunk_handle": r.chunk, "primary": r.server, "expires_in_ms": leaseMs, "token": c.nextToken})
}

func (c *Cluster) check(r req, now time.Time) answer {
	rec := c.chunks[r.chunk]
	if rec == nil {
		return ok("lease_check_ok", map[string]any{"primary": nil, "remaining_ms": 0, "expired": true})
	}
	remaining := int64(0)
	if rec.live(now) {
		remaining = c.fakeMs(rec.end.Sub(now))
	}
	return ok("lease_check_ok", map[string]any{"primary": rec.server, "remaining_ms": remaining, "expired": !rec.live(now)})
}

func (c *Cluster) release(r req, now time.Time) answer {
	if !r.hasToken {
		return refuse(400, 12, "lease_release needs token: the token of the latest grant or renew of %s", r.server)
	}
	if rec := c.chunks[r.chunk]; rec.live(now) && rec.server == r.server && rec.token <= r.token {
		rec.end = now
	}
	return ok("lease_release_ok", map[string]any{"chunk_handle": r.chunk})
}

// masterState is the cluster's master lease.
type masterState struct {
	holder string    // "" when nobody holds it
	end    time.Time // the holder's end, on the caller's clock
	known  string    // the last holder, "" if never
	token  int64     // the holder's token, from the cluster's one counter
	wanted map[string]bool
}

// masterTick brings the master lease up to now: the holder's lease runs
// out, a live and unstalled holder renews once half of it is gone, and a
// free lease goes to the first started member that can take it.
func (c *Cluster) masterTick(now time.Time) {
	m := &c.master
	length := c.realDuration(c.opts.MasterLeaseMs)
	if m.holder != "" && !now.Before(m.end) {
		m.holder = ""
	}
	if m.holder != "" {
		if h := c.byID(m.holder); m.wanted[h.ID] && h.canRenew() && m.end.Sub(now) <= length/2 {
			m.end = now.Add(length)
			c.nextToken++
			m.token = c.nextToken
		}
		return
	}
	for _, n := range c.nodes {
		if m.wanted[n.ID] && n.canRenew() {
			m.holder, m.known, m.end = n.ID, n.ID, now.Add(length)
			c.nextToken++
			m.token = c.nextToken
			return
		}
	}
}

func (c *Cluster) masterStatus(n *Node, now time.Time) answer {
	c.masterTick(now)
	m := &c.master
	fields := map[string]any{"is_master": false, "master": nil, "remaining_ms": 0}
	if m.known != "" {
		fields["master"] = m.known
	}
	if m.holder == n.ID && now.Before(m.end) {
		fields["is_master"], fields["remaining_ms"], fields["token"] = true, c.fakeMs(m.end.Sub(now)), m.token
	}
	return ok("master_status_ok", fields)
}

// realDuration is how long ms of the cluster's clock last on the
// caller's.
func (c *Cluster) realDuration(ms int64) time.Duration {
	return time.Duration(float64(time.Duration(ms)*time.Millisecond) / c.opts.ClockRate)
}

// fakeMs is a duration on the caller's clock in whole ms of the
// cluster's, rounded down (never more than the truth).
func (c *Cluster) fakeMs(d time.Duration) int64 {
	return int64(float64(d) * c.opts.ClockRate / float64(time.Millisecond))
}
