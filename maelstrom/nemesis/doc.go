// Package nemesis is the harness's partition nemesis: Jepsen's partition
// shapes ("grudges") and Maelstrom's schedule for them (maelstrom-spec E).
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
// # Schedule
//
// Schedule is Jepsen's stagger(interval, flip-flop(start, repeat(stop))):
// the first start-partition is due at t=0, ops strictly alternate start,
// stop, start, ..., and each gap is uniform in [0, 2*interval), so the
// mean gap is the interval. Each start picks its target uniformly from
// the four shapes.
//
// All randomness comes from the *rand.Rand the caller passes, so a seed
// fixes targets, grudges and times.
//
// Tests: grudge_test.go (every shape at 1, 2, 3, 4, 5 and 7 nodes, the
// stochastic ring's guarantees), schedule_test.go (gap statistics,
// alternation, first op at 0, target frequencies).
package nemesis
