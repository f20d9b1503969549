package apart

import "testing"

// TestChansAreUsableAndApart: the channels work as made, and the spacers
// are as many as promised and distinct from them.
func TestChansAreUsableAndApart(t *testing.T) {
	chans, spacers := Chans[int](3, 4)
	if len(chans) != 3 || len(spacers) != 3*spacersPerChan {
		t.Fatalf("got %d channels and %d spacers, want 3 and %d", len(chans), len(spacers), 3*spacersPerChan)
	}
	for i, c := range chans {
		if cap(c) != 4 {
			t.Fatalf("channel %d has capacity %d, want 4", i, cap(c))
		}
		c <- i
		if got := <-c; got != i {
			t.Fatalf("channel %d gave %d", i, got)
		}
		for _, s := range spacers {
			if s == c {
				t.Fatalf("channel %d is also a spacer", i)
			}
		}
	}
}
