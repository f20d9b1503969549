package apart

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Distance is how far apart, in bytes, Chans puts the starts of the
// channels' headers: a header (96 to 112 bytes) and a pair of 64-byte
// lines (x86 fetches lines in adjacent pairs) beyond it, rounded up.
const Distance = 256

// maxTries bounds the channels made for one that Chans returns: past it
// the last one made is taken as it is (this is about speed, never about
// what the program computes, so it must not loop for ever on an
// allocator that places otherwise).
const maxTries = 16

// spacersPerChan is how many spacers Chans makes after each channel:
// with headers of 96 to 112 bytes, three cover Distance.
const spacersPerChan = 3

// Chans makes n channels of capacity size whose headers start at least
// Distance bytes from one another, and returns with them the spacers
// for the caller to keep for as long as the channels.
func Chans[T any](n, size int) (chans []chan T, spacers []chan T) {
	for len(chans) < n {
		var c chan T
		for try := 0; ; try++ {
			c = make(chan T, size)
			if try == maxTries-1 || farFromAll(header(c), chans) {
				break
			}
			spacers = append(spacers, c) // its slot must not take another
		}
		chans = append(chans, c)
		for range spacersPerChan {
			// A spacer of capacity 1 is made the way the channel is
			// (for an element with pointers, a header of its own and
			// the buffer apart) and so lands in the channels' size
			// class, in the slots after it. An unbuffered channel is
			// made otherwise (a header without pointers, another
			// class) and would space nothing.
			spacers = append(spacers, make(chan T, 1))
		}
	}
	return chans, spacers
}

// header is where the header of a channel (or map) value lies: the
// value is a pointer to it.
func header[T any](v T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&v))
}

// farFromAll reports whether the header at a starts Distance or more
// from each of chans'.
func farFromAll[T any](a uintptr, chans []chan T) bool {
	for _, c := range chans {
		if !far(a, header(c)) {
			return false
		}
	}
	return true
}

// far reports whether addresses a and b lie Distance or more apart.
// (Unsigned: one of a-b and b-a wraps around and is huge.)
func far(a, b uintptr) bool {
	return a-b >= Distance && b-a >= Distance
}

// Fence returns objects for the caller to keep that take the next free
// slots of every size class up to 1 KiB, with pointers and without, at
// least Distance bytes' worth in each: what this goroutine's P allocates
// after it lies past them. About 45 KiB.
func Fence() []any {
	var keep []any
	for size := 16; size <= maxFenced; size += fenceStep(size) {
		for range Distance/size + 1 {
			keep = append(keep, make([]byte, size), make([]*byte, size/8))
		}
	}
	return keep
}

// maxFenced is the largest size class Fence covers. A larger object
// spans many lines, and shares at most its first and last with its
// neighbours.
const maxFenced = 1024

// fenceStep walks every size class up to maxFenced: below 256 bytes the
// classes are multiples of 16, above it of 32 (runtime/sizeclasses.go);
// a step that lands between two classes allocates the larger one twice.
func fenceStep(size int) int {
	if size < 256 {
		return 16
	}
	return 32
}

// Each runs build(i) for every i < n and returns once all have, with the
// fences to keep for as long as what they built. When the process has n
// Ps or more, each build runs on a goroutine of its own and they run at
// once: each spins until all have started (so each holds a P of its
// own), builds, fences its P's spans, and spins again until all are
// done (so no P runs a second build). Otherwise, or when the others do
// not start within maxWait (a busy machine), they run one after another
// on the Ps they get, a Fence after each. One build has nothing to be
// kept apart from: it runs on the caller's goroutine, unfenced.
//
// build runs on several goroutines at once: it may write only what is
// its own (a slot of its own, by i).
func Each(n int, build func(i int)) (fences [][]any) {
	fences = make([][]any, n)
	if n == 1 {
		build(0)
		return fences
	}
	if n > runtime.GOMAXPROCS(0) {
		for i := range n {
			build(i)
			fences[i] = Fence()
		}
		return fences
	}
	var started, done atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			started.Add(1)
			await(&started, n)
			build(i)
			fences[i] = Fence()
			done.Add(1)
			await(&done, n)
		})
	}
	wg.Wait()
	return fences
}

// maxWait is how long Each's goroutines spin for one another.
const maxWait = 5 * time.Millisecond

// await spins until count reaches n, or maxWait passed.
func await(count *atomic.Int32, n int) {
	deadline := time.Now().Add(maxWait)
	for spins := 0; count.Load() < int32(n); spins++ {
		if spins%1024 == 1023 && time.Now().After(deadline) {
			return
		}
	}
}
