// Package apart keeps what different cores write at every message off
// the cache lines they share, where Go's allocator would otherwise put
// it side by side.
//
// A member runs one loop per core (server/loop.go), and each loop writes
// its own objects at every message: its inbox channel's header, its
// core's maps and slabs, its Driver's map of calls. Objects made one
// after another in one size class, by one goroutine, sit next to each
// other in memory. Two such objects on one 64-byte line, written by two
// cores, move that line between the cores at every write (false
// sharing). In BenchmarkMemberCores at two cores this decided the
// member's throughput: the same member, built the same way, served
// 0.86 to 1.57 million renews a second from one build to the next, and
// each build kept its own figure for as long as it ran; at one core
// every build served the same (docs/performance.md "Where each loop's
// memory comes from").
//
// Go cannot align an object it allocates, nor say where it goes. Two
// things it does promise are used here:
//
//   - Each P allocates small objects from spans of its own (its mcache),
//     and spans are whole pages. Each runs each loop's build on a
//     goroutine of its own, all at once, so on as many Ps: what one
//     loop's build allocates is on other pages than what another's does.
//   - Within a span, a P hands out free slots in address order. Fence
//     takes the next slots of every small size class, so what is made
//     after it lies past them; Chans checks the headers it made and
//     makes another where two came too close.
//
// Both are placements, not guarantees: a span freed by the collector
// and reused, or a build that a busy machine ran on one P after all,
// can still put two loops' objects side by side. Nothing here changes
// what the program computes, only how fast; each caller keeps the
// spacers it is given for as long as the objects they separate (a
// collected spacer's slot could take another hot object).
package apart
