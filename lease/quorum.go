package lease

import (
	"math/bits"
	"slices"
)

// tally is a set of acceptors, indexed by their position in the configured
// acceptor list. Quorums are counted by distinct acceptor (rule 2):
// a duplicated response never counts twice. The acceptor set is limited to
// 64 members so that a tally is one machine word.
type tally struct {
	set uint64
	// perMessage is a test-only weakening: every response counts, even a
	// duplicate. See weaken.go.
	perMessage bool
	dupes      int
}

// add records acceptor i and reports whether it was new. A duplicate
// changes nothing, except under the per-message weakening.
func (t *tally) add(i int) bool {
	bit := uint64(1) << uint(i)
	if t.set&bit != 0 {
		if t.perMessage {
			t.dupes++
			return true
		}
		return false
	}
	t.set |= bit
	return true
}

// has reports whether acceptor i is in the set.
func (t *tally) has(i int) bool { return t.set&(uint64(1)<<uint(i)) != 0 }

// count is the number of distinct acceptors recorded (plus duplicates under
// the per-message weakening).
func (t *tally) count() int { return bits.OnesCount64(t.set) + t.dupes }

// majority is the quorum size for n acceptors: any two majorities share at
// least one acceptor.
func majority(n int) int { return n/2 + 1 }

// judgeRead decides who holds a chunk from one read: servers[i] is the
// server whose live lease the i-th responding acceptor reported ("" for
// none), each acceptor at most once, out of n acceptors with quorum q.
//
// If server S held the chunk throughout the read, a majority M of acceptors
// kept a live record of S throughout (no acceptor overwrites another
// server's live lease, and exact release never clears a lease its holder
// still uses). Of r responses at least |M ∩ R| >= q + r - n come from M
// and all of them report S. So a server reported fewer than q + r - n times
// cannot be the holder. judgeRead returns:
//   - the one server reported at least q + r - n times, if exactly one is;
//   - "" with decided=true if none is: nobody held throughout;
//   - decided=false if two are (possible only when r < n): the read is
//     ambiguous and must be repeated or answered with error 11.
//
// Picking the highest ballot would be wrong: an abandoned attempt can
// leave a live record with a higher ballot than the real holder's.
func judgeRead(servers []string, n, q int) (holder string, decided bool) {
	return judgeReadAt(servers, q, q+len(servers)-n)
}

// judgeReadAt is judgeRead with the threshold given: a server held the
// chunk throughout the read only if at least threshold answers report it.
// Fewer than q answers decide nothing.
func judgeReadAt(servers []string, q, threshold int) (holder string, decided bool) {
	if len(servers) < q {
		return "", false
	}
	found := 0
	for i, s := range servers {
		if s == "" || slices.Contains(servers[:i], s) {
			continue
		}
		if countOf(servers, s) >= threshold {
			holder = s
			found++
		}
	}
	if found > 1 {
		return "", false
	}
	return holder, true
}

func countOf(servers []string, s string) int {
	c := 0
	for _, x := range servers {
		if x == s {
			c++
		}
	}
	return c
}
