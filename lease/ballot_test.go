package lease

import (
	"fmt"
	"math/rand/v2"
	"strings"
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
	src := ballotSource{lane: 3, incarnation: 1, unit: BallotUnit}
	next := func() Ballot {
		b, _ := src.next(0, 0)
		return b
	}
	first := next()
	if first.Counter != 1<<LaneBits|3 {
		t.Fatalf("first ballot of lane 3 is %v, want counter %d", first, 1<<LaneBits|3)
	}
	src.observe(0, 41<<LaneBits|5) // another lane's ballot
	if b := next(); b.Counter != 42<<LaneBits|3 {
		t.Fatalf("after observing 41 in lane 5 the next ballot is %v, want 42 in lane 3", b)
	}
	src.observe(0, 3) // lower counters never move it back
	if b := next(); b.Counter != 43<<LaneBits|3 {
		t.Fatalf("observing a lower counter moved the source: %v", b)
	}
	src.observe(0, maxWire) // a counter beyond 2^53 is ignored
	if b := next(); b.Counter != 44<<LaneBits|3 {
		t.Fatalf("observing a counter beyond 2^53 moved the source: %v", b)
	}
	src.observe(0, maxWire-1) // so is one that would leave no ballot below 2^53 above it
	if b := next(); b.Counter != 45<<LaneBits|3 {
		t.Fatalf("observing 2^53-1 moved the source: %v", b)
	}
	if b, _ := src.next(0, 99<<LaneBits|5); b.Counter != 100<<LaneBits|3 {
		t.Fatalf("a ballot that must climb past 99 in lane 5 is %v, want 100 in lane 3", b)
	}
	src.observe(0, maxCounter-1) // the largest counter observed still leaves room
	if b := next(); b.Counter >= maxWire || b.Counter <= maxCounter-1 {
		t.Fatalf("after observing 2^52-1 the next ballot is %v, want one above it and below 2^53", b)
	}
	// Two lanes never issue the same counter.
	other := ballotSource{lane: 4, incarnation: 1, unit: BallotUnit}
	if b, _ := other.next(0, 0); b.Counter == first.Counter {
		t.Fatalf("lanes 3 and 4 both issued %d", b.Counter)
	}
}

// wallSource is the ballot source of node 2 of 3 started at core time
// start with the wall clock at wallMs and leases of at most maxMs.
func wallSource(t *testing.T, wallMs, maxMs int64, start time.Duration) ballotSource {
	t.Helper()
	cfg := Config{ID: "n2", Acceptors: []string{"n1", "n2", "n3"}, Incarnation: 7, Nonce: 1, WallMs: wallMs, MaxLeaseMs: maxMs}
	return newBallotSource(cfg, start)
}

// unitsOf is a counter's time part as wall-clock milliseconds since 1970.
func unitsOf(c uint64) int64 { return CounterEpochMs + int64(c>>LaneBits)/10 }

// TestBallotSourceFollowsTheWallClock: with a wall clock at start, the
// counter's time part never falls below it, in 100 µs units since 2020,
// so tokens keep growing across a restart of the whole cluster (no
// acceptor remembers anything) when the clocks agree.
func TestBallotSourceFollowsTheWallClock(t *testing.T) {
	const wall = 1_763_856_000_000 // 2025-11-23
	src := wallSource(t, wall, 60_000, 5*time.Second)
	a, _ := src.next(5*time.Second, 0)
	if unitsOf(a.Counter) != wall || a.Counter&(1<<LaneBits-1) != 1 {
		t.Fatalf("first ballot %v, want the wall clock %d ms in lane 1", a, int64(wall))
	}
	b, _ := src.next(7*time.Second, 0)
	if unitsOf(b.Counter) != wall+2000 {
		t.Fatalf("ballot 2 s later %v reads %d ms, want %d", b, unitsOf(b.Counter), int64(wall+2000))
	}
	restarted := wallSource(t, wall+3000, 60_000, 0)
	if c, _ := restarted.next(0, 0); c.Counter <= b.Counter {
		t.Fatalf("after a restart 1 s later the counter %d is not above %d", c.Counter, b.Counter)
	}
}

// TestBallotSourcePaces: a burst runs the counter ahead of the wall clock
// by at most L = M/4; the ballot after that waits (next names when), and
// a promise far ahead raises the counter only to the bound, so that the
// node's other chunks do not wait for it.
func TestBallotSourcePaces(t *testing.T) {
	const wall, maxMs = 1_763_856_000_000, 400 // L = 100 ms = 1000 units
	src := wallSource(t, wall, maxMs, 0)
	for i := range 1001 {
		if _, at := src.next(0, 0); at != 0 {
			t.Fatalf("ballot %d of a burst at one instant waits until %v; the first 1001 lead by at most L", i, at)
		}
	}
	if _, at := src.next(0, 0); at != BallotUnit {
		t.Fatalf("ballot 1002 of the burst may be issued at %v, want one unit later (%v)", at, BallotUnit)
	}
	if lead := unitsOf(src.counter) - wall; lead != 100 {
		t.Fatalf("the burst led the wall clock by %d ms, want exactly L = 100", lead)
	}
	far := wallSource(t, wall, maxMs, 0)
	need := uint64(int64(10*time.Second/BallotUnit)+int64(wall-CounterEpochMs)*10) << LaneBits // 10 s ahead
	far.observe(0, need)
	if lead := unitsOf(far.counter) - wall; lead > 100 {
		t.Fatalf("observing a promise 10 s ahead raised the counter %d ms ahead, beyond L", lead)
	}
	if _, at := far.next(0, 0); at != 0 {
		t.Fatalf("after observing it, an attempt that need not climb past it waits until %v", at)
	}
	_, at := far.next(0, need)
	if want := 10*time.Second - 100*time.Millisecond + BallotUnit; at != want {
		t.Fatalf("a ballot above a promise 10 s ahead may be issued at %v, want %v (when it leads by L)", at, want)
	}
	if b, at := far.next(at, need); at != 10*time.Second-100*time.Millisecond+BallotUnit || b.Counter <= need {
		t.Fatalf("at that time the ballot is %v (ready %v), want one above %d", b, at, need)
	}
}

// TestBallotSourceSustainsItsRatedRate is the pacing's promise to load:
// a node issuing a ballot every 100 µs (10 000 a second) for a minute of
// its clock never waits and never leads its wall clock, so the lead bound
// is reserved for bursts and clock disagreement.
func TestBallotSourceSustainsItsRatedRate(t *testing.T) {
	if err := sustainsRatedRate(Config{}); err != nil {
		t.Fatal(err)
	}
}

// sustainsRatedRate runs the rated load against a source built with c's
// weakening, if any.
func sustainsRatedRate(c Config) error {
	cfg := Config{ID: "n1", Acceptors: []string{"n1"}, Incarnation: 1, Nonce: 1, WallMs: 1_763_856_000_000, MaxLeaseMs: 1000, weaken: c.weaken}
	src := newBallotSource(cfg, 0)
	for now := time.Duration(0); now < time.Minute; now += BallotUnit {
		b, at := src.next(now, 0)
		if at != now {
			return fmt.Errorf("at %v (ballot %d a second) the node must wait until %v", now, time.Second/BallotUnit, at)
		}
		if lead := int64(time.Duration(b.Counter>>LaneBits-src.wall(now)) * src.unit); lead > int64(time.Millisecond) {
			return fmt.Errorf("at %v the counter leads the wall clock by %v", now, time.Duration(lead))
		}
	}
	return nil
}

// TestCounterFormat pins the counter's time part: it stays below
// maxCounter for a century from its epoch, and it is above every counter
// of the earlier format (ms since 1970) written after July 2025, so an
// upgrade keeps tokens growing.
func TestCounterFormat(t *testing.T) {
	year := int64(365.25 * 24 * 3600 * 1000)
	century := wallSource(t, CounterEpochMs+100*year, 60_000, 0)
	if b, _ := century.next(0, 0); b.Counter >= maxCounter {
		t.Fatalf("in 2120 the counter is %d, at or above 2^52", b.Counter)
	}
	cfg := Config{ID: "n1", Acceptors: []string{"n1"}, Nonce: 1, MaxLeaseMs: 1000, DefaultLeaseMs: 1000, QuorumTimeoutMs: 1, RoundTimeoutMs: 1,
		Rand: rand.New(rand.NewPCG(1, 1)), WallMs: CounterEpochMs + 112*year}
	if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "WallMs") {
		t.Fatalf("a wall clock in 2132 was accepted: %v", err)
	}
	for _, wallMs := range []int64{1_753_200_000_000, 1_763_856_000_000, 1_900_000_000_000} { // 2025-07-22, -11-23, 2030
		src := wallSource(t, wallMs, 60_000, 0)
		b, _ := src.next(0, 0)
		old := uint64(wallMs+3600_000) << LaneBits // the old format, even an hour ahead
		if b.Counter <= old {
			t.Errorf("at %d ms the counter %d is not above the old format's %d", wallMs, b.Counter, old)
		}
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
