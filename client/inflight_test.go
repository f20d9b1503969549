package client

import (
	"math/rand/v2"
	"testing"
	"time"

	"chunklease/internal/testseed"
)

// member is a member as the limit sees it: requests travel delay one
// way, and the member serves them one at a time in arrival order, each
// taking service (jittered by up to jitter, a fraction).
type member struct {
	delay, service time.Duration
	jitter         float64
}

// drive runs callers in a closed loop against m through l for answers
// answers: the client keeps as many requests in flight as the limit
// allows (all callers at first), and sends again at each answer. It
// returns the limit after every answer.
func drive(l *inflightLimit, rng *rand.Rand, start time.Time, answers, callers int, m member) []float64 {
	type req struct{ sent, answered time.Time }
	var inFlight []req // in answer order: the member serves in arrival order
	free := start      // when the member is next idle
	now := start
	send := func() {
		arrive := now.Add(m.delay)
		begin := arrive
		if free.After(begin) {
			begin = free
		}
		free = begin.Add(time.Duration(float64(m.service) * (1 + m.jitter*rng.Float64())))
		inFlight = append(inFlight, req{now, free.Add(m.delay)})
	}
	var limits []float64
	for range answers {
		for len(inFlight) < callers && l.allows(len(inFlight)) {
			send()
		}
		r := inFlight[0]
		now = r.answered
		l.observe(r.answered.Sub(r.sent), len(inFlight), now)
		inFlight = inFlight[1:]
		limits = append(limits, l.limit)
	}
	return limits
}

// A member far away, whose round trip does not grow with the requests in
// flight (the network's delay, jittered by up to 40%), never brings the
// limit down: a client of 64 callers keeps all 64 in flight.
func TestInflightLimitStaysOpenForAFarMember(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Get(t), 1))
	l := newInflightLimit()
	far := member{delay: 10 * time.Millisecond, service: 20 * time.Microsecond, jitter: 0.4}
	for i, lim := range drive(&l, rng, time.Now(), 20000, 64, far) {
		if lim < 64 {
			t.Fatalf("answer %d: the limit came down to %.1f for a member whose round trip never grew", i, lim)
		}
	}
}

// A member whose round trip grows with the requests in flight (its CPU is
// the limit: each request waits behind the others) brings the limit down
// to minInFlight, and it stays there while the member stays that slow.
func TestInflightLimitComesDownWhenTheMemberQueues(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Get(t), 2))
	l := newInflightLimit()
	busy := member{delay: 25 * time.Microsecond, service: 250 * time.Microsecond, jitter: 0.2}
	limits := drive(&l, rng, time.Now(), 2000, 64, busy)
	for i, lim := range limits[100:] {
		if lim > minInFlight+1 {
			t.Fatalf("answer %d: the limit is %.1f for a member whose round trip grows with every request", 100+i, lim)
		}
	}
	if limits[0] < 64 {
		t.Fatalf("the first answer brought the limit to %.1f before any queueing was seen", limits[0])
	}
}

// When the queueing ends (the member's answers come back as quick as its
// quickest), the limit opens again, one request per answer.
func TestInflightLimitOpensAgainWhenQueueingEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Get(t), 3))
	l := newInflightLimit()
	start := time.Now()
	drive(&l, rng, start, 500, 64, member{delay: 25 * time.Microsecond, service: time.Millisecond})
	if l.limit > minInFlight+1 {
		t.Fatalf("the limit is %.1f after the member queued", l.limit)
	}
	// The member got more cores: the requests no longer wait for each
	// other (a service of nothing), only for the network.
	quick := member{delay: 500 * time.Microsecond, jitter: 0.1}
	limits := drive(&l, rng, start.Add(time.Second), 200, 64, quick)
	if got := limits[len(limits)-1]; got < 64 {
		t.Fatalf("the limit is %.1f after 200 quick answers, want it open for all 64 callers", got)
	}
}

// A member that moved farther away for good (its quickest round trip now
// twice the old) is taken as it is once the old quickest answer is
// forgotten (two windows), and the limit opens again.
func TestInflightLimitFollowsAMemberThatMoved(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Get(t), 4))
	l := newInflightLimit()
	start := time.Now()
	drive(&l, rng, start, 100, 8, member{delay: 500 * time.Microsecond})
	moved := member{delay: 1500 * time.Microsecond, service: 10 * time.Microsecond, jitter: 0.1}
	limits := drive(&l, rng, start.Add(time.Second), 40000, 8, moved) // 8 answers per 3 ms: 15 s
	if got := limits[len(limits)-1]; got < 8 {
		t.Fatalf("the limit is %.1f 15 s after the member moved, want it open again", got)
	}
}
