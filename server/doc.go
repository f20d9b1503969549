// Package server is `lease-node serve`: one member of the lease service
// on a real network (contract section 3). The same pure core as the
// Maelstrom node (lease/), with other edges: peers over mutually
// authenticated TLS (internal/peer), clients over HTTP/1.1 JSON, metrics
// in Prometheus's text format.
//
// The files, in the order a request meets them: config.go (settings,
// checked at start), conns.go (the client connection budget), http.go
// (the API: one endpoint per message type, status codes, readiness),
// batch.go (several calls in one request), loop.go (the cores' event
// loops, -loops of them, and the calls waiting on them: a call runs on
// its handler's goroutine when its loop is free, and input that finds
// its loop held is posted for the holder; nobody waits for a loop), metrics.go,
// serve.go (start, signals, drain), certs.go (`lease-node certs`).
//
// The module root's main.go dispatches `serve` and `certs` here; the
// package holds no Maelstrom code. It is not a library for embedding a
// member in another program (Run owns signals and the process's exit
// status).
//
// Tests run real `lease-node serve` processes built by TestMain
// (cluster_test.go's serveCluster: TLS, kills, pauses, restarts) and
// judge what clients saw with the harness's lease checker
// (internal/histtest); conns_test.go tests the connection budget alone;
// inprocess_test.go builds one member in the test's process (its peers
// never run) for what a process cannot show from outside: a request the
// core held when the node stopped is answered 504, and the body limit
// of a chunked request;
// member_test.go runs a member's loops with fake peers and no sockets
// (routing, and BenchmarkMemberCores: how the loops scale with the
// cores); loops_test.go a cluster of members with different -loops.
package server
