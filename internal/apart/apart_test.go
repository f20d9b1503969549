package apart

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// message is an element with pointers, as lease.Msg is: its channels
// keep their buffers apart from their headers.
type message struct {
	from, to string
	body     *int
}

// TestChansAreUsableAndApart: the channels work as made, no two headers
// start within Distance of each other, and the spacers are channels of
// their own. Checked against the former spacers (unbuffered channels,
// of another size class): the headers came out 112 bytes apart and this
// test failed.
func TestChansAreUsableAndApart(t *testing.T) {
	for trial := range 20 {
		chans, spacers := Chans[message](4, 512)
		if len(chans) != 4 || len(spacers) < 4*spacersPerChan {
			t.Fatalf("got %d channels and %d spacers, want 4 and at least %d", len(chans), len(spacers), 4*spacersPerChan)
		}
		for i, c := range chans {
			if cap(c) != 512 {
				t.Fatalf("channel %d has capacity %d, want 512", i, cap(c))
			}
			c <- message{from: "a"}
			if got := <-c; got.from != "a" {
				t.Fatalf("channel %d gave %+v", i, got)
			}
			for j := range i {
				if a, b := header(c), header(chans[j]); !far(a, b) {
					t.Fatalf("trial %d: the headers of channels %d and %d start %d bytes apart, want %d or more", trial, j, i, int64(a-b), Distance)
				}
			}
			for _, s := range spacers {
				if s == c {
					t.Fatalf("channel %d is also a spacer", i)
				}
			}
		}
		runtime.KeepAlive(spacers)
	}
}

// TestEachRunsEveryBuildOnce for one build (unfenced), as many as Ps,
// and more (one after another then), each fenced when there are several.
func TestEachRunsEveryBuildOnce(t *testing.T) {
	for _, n := range []int{1, runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0) + 3} {
		ran := make([]atomic.Int32, n)
		fences := Each(n, func(i int) { ran[i].Add(1) })
		if len(fences) != n {
			t.Fatalf("n=%d: %d fences", n, len(fences))
		}
		for i := range ran {
			if got := ran[i].Load(); got != 1 {
				t.Fatalf("n=%d: build %d ran %d times", n, i, got)
			}
			if n > 1 && len(fences[i]) == 0 {
				t.Fatalf("n=%d: build %d has no fence", n, i)
			}
		}
	}
}

// TestEachKeepsBuildsApart: objects that two builds of one Each make
// (one of a small size class each) lie Distance or more apart, where
// the same two made one after another lie side by side. Placement is
// the allocator's, so the claim is counted over trials: in nearly all
// of them (a span reused by the collector may bring two together).
// The negative control is the same count without Each.
func TestEachKeepsBuildsApart(t *testing.T) {
	const trials = 50
	apartWith := count(trials, func() (a, b *[6]*byte) {
		var made [2]*[6]*byte
		keep := Each(2, func(i int) { made[i] = new([6]*byte) })
		runtime.KeepAlive(keep)
		return made[0], made[1]
	})
	if apartWith < trials*9/10 {
		t.Errorf("with Each, %d of %d pairs lay %d bytes or more apart, want at least %d", apartWith, trials, Distance, trials*9/10)
	}
	apartWithout := count(trials, func() (a, b *[6]*byte) {
		return new([6]*byte), new([6]*byte)
	})
	if apartWithout > trials/2 {
		t.Errorf("negative control: made one after another, %d of %d pairs lay apart; the check cannot tell", apartWithout, trials)
	}
}

// count runs pair trials times and counts the pairs that lie Distance
// or more apart.
func count(trials int, pair func() (a, b *[6]*byte)) int {
	apart := 0
	var keep []*[6]*byte
	for range trials {
		a, b := pair()
		keep = append(keep, a, b)
		pa, pb := header(a), header(b)
		if far(pa, pb) {
			apart++
		}
	}
	runtime.KeepAlive(keep)
	return apart
}
