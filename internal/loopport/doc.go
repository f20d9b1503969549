// Package loopport hands out loopback ports for members that tests and
// benchmarks start.
//
// The ports lie below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range). A port from that range (":0",
// then closed) goes back to the pool the kernel takes outgoing
// connections' source ports from, so it may be taken before the member
// listens on it: by another process's connection, or by the member's own
// dial to a peer that does not listen yet, which is then given the peer's
// port as its source and connects to itself (TCP's simultaneous open).
// Both happened ("address already in use"). No source port is chosen
// below the range, and scripts/cluster.sh picks its ports there too.
//
// A Picker never hands out a port twice, so members killed and started
// again on their ports keep them. Its walk is random from a seed: two
// pickers in two processes rarely meet, and one that does skips a port
// it finds in use.
package loopport
