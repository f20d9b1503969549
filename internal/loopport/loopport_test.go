package loopport

import (
	"net"
	"strconv"
	"testing"
)

// Every port handed out lies in [Low, EphemeralLow()), was free, and is
// handed out once.
func TestNextIsFreeBelowTheRangeAndNeverRepeats(t *testing.T) {
	p := New(1)
	high := EphemeralLow()
	seen := map[int]bool{}
	for range 200 {
		port, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if port < Low || port >= high {
			t.Fatalf("port %d outside [%d, %d)", port, Low, high)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
}

// A port someone listens on is never handed out: the walk skips it.
func TestNextSkipsAPortInUse(t *testing.T) {
	// The first port seed 7 would hand out, held by a listener.
	first, err := New(7).Next()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(first)))
	if err != nil {
		t.Skipf("port %d was taken meanwhile: %v", first, err)
	}
	defer ln.Close()
	got, err := New(7).Next()
	if err != nil {
		t.Fatal(err)
	}
	if got == first {
		t.Fatalf("port %d handed out while a listener held it", got)
	}
}
