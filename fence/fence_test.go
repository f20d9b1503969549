package fence

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"chunklease/internal/testseed"
)

// TestDoRules: a lower token is refused with a StaleError naming both
// tokens, an equal or higher one accepted and recorded, resources are
// apart, a failed write keeps its token recorded, and tokens outside
// 0 < token < 2^53 are refused before anything is recorded.
func TestDoRules(t *testing.T) {
	f := New()
	var log []string
	write := func(s string) func() error { return func() error { log = append(log, s); return nil } }
	if err := f.Do("ch_1", 10, write("a10")); err != nil {
		t.Fatal(err)
	}
	if err := f.Do("ch_1", 10, write("a10 again")); err != nil {
		t.Fatalf("an equal token: %v", err)
	}
	err := f.Do("ch_1", 9, write("b9"))
	var stale *StaleError
	if !errors.As(err, &stale) || !errors.Is(err, ErrStale) || stale.Token != 9 || stale.Highest != 10 || stale.Resource != "ch_1" ||
		!strings.Contains(err.Error(), `"ch_1" refused token 9: a write with token 10 was accepted already`) {
		t.Fatalf("a lower token: %v", err)
	}
	if err := f.Do("ch_2", 3, write("c3")); err != nil || f.Highest("ch_2") != 3 || f.Highest("ch_1") != 10 {
		t.Fatalf("another resource: %v, highest %d and %d", err, f.Highest("ch_2"), f.Highest("ch_1"))
	}
	failed := errors.New("disk full")
	if err := f.Do("ch_1", 12, func() error { return failed }); !errors.Is(err, failed) || f.Highest("ch_1") != 12 {
		t.Fatalf("a failed write: %v, highest %d; want its error and 12 recorded", err, f.Highest("ch_1"))
	}
	if err := f.Do("ch_1", 11, write("d11")); !errors.Is(err, ErrStale) {
		t.Fatalf("below a failed write's token: %v", err)
	}
	for _, bad := range []int64{0, -1, 1 << 53} {
		if err := f.Do("ch_3", bad, write("bad")); !errors.Is(err, ErrBadToken) || f.Highest("ch_3") != 0 {
			t.Fatalf("token %d: %v, highest %d", bad, err, f.Highest("ch_3"))
		}
	}
	if want := []string{"a10", "a10 again", "c3"}; fmt.Sprint(log) != fmt.Sprint(want) {
		t.Fatalf("writes %v, want %v", log, want)
	}
	if err := f.Raise("ch_1", 5); err != nil || f.Highest("ch_1") != 12 {
		t.Fatalf("Raise below: %v, highest %d; a raise never lowers", err, f.Highest("ch_1"))
	}
	if err := f.Raise("ch_4", 40); err != nil || !errors.Is(f.Do("ch_4", 39, write("e39")), ErrStale) {
		t.Fatal("a raised token must refuse lower ones")
	}
}

// doFunc is Do's shape, so the concurrency test can run a broken fence.
type doFunc func(resource string, token int64, write func() error) error

// unlockedDo is the negative control: it checks and records under a
// lock, as Do does, but writes after releasing it.
func unlockedDo() doFunc {
	var mu sync.Mutex
	highest := map[string]int64{}
	return func(resource string, token int64, write func() error) error {
		mu.Lock()
		if token < highest[resource] {
			h := highest[resource]
			mu.Unlock()
			return &StaleError{Resource: resource, Token: token, Highest: h}
		}
		highest[resource] = token
		mu.Unlock()
		return write()
	}
}

// store is what the writers change: per resource, the tokens of the
// writes applied, in order, and a count of writes in progress. Its own
// lock only keeps the test free of data races when the fence under test
// is broken; the fence must serialise the writes.
type store struct {
	inWrite atomic.Int32
	mu      sync.Mutex
	applied []int64
}

// concurrentWriters runs 8 writers, 300 writes each, over 3 resources,
// with tokens from one growing counter, some drawn a little behind it
// (late writers). It returns what broke the storage's rules: two writes
// to one resource at once, a resource whose applied tokens go back, a
// refusal of a token at least the highest applied, or a count that does
// not add up.
func concurrentWriters(seed uint64, do doFunc) []string {
	stores := []*store{{}, {}, {}}
	var counter atomic.Int64
	var accepted, refused atomic.Int64
	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for range 300 {
				i := rng.IntN(len(stores))
				s := stores[i]
				token := max(counter.Add(1)-rng.Int64N(4), 1)
				err := do(fmt.Sprint("ch_", i), token, func() error {
					if s.inWrite.Add(1) != 1 {
						problem("two writes to ch_%d at once", i)
					}
					runtime.Gosched() // a write takes time: widen the window a broken fence leaves
					s.mu.Lock()
					s.applied = append(s.applied, token)
					s.mu.Unlock()
					s.inWrite.Add(-1)
					return nil
				})
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, ErrStale):
					refused.Add(1)
				default:
					problem("write with token %d: %v", token, err)
				}
			}
		}()
	}
	wg.Wait()
	applied := 0
	for i, s := range stores {
		applied += len(s.applied)
		for k := 1; k < len(s.applied); k++ {
			if s.applied[k] < s.applied[k-1] {
				problem("ch_%d: token %d applied after token %d", i, s.applied[k], s.applied[k-1])
				break
			}
		}
	}
	if int64(applied) != accepted.Load() || accepted.Load()+refused.Load() != 8*300 {
		problem("%d writes applied, %d accepted, %d refused of %d", applied, accepted.Load(), refused.Load(), 8*300)
	}
	return problems
}

// TestConcurrentWriters: the Fence keeps every rule under concurrent
// writers, and refuses some late ones.
func TestConcurrentWriters(t *testing.T) {
	seed := testseed.Get(t)
	f := New()
	if problems := concurrentWriters(seed, f.Do); len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
}

// TestConcurrentWritersNegativeControl: a fence that writes after
// releasing its lock lets a late write land after a newer one; the
// checker must find it within 50 rounds (it usually does in the first).
func TestConcurrentWritersNegativeControl(t *testing.T) {
	seed := testseed.Get(t)
	for round := range 50 {
		if problems := concurrentWriters(seed+uint64(round), unlockedDo()); len(problems) > 0 {
			t.Logf("caught in round %d: %v", round+1, problems[0])
			return
		}
	}
	t.Fatal("a fence that does not hold its lock across the write was not caught in 50 rounds")
}
