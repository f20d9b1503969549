package clock

import (
	"testing"
	"time"
)

func TestRealClockIsTheMachines(t *testing.T) {
	c := Real()
	a := c.Now()
	time.Sleep(2 * time.Millisecond) // elapsed time is what is measured, not a synchronisation
	b := c.Now()
	if b-a < 2*time.Millisecond {
		t.Fatalf("Now advanced %v over a 2 ms sleep", b-a)
	}
	if d := c.Wall().Sub(time.Now()); d > time.Millisecond || d < -time.Millisecond {
		t.Fatalf("Wall is %v from time.Now()", d)
	}
	if got := c.RealDelay(5 * time.Millisecond); got != 5*time.Millisecond {
		t.Fatalf("RealDelay(5ms) = %v at rate 1", got)
	}
	if c.Changed() != nil {
		t.Fatal("a real clock has a Changed channel")
	}
}

func TestSetKeepsNowContinuousAndScalesDelays(t *testing.T) {
	c := Real()
	before := c.Now()
	c.set(30*time.Second, 2)
	after := c.Now()
	if after < before || after-before > 50*time.Millisecond {
		t.Fatalf("Now jumped from %v to %v at a rate change", before, after)
	}
	if got := c.RealDelay(10 * time.Millisecond); got != 5*time.Millisecond {
		t.Fatalf("RealDelay(10ms) at rate 2 = %v, want 5ms", got)
	}
	if d := c.Wall().Sub(time.Now()); d < 29*time.Second || d > 31*time.Second {
		t.Fatalf("Wall is %v ahead, want about 30 s", d)
	}
	ch := c.Changed()
	c.set(30*time.Second, 2) // no change: nothing closes
	select {
	case <-ch:
		t.Fatal("Changed closed without a change")
	default:
	}
	c.set(0, 0.5)
	select {
	case <-ch:
	default:
		t.Fatal("Changed not closed at a change")
	}
	if off, rate := c.Skew(); off != 0 || rate != 0.5 {
		t.Fatalf("Skew = %v, %v", off, rate)
	}
}
