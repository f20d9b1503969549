// Package nemesis is the harness's fault schedule: Jepsen's combined
// nemesis as Maelstrom composes it (maelstrom-spec E; Jepsen's
// nemesis/combined.clj), with the partition shapes ("grudges") and the
// node specifications of the kill and pause faults. It decides what
// happens when; the harness performs it.
//
// # Faults
//
// --nemesis is a comma-separated set (ParseFaults): partition, kill,
// pause, packet. As in Maelstrom a fault named twice counts once; spaces
// around names are ignored; an unknown name is an error.
//
// # Grudges
//
// A Grudge maps each receiver to the senders it drops. Compute builds one
// for a Target, with the same constructions as Jepsen 0.3.7 (which
// Maelstrom uses):
//
//   - one: a random node is cut off from all others, both ways;
//   - majority: shuffle, split after floor(n/2) nodes (the smaller half
//     first), cut both ways between the halves (2|2 at n=4);
//   - minority-third: shuffle, split after floor((n-1)/3) nodes (no
//     partition at n <= 3), cut both ways;
//   - majorities-ring, n <= 5: shuffle into a ring; for each window of
//     m = floor(n/2)+1 consecutive nodes, the window's middle node (index
//     floor(m/2)) drops everyone outside the window. At n=3 this is a
//     directed ring: each node hears only its predecessor;
//   - majorities-ring, n >= 6: start with every node linked to itself and
//     repeatedly link a least-linked node to a least-linked node it is not
//     yet linked to (ties broken at random) until every node has at least
//     m links, itself included; every node drops the nodes it is not linked
//     to (symmetric).
//
// Complete grudges list every node as a key, with an empty set for a node
// that drops nobody, as Jepsen's complete-grudge does; the history shows
// them that way.
//
// # Node specifications (kill, pause)
//
// PickNodes is Jepsen's db-nodes for a database without primaries:
// SpecRandom (Jepsen's nil: a random non-empty subset, 1 + rand-int(n)
// nodes of a shuffle), one, minority-third (floor((n-1)/3)), minority
// (majority(n) - 1), majority (floor(n/2) + 1), all. The chosen nodes come
// back in the order of the node list.
//
// # Schedule
//
// Schedule merges Jepsen's packages, each a generator of its own:
//
//   - partition: stagger(interval, flip-flop(start-partition, repeat(
//     stop-partition))); each start picks its shape uniformly from the
//     four;
//   - packet: stagger(interval, flip-flop(start-packet, repeat(
//     stop-packet))), Jepsen's packet nemesis: each start picks a node
//     specification uniformly and draws its settings (DrawPacket: a
//     random non-empty subset of delay with jitter, loss, duplication and
//     reordering, with whole-number values in fixed ranges); the runner
//     picks the nodes, whose links to other nodes then carry the fault
//     until the stop (every link back to normal);
//   - process (kill and/or pause): stagger(interval, mix(pause/resume
//     flip-flop, kill/start flip-flop)): at each of its times it picks one
//     of the enabled flip-flops uniformly and takes that one's next op, so
//     kills and starts alternate, pauses and resumes alternate, and the
//     two interleave at random. kill and pause pick a node specification
//     uniformly; start and resume act on all nodes.
//
// The packages run side by side (gen/any): the next op is the earliest of
// the packages' next ops; at a tie partitions first, then packets, then
// the process package. Each package's
// first op is due at t=0 and each gap is uniform in [0, 2*interval), so
// the mean gap within a package is the interval. FinalOps are the ops that
// heal everything at the end, in Jepsen's order: stop-partition,
// stop-packet, resume, start.
//
// All randomness comes from the *rand.Rand values the caller passes
// (Streams: one per package), so a seed fixes shapes, specifications,
// settings and times, and enabling one fault leaves the others' schedules
// unchanged.
//
// Tests: grudge_test.go (every shape at 1, 2, 3, 4, 5 and 7 nodes, the
// stochastic ring's guarantees), schedule_test.go (gap statistics,
// alternation, first op at 0, shape frequencies), faults_test.go (fault
// lists, node specifications at 0..7 nodes and the random subset's sizes,
// the process package's alternation, mix and specification frequencies,
// the merged schedule, the final ops), packet_test.go (the packet
// package's alternation, specifications and settings, the partition
// schedule unchanged beside it, each behaviour's share of the draws).
package nemesis
