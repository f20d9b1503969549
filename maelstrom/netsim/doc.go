// Package netsim is the harness's simulated network: Maelstrom's network
// model (maelstrom-spec section C) with seeded randomness.
//
// # Model
//
// Every endpoint (a test node such as "n1", or a client such as "c7") is
// registered by name and has one inbox: a queue ordered by delivery
// deadline (ties in send order). Send assigns the message a network-global
// integer id (0, 1, 2, ... in send order), validates that source and
// destination are registered, computes deadline = now + latency and queues
// the message on the receiver's inbox.
//
// Latency is zero when the source or the destination is a client (a name
// starting with 'c': Maelstrom colocates clients with nodes). Between nodes
// it follows the configured distribution, in whole milliseconds:
// constant (exactly the mean), uniform (an integer in [0, 2*mean)) or
// exponential (rate 1/mean, truncated). Draws come from one generator seeded
// by the caller, so the n-th node-to-node message of a run gets the n-th
// draw of the seed's sequence.
//
// Recv is the receiver's single delivery loop, as in Maelstrom: it takes
// the head of the inbox at once, even when the head's deadline is in the
// future; if the receiver's drop set holds the message's source, the message
// is dropped (never delivered); otherwise Recv waits until the deadline and
// returns it. While it waits for a slow message, later messages with
// earlier deadlines wait behind it (head-of-line blocking), including
// zero-latency client requests to the same node. RecvReady is the same
// step without the wait: it takes the head only if it is due, so a
// receiver can hand every message already due to its program at once.
//
// Partitions are per-receiver drop sets: Drop(src, dest) makes dest drop
// what src sends, so one-directional partitions exist. The drop set is
// consulted at dequeue time: a message taken from the inbox before a
// partition starts is delivered, and one taken during a partition is
// dropped even if its deadline falls after the heal. Heal clears every
// drop set at once.
//
// Packet faults (packet.go; Jepsen's packet nemesis): StartPacket puts a
// PacketFault on some nodes' links until StopPacket. Each message such a
// node sends to another node (never to a client) is drawn, at Send: lost
// with LossPct (counted as a drop), duplicated with DuplicatePct (the two
// copies, same id, each drawn for loss and delay on their own), and,
// unless drawn reordered with ReorderPct, held DelayMs ± JitterMs
// (uniform, never below 0) beyond its latency. The draws come from their
// own stream of the seed, so the latency draws are the same with and
// without packet faults. Head-of-line blocking applies: a reordered or
// less delayed message overtakes the queued ones, not the one the
// receiver's loop is already waiting for, and a delayed node message
// holds back the client requests queued behind it at that receiver (on
// the real network client packets never wait behind node packets).
//
// # Guarantees
//
//   - ids are unique and increase in send order (Send holds the lock while
//     it numbers and queues);
//   - a message to an unregistered name, or from one, is refused with an
//     error naming the name; a message to a closed client is refused with
//     ErrClosedClient, which the harness reports as a reply to a closed
//     client;
//   - statistics count every accepted send and every delivery, overall and
//     split into client traffic (src or dest is a client) and server
//     traffic (node to node), for Maelstrom's msgs-per-op;
//   - a message is never handed over before its deadline, and on Linux it
//     is handed over within about 0.1 ms after it (p50 about 60 µs on a
//     2-core VM; Go timers alone: about 0.25 ms, up to 1 ms): the wait ends
//     on a kernel timer (wait.go). Latency figures then measure the node,
//     not the simulator.
//
// Time is read from the time package, so tests run the network inside a
// testing/synctest bubble, where time is virtual and deterministic; New
// notices a virtual clock and waits with Go timers only there.
//
// Tests: latency_test.go (each distribution's statistics, seeded),
// packet_test.go (loss, delay, jitter, duplication and reordering shares
// and windows, client links spared, latency draws unchanged, bad faults),
// net_test.go (ids, validation, drop at dequeue, heal, client zero latency,
// head-of-line ordering, statistics), wait_test.go (virtual clock detected,
// never early on the real clock). BenchmarkDeliveryLateness measures the
// lateness with and without the kernel timer.
package netsim
