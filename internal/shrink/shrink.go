// Package shrink gives a Go map's or a reused slice's memory back after
// a burst. A Go map never shrinks: one that held a million entries keeps
// the buckets for a million when it holds ten, so a map of requests in
// flight would keep the size of the largest burst for the life of the
// process. Map copies a map into a fresh one of the right size once it
// holds under a quarter of the most it held since the last copy; each
// copy costs O(entries), paid for by the three quarters deleted since, so
// the cost per insert or delete stays O(1).
//
// It is not for maps that are ranged over while entries are deleted (the
// copy would be ranged over instead of the original), nor for maps shared
// by reference: the caller stores the result in the one place that holds
// the map.
//
// A slice reused as a buffer (appended to, then emptied with s[:0]) keeps
// the capacity of its largest burst in the same way; Slice empties it and
// drops it once that capacity is above a bound. Tests: shrink_test.go.
package shrink

// MinPeak is the smallest peak worth a copy: below it the map's memory is
// a few kilobytes.
const MinPeak = 1024

// Map returns m, or a copy of m sized to its entries when it holds fewer
// than a quarter of *peak, the most entries it held since it was last
// copied (at least MinPeak). Call it after every insert and every delete,
// and store the result where m was.
func Map[K comparable, V any](m map[K]V, peak *int) map[K]V {
	n := len(m)
	switch {
	case n > *peak:
		*peak = n
		return m
	case *peak < MinPeak || 4*n >= *peak:
		return m
	}
	c := make(map[K]V, n)
	for k, v := range m {
		c[k] = v
	}
	*peak = n
	return c
}

// Slice empties s for reuse: it clears its elements, so that the collector
// drops what they point to, and returns s[:0], or nil when s can hold more
// than maxCap elements (the next append starts small).
func Slice[T any](s []T, maxCap int) []T {
	clear(s)
	if cap(s) > maxCap {
		return nil
	}
	return s[:0]
}
