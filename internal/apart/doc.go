// Package apart keeps what different cores write at every message off
// the cache lines they share, where Go's allocator would otherwise put
// it side by side.
//
// A member runs one loop per core (server/loop.go), and each loop writes
// its own objects at every message: its inbox channel's header, its
// Driver. Objects made one after another in one size class sit next to
// each other in memory. Two such objects on one 64-byte line, written by
// two cores, move that line between the cores at every write (false
// sharing): in BenchmarkMemberCores at two cores, with one client per
// loop, the two loops' inboxes side by side cost about a quarter of the
// member's throughput (docs/performance.md "Nobody waits for the loop").
//
// Go cannot align an object it allocates, so Chans places spacers: it
// makes two channels of the same kind after each, which in the usual
// case (consecutive slots of one span) leaves 192 bytes between the
// headers of consecutive channels, beyond a line and the pair of lines
// x86 prefetches together. The spacers are kept by the caller for as long as
// the channels: a collected spacer's slot could take another hot header.
// Structs that a loop owns pad themselves instead (cacheLinePad in
// server, the pad of internal/shell's Driver).
package apart
