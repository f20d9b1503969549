// Package peer carries the lease core's peer messages (lease.Msg) between
// the members of a `lease-node serve` cluster over TCP with mutual TLS.
//
// # Connections
//
// Every member dials every other member once and keeps that connection
// open: it carries this member's frames to that one, one way (answers are
// frames of their own, on the other member's connection). So between two
// members there are two long-lived connections, and a member that
// restarts is dialled again by the others and dials them itself. A failed
// dial or a lost connection is retried after a backoff that doubles from
// 50 ms to 2 s, with jitter (each wait drawn from [d/2, d)). The backoff
// starts again from 50 ms only after the member accepted a connection
// (answered a ping on it): one that refuses us after the TLS handshake
// (other settings, another protocol version) is redialled at most every
// 2 s, and the same failure is logged once, then counted. A member whose
// own connection to us is admitted is up: the wait towards it ends at
// once, so a restarted member is reached both ways a handshake after it
// starts, not up to 2 s later (past the boot wait of a short lease, when
// a rolling restart may already stop the next member).
//
// Identity: both sides present a certificate of the cluster CA. A member
// is the one member id among its certificate's DNS names (no IP address
// is needed, so the same files serve on loopback and in network
// namespaces). The dialler sets ServerName to the member it means, so it
// talks only to that member; the listener accepts only a certificate
// naming a member other than itself, and logs every refusal with the
// remote address and the names presented. What identifies a frame's
// sender is the connection's certificate, never a field of the frame: a
// message arrives with From set to that member and To to this node.
//
// After the TLS handshake the dialler sends a hello: the magic "LNP5" and
// its cluster settings (members, acceptors, longest lease, drift bound,
// as the caller words them). A listener whose settings differ refuses the
// connection, logs both, and writes the reason back before closing, so
// the dialler logs it too: members never run with different clusters.
//
// # Frames
//
// After the hello the connection is a stream of frames: a 4-byte
// big-endian payload length, then one lease.Msg in a fixed binary layout
// (codec.go). A frame over the limit (1 MiB by default) closes the
// connection, logged; one that does not decode, or that lease.CheckMsg
// refuses, is logged and skipped. Each frame is decoded once, straight
// into a lease.Msg, from a reused buffer.
//
// # Queues and loss
//
// Send never blocks the caller (the event loop). Each member has a
// bounded queue of encoded frames (2 MiB by default); woken by a flush,
// the writer yields once (so the loop can queue the frames of requests
// that arrived meanwhile), then takes the whole queue and writes it in
// one call, so under load many frames share a TLS record and a system
// call. A frame for a member that is not
// connected, or whose queue is full, or that is over the limit, is
// dropped and counted: a lost message, which PaxosLease tolerates (the
// core's rounds time out and retry). Frames queued when a connection is
// lost are dropped with it. Incoming messages wait in an inbox channel
// for the loop: one, or one per loop of a member that runs several, the
// reader sorting each message into its loop's inbox (Config.Route: by
// the message's chunk, the node-level ones into every inbox). When an
// inbox is full its readers wait, which backs pressure up to the
// senders' TCP windows.
//
// Reads and writes have real-time deadlines (handshake, hello, writes):
// the kernel's sockets are not skewed by a clock nemesis, only the node's
// sense of time is (internal/clock).
//
// # Liveness and limits
//
// Each outgoing connection carries a ping every PingInterval (100 ms by
// default); the member answers with a pong on its own connection, echoing
// the ping's send time. Reachable(id) is true while id answered a ping
// sent within ReadyWindow (5 intervals, 500 ms): a round trip both ways,
// recently, not merely an ESTABLISHED socket, which a paused process or a
// silently dropping partition keeps open. A member in its boot wait
// (Config.Booting) marks its pongs, so Serving(id) is false for it while
// Reachable(id) is true: readiness counts only acceptors that can vote.
// An outgoing connection with no answer for 100 intervals (10 s), or an
// incoming one that carried nothing for as long, is closed; the dialler
// dials again. Pings and pongs are
// frames whose payload starts with type code 0xF0 or 0xF1 (liveness.go);
// they never reach the core. At most MaxHandshakes incoming connections
// (64 + 4 per member by default) may be in their handshake and hello at
// once, each for at most 5 s. At the cap a new connection takes the slot
// of the oldest if that one has been in its handshake for 1 s or more,
// else it is closed at once (handshakes.go): silent connections cannot
// pile up, nor keep a member out (its handshake takes milliseconds, so it
// is admitted once a slot has aged and is never pushed out), and a flood
// that redials what is closed cannot churn through every slot. Both are
// counted as refused and logged at most once a second per kind. A
// listener that refuses a hello writes its reason back, so the dialler
// logs it; a bare close is logged as one. An admitted member has one incoming
// connection; a newer one replaces it.
//
// Tests: codec_test.go (round trip, damaged input, a fuzz target, a
// benchmark), identity_test.go, transport_test.go (in-process members on
// loopback: identity of senders, other settings refused, an oversized
// frame, reconnection, a member dialling in ending the backoff towards
// it, queue bounds), liveness_test.go (a member that
// never answers pings is not reachable and is redialled; the handshake
// cap under a flood; a refused dialler backs off); the serve cluster tests of the root
// package run it between real processes.
package peer
