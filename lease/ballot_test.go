package lease

import (
	"testing"
	"time"
)

func TestBallotCompare(t *testing.T) {
	b := func(c uint64, inc int64, n string) Ballot { return Ballot{Counter: c, Incarnation: inc, Node: n} }
	tests := []struct {
		a, b Ballot
		want int
	}{
		{b(1, 1, "n1"), b(1, 1, "n1"), 0},
		{b(1, 9, "n9"), b(2, 1, "n1"), -1}, // counter first: catching up beats everything else
		{b(2, 1, "n1"), b(1, 9, "n9"), 1},
		{b(3, 1, "n2"), b(3, 2, "n1"), -1}, // then incarnation: a restart never reuses a ballot
		{b(3, 2, "n1"), b(3, 2, "n2"), -1}, // then node: two nodes never issue the same ballot
		{Ballot{}, b(1, 0, ""), -1},        // the zero ballot is below every issued one
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

func TestBallotSourceCatchesUpAndStaysUnique(t *testing.T) {
	old := ballotSource{incarnation: 1, node: "n1"}
	first := old.next()
	old.observe(Ballot{Counter: 41, Incarnation: 7, Node: "n2"})
	if b := old.next(); b.Counter != 42 {
		t.Fatalf("after observing counter 41 the next ballot is %v, want counter 42", b)
	}
	old.observe(Ballot{Counter: 3}) // lower ballots never move the counter back
	if b := old.next(); b.Counter != 43 {
		t.Fatalf("observing a lower ballot moved the counter: %v", b)
	}
	// A restart without disk starts the counter again but at a higher
	// incarnation: the first ballot after restart differs from the first
	// before it.
	restarted := ballotSource{incarnation: 2, node: "n1"}
	if again := restarted.next(); again == first || again.Compare(first) <= 0 {
		t.Fatalf("ballot after restart %v is not above the first ballot before it %v", again, first)
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
