// Package fakelease is an in-process stand-in for a cluster of
// `lease-node serve` members, for the client's and the command-line
// client's tests: the HTTP API of contract section 3 (endpoints, bodies,
// status codes, Retry-After, 401, 404, 405, 413) over a small lease model
// good enough to exercise a client's logic, and faults injected per
// member.
//
// What it is not: PaxosLease. The model is one record per chunk (holder,
// latest token, end) behind one mutex, as if every member shared one
// perfect acceptor; tests that need the protocol's own behaviour run
// against real `serve` processes (the client tests take a list of
// endpoint URLs for that, see client/doc.go).
//
// # Model
//
// grant: a chunk free, expired or held by the same server gets a new
// instance (a new, larger token) lasting lease_ms (default
// Options.DefaultLeaseMs) from when the member performs the request;
// protection never shrinks (the end is the later of the old and the new).
// Held by another server: no change, the answer names the holder, with
// status 409 as the service answers it. renew:
// the same, but 409 (code 22) when another server holds it. check: the
// record. release(server, token): ends the server's lease when its latest
// token is <= token. expires_in_ms is measured when the member performs
// the request; Fault.DelayOut then delays the answer (a slow network on
// the way back), so a client that counts from the answer's arrival
// believes too long, and one that counts from sending is safe.
//
// The master lease: one holder at a time among the members that were
// started (master_start) and are neither killed nor stalled; the holder
// renews itself (lazily, whenever the cluster is asked) once half its
// lease is gone; a killed or stalled holder's lease runs out; master_stop
// gives it back.
//
// Clock: Options.ClockRate is the cluster's clock rate against the
// caller's (1: equal; 1.05: the cluster's clock runs 5% fast, so a lease
// of L ms by the cluster's clock lasts L/1.05 of the caller's time): the
// fault a client's drift margin must cover.
//
// # Faults
//
// Per member: Kill (the process dies: its listener closes, its
// connections break, requests in flight are cut; connections are refused
// until Restart), Inject (a queue of one-request faults: a status such as
// 503 with Retry-After or 504, a connection reset, an answer that breaks
// off after its status line and half its body, delays before and
// after performing, with or without performing the request), SetLatency
// (every request slow), StallMaster (the member stops renewing its
// master lease).
//
// # Networks
//
// Loopback serves real HTTP on 127.0.0.1 with random ports. Pipe serves
// over an in-memory network (net.Pipe), for tests inside a
// testing/synctest bubble, where loopback sockets would keep the bubble's
// clock from advancing; pass Cluster.DialContext to the client.
//
// Every request a member receives is logged (Calls) with the member, the
// request, the times and the status, before its answer is written, so a
// client that has the answer finds it logged: tests of failover order
// and renewal schedules read the log. A batch request is logged with its
// calls' chunks, and one the member cut off (Reset, BreakOff) as Cut, so
// a test finds which calls were in the batch that lost its answer. fake_test.go holds the model and
// the faults to what the client tests take them for.
package fakelease
