package client

import "time"

// inflightLimit is how many requests a batching client keeps in flight to
// one member before calls queue (batch.go). It has no fixed value: it
// follows the member's answers, as TCP Vegas follows a path's delay. The
// member's quickest recent answer (the least round trip over the last
// one to two baseWindows) is what a request costs when nothing waits at
// the member: the network's round trip and the member's own work. When
// the answers' smoothed round trip grows past queueingRatio times that,
// requests are waiting at the member, behind each other: more of them in
// flight would only wait longer, and together in one batch they cost the
// member (a request, a round to each peer) once instead of once each. So
// the limit comes down (to four fifths of what was in flight, never
// below minInFlight), and calls made meanwhile queue and go as one
// batch. When the smoothed round trip is back within clearRatio of the
// quickest, nothing waits at the member, and each answer adds one to
// the limit. It starts at maxInFlight: a client that has seen no
// queueing keeps no cap, and a member far away (a round trip of many
// milliseconds that more requests do not lengthen) never brings it
// down.
type inflightLimit struct {
	limit     float64
	srtt      time.Duration // smoothed round trip (1/8 of each new answer)
	baseCur   time.Duration // the quickest answer since baseSince
	basePrev  time.Duration // the quickest answer of the window before
	baseSince time.Time
}

const (
	// minInFlight is the least the limit comes down to: 2 measured best
	// on 2 cores, where the CPU is always the limit (against 1, 4 and 8).
	minInFlight = 2
	// maxInFlight is the limit before any queueing was seen.
	maxInFlight = 1 << 12
	// queueingRatio and clearRatio: a smoothed round trip above the
	// first times the quickest means requests wait at the member; below
	// the second, they do not.
	queueingRatio = 2.0
	clearRatio    = 1.5
	// baseWindow is how long the quickest answer is remembered: long
	// enough to span bursts, short enough to follow a member that moved
	// farther away.
	baseWindow = 10 * time.Second
)

func newInflightLimit() inflightLimit { return inflightLimit{limit: maxInFlight} }

// allows says whether one more request may go out with n in flight.
func (l *inflightLimit) allows(n int) bool { return float64(n) < l.limit }

// observe takes a request's round trip (sent to answered, at now) with
// inFlight requests in flight when it was answered, itself included.
func (l *inflightLimit) observe(rtt time.Duration, inFlight int, now time.Time) {
	if rtt <= 0 {
		return
	}
	if l.baseSince.IsZero() || now.Sub(l.baseSince) >= baseWindow {
		l.basePrev, l.baseCur, l.baseSince = l.baseCur, rtt, now
	}
	l.baseCur = min(l.baseCur, rtt)
	base := l.baseCur
	if l.basePrev > 0 {
		base = min(base, l.basePrev)
	}
	if l.srtt == 0 {
		l.srtt = rtt
	} else {
		l.srtt += (rtt - l.srtt) / 8
	}
	switch ratio := float64(l.srtt) / float64(base); {
	case ratio > queueingRatio:
		l.limit = max(minInFlight, min(l.limit, float64(inFlight))*0.8)
	case ratio < clearRatio && float64(inFlight) >= l.limit-1:
		l.limit = min(maxInFlight, l.limit+1)
	}
}
