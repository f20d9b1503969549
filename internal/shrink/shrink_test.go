package shrink

import (
	"runtime"
	"testing"
)

// TestMapKeepsEntries grows a map past MinPeak, deletes most of it, and
// checks after every step that Map kept exactly the entries, tracked the
// peak, and copied only below a quarter of it.
func TestMapKeepsEntries(t *testing.T) {
	m, peak := map[int]int{}, 0
	for i := range 4 * MinPeak {
		m[i] = -i
		if m = Map(m, &peak); peak != len(m) {
			t.Fatalf("after insert %d: peak %d, want %d", i, peak, len(m))
		}
	}
	for i := range 4 * MinPeak {
		delete(m, i)
		before := peak
		m = Map(m, &peak)
		switch {
		case before >= MinPeak && 4*len(m) < before && peak != len(m):
			t.Fatalf("after delete %d: %d entries under a quarter of the peak %d, but no copy (peak %d)", i, len(m), before, peak)
		case (before < MinPeak || 4*len(m) >= before) && peak != before:
			t.Fatalf("after delete %d: copied at %d entries, peak %d", i, len(m), before)
		}
		for j := i + 1; j < 4*MinPeak; j++ {
			if v, ok := m[j]; !ok || v != -j {
				t.Fatalf("after delete %d: entry %d is %d, %v", i, j, v, ok)
			}
		}
		if len(m) != 4*MinPeak-i-1 {
			t.Fatalf("after delete %d: %d entries", i, len(m))
		}
	}
}

// TestMapGivesMemoryBack: a map of 256 Ki entries emptied down to ten
// keeps its buckets; through Map the heap returns to near where it was.
func TestMapGivesMemoryBack(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var s runtime.MemStats
		runtime.ReadMemStats(&s)
		return s.HeapAlloc
	}
	for _, use := range []bool{false, true} {
		base := heap()
		m, peak := map[uint64][4]uint64{}, 0
		for i := range uint64(1 << 18) {
			m[i] = [4]uint64{i}
			if use {
				m = Map(m, &peak)
			}
		}
		for i := range uint64(1<<18 - 10) {
			delete(m, i)
			if use {
				m = Map(m, &peak)
			}
		}
		kept := int64(heap()) - int64(base)
		t.Logf("Map used: %v: %d KiB kept for %d entries", use, kept>>10, len(m))
		if use && kept > 256<<10 {
			t.Fatalf("through Map a map of %d entries keeps %d KiB", len(m), kept>>10)
		}
		if !use && kept < 4<<20 {
			t.Fatalf("without Map the emptied map kept only %d KiB: the test no longer shows what Map is for", kept>>10)
		}
		runtime.KeepAlive(m)
	}
}

// TestSliceEmptiesAndDropsTheLarge: Slice clears what s held (a pointer
// left in the buffer would keep its object alive), keeps the buffer up to
// maxCap, and drops one above it.
func TestSliceEmptiesAndDropsTheLarge(t *testing.T) {
	x := 1
	s := make([]*int, 0, 8)
	s = append(s, &x, &x, &x)
	kept := Slice(s, 8)
	if len(kept) != 0 || cap(kept) != 8 {
		t.Fatalf("a buffer within the bound: len %d cap %d, want 0 and 8", len(kept), cap(kept))
	}
	for i, p := range s {
		if p != nil {
			t.Fatalf("element %d still points to its object after Slice", i)
		}
	}
	big := append(make([]*int, 0, 9), &x)
	if got := Slice(big, 8); got != nil {
		t.Fatalf("a buffer above the bound was kept (cap %d)", cap(got))
	}
	if big[0] != nil {
		t.Fatal("a dropped buffer's element still points to its object")
	}
}
