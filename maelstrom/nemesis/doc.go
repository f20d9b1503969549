// Package nemesis is the harness's fault schedule: Jepsen's combined
// nemesis as Maelstrom composes it (maelstrom-spec E; Jepsen's
// nemesis/combined.clj), with the partition shapes ("grudges"), the node
// specifications of the kill, pause and clock faults, and the clock
// fault's settings and bounds. It decides what happens when, and with
// which settings; the harness performs it.
//
// # Faults
//
// --nemesis is a comma-separated set (ParseFaults): partition, kill,
// pause, clock, packet. As in Maelstrom a fault named twice counts once; spaces
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
// # Node specifications (kill, pause, clock)
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
//     uniformly; start and resume act on all nodes;
//   - clock: stagger(interval, mix(reset, bump, strobe)), Jepsen's
//     clock package: each op is a clock-reset (every node), or a
//     clock-skew that bumps or strobes the clocks of nodes chosen by a
//     uniform node specification.
//
// The packages run side by side (gen/any): the next op is the earliest of
// the packages' next ops; at a tie partitions first, then packets, then
// the process package, then clocks. Each package's first op is due at
// t=0 and each gap is uniform in [0, 2*interval), so the mean gap within
// a package is the interval. FinalOps are the ops that heal everything at
// the end, in Jepsen's order: stop-partition, stop-packet, clock-reset,
// resume, start.
//
// All randomness comes from the *rand.Rand values the caller passes
// (Streams: one per package), so a seed fixes shapes, specifications,
// settings and times, and enabling one fault leaves the others' schedules
// unchanged.
//
// # Clocks (clock.go)
//
// A node's clock has two settings (package internal/clock, a lease-node
// built with -tags clockfault): a wall-clock offset in ms, and a rate,
// the factor on its elapsed time. DrawClock turns a clock op into
// ClockSettings, each affected node's offset and rate, which are the op's
// value in the history:
//
//   - bump: each chosen node gets an offset and a rate, absolute (not
//     added to the last), so the bounds hold whatever came before;
//     offsets are log-uniform in [1, bound] ms (Jepsen's bump is
//     exponential too) or the bound itself, either way; rates are
//     RateOfPPM of a drift uniform in [-rho, rho] ppm or +-rho itself;
//     half of each at the bound, where a wrong assumption shows first;
//   - strobe: each chosen node's rate flips between 1+d and 1-d (d drawn
//     as above) every 20 to 200 ms for four periods plus up to
//     min(interval, 5 s), then stays at the first; the offset is kept. A
//     strobe of the wall clock itself, as Jepsen's, would change nothing:
//     the node reads its wall clock only at start;
//   - reset: every node at offset 0, rate 1 (ResetClocks).
//
// ClockBounds bound the draws. The nodes' bounds, within which a run must
// be valid, are their LEASE_DRIFT_PPM for rates, and ClockOffsetBoundMs
// for offsets: M/4 for the longest lease M (250 ms for 1 s leases), so
// that two offsets (M/2 apart at most) plus two clocks drifting apart at
// the rate bound over the run stay below TokenClockBoundMs, the lease
// core's bound for token order across restarts (B - M/4 = 3M/4 with the
// boot wait B = M that the harness gives restarted nodes; lease/doc.go,
// "Fencing tokens"). A run so long that the drift would eat the margin
// gets smaller offsets. Those two functions are the one place the bound
// is written; beyond it, a run is the clock nemesis's negative control.
//
// Tests: grudge_test.go (every shape at 1, 2, 3, 4, 5 and 7 nodes, the
// stochastic ring's guarantees), schedule_test.go (gap statistics,
// alternation, first op at 0, shape frequencies), faults_test.go (fault
// lists, node specifications at 0..7 nodes and the random subset's sizes,
// the process package's alternation, mix and specification frequencies,
// the merged schedule, each package's ops the same with or without the
// others, the final ops), clock_test.go (the clock package's mix and
// specifications, every draw within its bounds and half at them, strobe
// shapes, the offset bound's table and its property against the token
// bound, rates written exactly), packet_test.go (the packet package's
// alternation, specifications and settings, the partition schedule
// unchanged beside it, each behaviour's share of the draws).
package nemesis
