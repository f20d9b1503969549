package peer

import (
	"net"
	"sync"
	"time"
)

// handshakeSet holds the incoming connections still in their TLS
// handshake and hello, oldest first, at most max. At the cap the oldest
// gives way to the new one if it has been in its handshake for at least
// minEvictAge; otherwise the new one is closed. Refusing new ones only
// would let anyone who can open TCP connections to the peer port keep a
// restarting member out, by holding every slot with silent connections
// (each for the handshake deadline). Evicting always would let a flood
// that redials whatever is closed push itself through every slot in
// microseconds, a member's handshake with it. With both, a member's
// handshake (milliseconds, far under minEvictAge) is never cut once
// admitted, and is admitted at its first dial after a slot has aged.
type handshakeSet struct {
	mu   sync.Mutex
	max  int
	open []*handshake // oldest first; at most max, so a scan is cheap
}

// minEvictAge is how long a connection is left to finish its handshake
// before a newer one may take its slot.
const minEvictAge = time.Second

// handshake is one connection in the set.
type handshake struct {
	conn    net.Conn
	at      time.Time
	evicted bool // closed to make room; guarded by the set's mu
}

// add puts conn in the set. At the cap it returns the oldest connection,
// which it took out to make room (the caller closes it), or, when even
// the oldest is younger than minEvictAge, nil and full: conn was not
// added, and the caller closes it.
func (s *handshakeSet) add(conn net.Conn, now time.Time) (h *handshake, evicted net.Conn, full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) >= s.max {
		old := s.open[0]
		if now.Sub(old.at) < minEvictAge {
			return nil, nil, true
		}
		old.evicted = true
		s.open = s.open[1:]
		evicted = old.conn
	}
	h = &handshake{conn: conn, at: now}
	s.open = append(s.open, h)
	return h, evicted, false
}

// done takes h out of the set once its handshake ended; true if it had
// been evicted.
func (s *handshakeSet) done(h *handshake) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.evicted {
		return true
	}
	for i, o := range s.open {
		if o == h {
			s.open = append(s.open[:i], s.open[i+1:]...)
			break
		}
	}
	return false
}

// rateLimited keeps, per kind of refusal, when it was last logged and how
// many were not logged since.
type rateLimited struct {
	at     time.Time
	missed int
}

// logLimited logs a refusal of kind key at most once a second, with how
// many of that kind went unlogged since the last line: a flood must not
// flood the log too, and one member's refusal must not hide another's.
func (t *Transport) logLimited(key, format string, args ...any) {
	t.logMu.Lock()
	defer t.logMu.Unlock()
	r := t.logged[key]
	if r == nil {
		if len(t.logged) > 1024 {
			clear(t.logged) // keys are member ids and a few kinds; bound it anyway
		}
		r = &rateLimited{}
		t.logged[key] = r
	}
	now := time.Now()
	if !r.at.IsZero() && now.Sub(r.at) < time.Second {
		r.missed++
		return
	}
	if r.missed > 0 {
		format += " (%d more like it since the last such line)"
		args = append(args, r.missed)
	}
	t.cfg.Logf(format, args...)
	r.at, r.missed = now, 0
}
