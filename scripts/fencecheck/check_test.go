package main

import (
	"math/rand/v2"
	"strings"
	"testing"

	"chunklease/internal/testseed"
)

// TestStaleAccepted: a token below one accepted before on the same chunk
// is stale, whatever came between; equal tokens and other chunks are not.
func TestStaleAccepted(t *testing.T) {
	var v verdict
	staleAccepted([]storeWrite{
		{"ch_1", 5, 1}, {"ch_1", 5, 2}, {"ch_2", 3, 3}, {"ch_1", 9, 4}, {"ch_1", 7, 5}, {"ch_2", 4, 6}, {"ch_1", 9, 7},
	}, &v)
	if v.staleAccepted != 1 || !strings.Contains(v.details[0], "ch_1 took token 7 (write 5) after token 9 (write 4)") {
		t.Fatalf("stale %d, details %v; want one: 7 after 9", v.staleAccepted, v.details)
	}
}

// TestOverlaps: intervals of one holder may touch or overlap each other;
// two holders' intervals that overlap by 1 ns are caught (the negative
// control), touching ones are not, and only checked-valid ones count.
func TestOverlaps(t *testing.T) {
	act := func(h string, from, to int64, held bool) actRecord {
		return actRecord{Holder: h, FromNs: from, ToNs: to, Held: held}
	}
	cases := []struct {
		name string
		acts []actRecord
		want int
	}{
		{"one holder", []actRecord{act("a", 0, 10, true), act("a", 5, 20, true)}, 0},
		{"touching handover", []actRecord{act("a", 0, 10, true), act("b", 10, 20, true)}, 0},
		{"overlap by 1 ns", []actRecord{act("a", 0, 10, true), act("b", 9, 20, true)}, 1},
		{"overlap not checked valid", []actRecord{act("a", 0, 10, true), act("b", 5, 20, false)}, 0},
		{"inside a long one, behind the same holder's", []actRecord{act("a", 0, 100, true), act("b", 10, 20, true), act("b", 30, 40, true)}, 2},
		{"behind a later end of the same holder", []actRecord{act("b", 0, 50, true), act("a", 10, 100, true), act("a", 60, 70, true)}, 1},
	}
	for _, c := range cases {
		var v verdict
		overlaps(c.acts, &v)
		if v.overlaps != c.want {
			t.Errorf("%s: %d overlaps, want %d (%v)", c.name, v.overlaps, c.want, v.details)
		}
	}
}

// TestOverlapsAgainstBruteForce: the sweep counts what comparing every
// pair counts, on random intervals of 3 holders.
func TestOverlapsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Get(t), 1))
	for range 2000 {
		acts := make([]actRecord, 1+rng.IntN(8))
		for i := range acts {
			from := rng.Int64N(100)
			acts[i] = actRecord{Holder: string(rune('a' + rng.IntN(3))), FromNs: from, ToNs: from + rng.Int64N(30), Held: rng.IntN(4) > 0}
		}
		var v verdict
		overlaps(acts, &v)
		want := 0
		for j, b := range acts {
			for i, a := range acts {
				earlier := a.FromNs < b.FromNs || (a.FromNs == b.FromNs && i < j)
				if i != j && a.Held && b.Held && a.Holder != b.Holder && earlier && b.FromNs < a.ToNs {
					want++
					break
				}
			}
		}
		if v.overlaps != want {
			t.Fatalf("intervals %+v: the sweep counts %d, every pair %d", acts, v.overlaps, want)
		}
	}
}
