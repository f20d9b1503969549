// Package shell is the part every shell around the lease core shares: the
// Maelstrom node (handlers.go, on the protocol library's loop) and the
// network service (lease-node serve, on its own loop) both keep the
// client requests the core has not answered, carry each core output out
// (peer messages first, then replies, then the next wake-up) and keep
// exactly one timer at the core's next wake-up.
//
// A Driver is what it is: one lease.Node, the requests pending in it by
// id, and that timer. What it is not: it reads no clock of its own, sends
// nothing itself and starts no goroutine. The shell passes `now` into
// every call (read once per event, lease/doc.go) and supplies its edges:
// Now and After for the wake-up timer (or At, Timer, which takes the
// wake-up as a time and spares two clock reads), Send for peer messages
// and Reply for answers. Every method must be called on the shell's one event loop;
// nothing is locked.
//
// Guarantees: every reply the core produces for a pending request reaches
// Reply exactly once, with the handle given to Request; a reply for an id
// that is not pending (never, if the core keeps its promise) is dropped;
// at most one timer is outstanding, armed for Output.Wake (none for
// lease.Never), and it calls Tick with the clock read when it fires.
//
// NewNonce draws each start's lease.Config.Nonce from the operating
// system's random source (nonce.go), for both shells.
//
// Tests: driver_test.go (a fake core edge: pending bookkeeping, the order
// of effects, one timer re-armed and cancelled). The two shells' own
// tests exercise it end to end (root main_test.go transcripts,
// serve_cluster_test.go).
package shell
