package lease

import (
	"testing"
	"time"
)

func TestBallotCompare(t *testing.T) {
	b := func(c uint64, inc int64) Ballot { return Ballot{Counter: c, Incarnation: inc} }
	tests := []struct {
		a, b Ballot
		want int
	}{
		{b(1, 1), b(1, 1), 0},
		{b(1, 9), b(2, 1), -1}, // counter first: catching up beats everything else
		{b(2, 1), b(1, 9), 1},
		{b(3, 1), b(3, 2), -1},  // then incarnation
		{Ballot{}, b(1, 0), -1}, // the zero ballot is below every issued one
	}
	for _, tt := range tests {
		if got := tt.a.Compare(tt.b); got != tt.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := tt.b.Compare(tt.a); got != -tt.want {
			t.Errorf("%v.Compare(%v) = %d, want %d (antisymmetry)", tt.b, tt.a, got, -tt.want)
		}
	}
}

// TestAtLeastRefusesAReissuedCounter pins the acceptor's promise test: the
// promised ballot itself passes (duplicates), a larger counter passes, and
// an equal counter of another incarnation fails, so a restarted proposer
// can never get a second lease instance accepted under an old token.
func TestAtLeastRefusesAReissuedCounter(t *testing.T) {
	p := Ballot{Counter: 129, Incarnation: 5}
	for _, tt := range []struct {
		b    Ballot
		want bool
	}{
		{p, true},
		{Ballot{Counter: 130, Incarnation: 1}, true},
		{Ballot{Counter: 129, Incarnation: 6}, false},
		{Ballot{Counter: 129, Incarnation: 4}, false},
		{Ballot{Counter: 128, Incarnation: 9}, false},
	} {
		if got := keeps(tt.b, p); got != tt.want {
			t.Errorf("keeps(%v, %v) = %v, want %v", tt.b, p, got, tt.want)
		}
	}
}

func TestBallotSourceLanesCatchUpAndStayUnique(t *testing.T) {
	src := ballotSource{lane: 3, incarnation: 1}
	first := src.next(0)
	if first.Counter != 1<<LaneBits|3 {
		t.Fatalf("first ballot of lane 3 is %v, want counter %d", first, 1<<LaneBits|3)
	}
	src.observe(41<<LaneBits | 5) // another lane's ballot
	if b := src.next(0); b.Counter != 42<<LaneBits|3 {
		t.Fatalf("after observing 41 in lane 5 the next ballot is %v, want 42 in lane 3", b)
	}
	src.observe(3) // lower counters never move it back
	if b := src.next(0); b.Counter != 43<<LaneBits|3 {
		t.Fatalf("observing a lower counter moved the source: %v", b)
	}
	src.observe(maxWire) // a counter beyond 2^53 is ignored
	if b := src.next(0); b.Counter != 44<<LaneBits|3 {
		t.Fatalf("observing a counter beyond 2^53 moved the source: %v", b)
	}
	src.observe(maxWire - 1) // so is one that would leave no ballot below 2^53 above it
	if b := src.next(0); b.Counter != 45<<LaneBits|3 {
		t.Fatalf("observing 2^53-1 moved the source: %v", b)
	}
	src.observe(maxCounter - 1) // the largest counter observed still leaves room
	if b := src.next(0); b.Counter >= maxWire || b.Counter <= maxCounter-1 {
		t.Fatalf("after observing 2^52-1 the next ballot is %v, want one above it and below 2^53", b)
	}
	// Two lanes never issue the same counter.
	other := ballotSource{lane: 4, incarnation: 1}
	if b := other.next(0); b.Counter == first.Counter {
		t.Fatalf("lanes 3 and 4 both issued %d", b.Counter)
	}
}

// TestBallotSourceFollowsTheWallClock: with a wall clock at start, the
// counter never falls below it in milliseconds, so tokens keep growing
// across a restart of the whole cluster (no acceptor remembers anything)
// when the clocks agree.
func TestBallotSourceFollowsTheWallClock(t *testing.T) {
	src := ballotSource{lane: 1, incarnation: 1, wallMs: 1_000_000, start: 5 * time.Second}
	a := src.next(5 * time.Second)
	if a.Counter>>LaneBits != 1_000_000 {
		t.Fatalf("first ballot %v, want the wall clock 1000000 ms in the counter", a)
	}
	b := src.next(7 * time.Second)
	if b.Counter>>LaneBits != 1_002_000 {
		t.Fatalf("ballot 2 s later %v, want 1002000 ms", b)
	}
	restarted := ballotSource{lane: 1, incarnation: 2, wallMs: 1_003_000}
	if c := restarted.next(0); c.Counter <= b.Counter {
		t.Fatalf("after a restart 1 s later the counter %d is not above %d", c.Counter, b.Counter)
	}
}

func TestStretch(t *testing.T) {
	tests := []struct {
		d    time.Duration
		ppm  int64
		want time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 10_000, 1020202021},                           // 1 s * 1.01/0.99, rounded up
		{60 * time.Second, 1_000, 60120120121},                      // 60 s at 0.1%: 120 ms more
		{maxLengthMs * time.Millisecond, 499_999, 1814395161609677}, // a week at the largest rho: no overflow
	}
	for _, tt := range tests {
		got := stretch(tt.d, tt.ppm)
		if got != tt.want {
			t.Errorf("stretch(%v, %d) = %d, want %d", tt.d, tt.ppm, got, tt.want)
		}
		// The defining inequality of rule 5: got*(1-rho) >= d*(1+rho).
		lhs := float64(got) * float64(ppmScale-tt.ppm)
		rhs := float64(tt.d) * float64(ppmScale+tt.ppm)
		if lhs < rhs*(1-1e-12) {
			t.Errorf("stretch(%v, %d) = %v is shorter than d*(1+rho)/(1-rho)", tt.d, tt.ppm, got)
		}
	}
}

func TestFloorMsNeverRoundsUp(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{{999999, 0}, {time.Millisecond, 1}, {1999999, 1}, {-5, 0}, {0, 0}} {
		if got := floorMs(tt.d); got != tt.want {
			t.Errorf("floorMs(%d) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
