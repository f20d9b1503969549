package peer

import (
	"encoding/binary"
	"time"
)

// Liveness: every member pings every other member on its outgoing
// connection each PingInterval; the member answers with a pong on its own
// outgoing connection (this node's incoming one), echoing the ping's send
// time. A member is reachable while a pong has echoed a ping sent within
// the last ReadyWindow: a round trip through both connections, made
// recently, is the evidence, and a connection that merely stays
// ESTABLISHED (a paused process, a partition that drops packets silently)
// is not. A connection that carried no answer for DeadAfter (outgoing) or
// no frame at all for DeadAfter (incoming) is closed and dialled again.
//
// A member in its boot wait answers every ping, with bootingBit set in
// the echoed stamp: it is reachable, so its connections stay up, but
// Serving is false for it, since its acceptor answers no lease message
// until the wait is over (a majority counted for readiness must be able
// to vote). A member of an earlier version sees such a pong as a stamp it
// never sent and ignores it: to it the booting member is unreachable,
// which is what readiness wants.
//
// Pings and pongs never reach the lease core: they are frames whose
// payload starts with a type code above every lease.Msg type, handled by
// the transport's readers. The times are the transport's own real,
// monotonic clock (time since New), not the node's clock, which a clock
// nemesis may skew: reachability is about the network, not about leases.

// Defaults of the liveness settings in Config.
const (
	// DefaultPingInterval and readyPings make the readiness window 500
	// ms: /readyz follows a member cut off within half a second, and a
	// member stays reachable through pongs delayed by up to 400 ms (a
	// loaded machine), each ping answered in time being enough.
	DefaultPingInterval = 100 * time.Millisecond
	readyPings          = 5   // ReadyWindow = readyPings * PingInterval
	deadPings           = 100 // DeadAfter = deadPings * PingInterval: 10 s
)

// Control frame payloads: a type code, then the ping's send time in
// nanoseconds since the sender's transport started (8 bytes, big-endian).
const (
	ctlPing      = 0xF0
	ctlPong      = 0xF1
	ctlLen       = 1 + 8
	ctlFrameSize = frameHeaderLen + ctlLen
	// bootingBit marks a pong from a member in its boot wait; stamps are
	// below 2^63 ns (292 years of uptime), so it never collides.
	bootingBit = uint64(1) << 63
)

// ReadyWindow is how recent an answered ping must be for its member to be
// reachable.
func (t *Transport) ReadyWindow() time.Duration { return readyPings * t.cfg.PingInterval }

// deadAfter is how long a connection may carry no answer (outgoing) or
// nothing (incoming) before it is closed as dead.
func (t *Transport) deadAfter() time.Duration { return deadPings * t.cfg.PingInterval }

// since is the transport's clock: real time since New, monotonic.
func (t *Transport) since() time.Duration { return time.Since(t.epoch) }

// appendCtl appends a ping or pong frame carrying stamp.
func appendCtl(dst []byte, code byte, stamp time.Duration) []byte {
	dst = binary.BigEndian.AppendUint32(dst, ctlLen)
	dst = append(dst, code)
	return binary.BigEndian.AppendUint64(dst, uint64(stamp))
}

// isCtl reports whether a payload is a ping or a pong.
func isCtl(p []byte) bool { return len(p) == ctlLen && (p[0] == ctlPing || p[0] == ctlPong) }

// onCtl handles a ping (answered on the link back to its sender) or a
// pong (the link's latest answered ping, if newer) from member id.
func (t *Transport) onCtl(id string, p []byte) {
	l := t.members.Load().links[id]
	if l == nil {
		return
	}
	raw := binary.BigEndian.Uint64(p[1:])
	if p[0] == ctlPing {
		if t.cfg.Booting != nil && t.cfg.Booting() {
			raw |= bootingBit
		}
		l.pushCtl(ctlPong, time.Duration(raw))
		l.flush()
		return
	}
	booting := raw&bootingBit != 0
	stamp := time.Duration(raw &^ bootingBit)
	if stamp > t.since() {
		return // not a time this transport sent
	}
	for {
		old := l.answered.Load()
		if int64(stamp) <= old {
			return
		}
		if l.answered.CompareAndSwap(old, int64(stamp)) {
			l.booting.Store(booting)
			return
		}
	}
}

// Reachable reports whether member id answered a ping sent within the
// last ReadyWindow (this node itself always is): both connections carried
// a round trip that recently.
func (t *Transport) Reachable(id string) bool {
	if id == t.cfg.Self {
		return true
	}
	l := t.members.Load().links[id]
	if l == nil {
		return false
	}
	answered := l.answered.Load()
	return answered > 0 && t.since()-time.Duration(answered) < t.ReadyWindow()
}

// Serving reports whether member id is reachable and its latest answer
// said it is past its boot wait: its acceptor votes. This node itself
// always is (its own boot wait is the caller's to check).
func (t *Transport) Serving(id string) bool {
	if id == t.cfg.Self {
		return true
	}
	return t.Reachable(id) && !t.members.Load().links[id].booting.Load()
}

// pingDue sends a ping on the link and reports an error when the
// connection, up since upAt, has had no answer for deadAfter.
func (t *Transport) pingDue(l *link, upAt time.Duration) error {
	now := t.since()
	last := max(time.Duration(l.answered.Load()), upAt)
	if now-last > t.deadAfter() {
		return &deadError{silent: now - last}
	}
	l.pushCtl(ctlPing, now)
	l.flush()
	return nil
}

// deadError is a connection closed because its member stopped answering.
type deadError struct{ silent time.Duration }

func (e *deadError) Error() string {
	return "no answer to pings for " + e.silent.Round(time.Millisecond).String() + " (paused, partitioned or gone); dialling again"
}
