// Package harness is the project's Maelstrom-compatible test runner: it
// starts node programs as Maelstrom does, connects them through the
// simulated network (package netsim), drives a workload (package
// workloads) with a partition nemesis (package nemesis), records the
// history and judges it. The CLI is maelstrom/cmd/maelstrom; the model is
// /work/shared/maelstrom-spec.md, sections A to G.
//
// # A run
//
//  1. Prepare: store/<workload>/<timestamp>/ (store/current points at it),
//     history.jsonl opened, the network created with the latency model.
//  2. Setup: every node id is registered in the network before any
//     program starts. Each program is started with the canonical --bin
//     path and the positional arguments, in the OS temp directory, with
//     the harness's environment unchanged, in its own process group.
//     Node i gets init from client c(i) (msg_id 1, node_ids in CLI order)
//     and must answer init_ok within 10 s. The init clients are then
//     closed and idle setup clients c(n)..c(2n-1) opened, so worker
//     clients start at c(2n), as in Maelstrom.
//  3. Main phase (loop.go), relative time 0 after init: one goroutine owns
//     the workload and the history. It fires due nemesis ops, asks the
//     workload for ops for free workers (rotating through them, as
//     Jepsen's generator context does), and records completions. Worker i
//     talks to node i mod n through its own client, one op at a time, with
//     a 5 s timeout. The workload maps the reply (nil on timeout) to ok,
//     fail or info; after an info the worker's process becomes process +
//     concurrency and its next op uses a fresh client (the old one is
//     closed then). Nothing is invoked at or after the first op's time +
//     the time limit; ops in flight then finish or time out.
//  4. Teardown: node output stops counting, clients close, the network
//     heals (not recorded, as in Maelstrom), and every node is killed
//     (SIGKILL to its process group, no stdin EOF first) and waited for.
//     This happens on every path: failure, Ctrl-C, normal end.
//  5. Analysis: the workload checker, Jepsen's stats checker (invalid if
//     some f never completed ok), the availability checker, network
//     statistics, latency-raw.png and rate.png, the workload's own
//     statistics and report files; results.json; store/latest.
//
// # Node I/O (node.go)
//
// Each node has a delivery goroutine (network -> stdin, one JSON line per
// message with the global id), a stdout reader, a stderr reader (every
// line to node-logs/<id>.log, and to the console with --log-stderr) and
// an exit watcher. Every stdout line goes through Maelstrom's checks
// (envelope.go and the network's registration check). In strict mode
// (the default) the first bad line fails the run at once with a
// diagnostic that names the node and quotes the line; with Strict off the
// node is muted instead (its stdout is never read again), as Maelstrom
// does. A program that exits before teardown, with any status, fails the
// run with its status and its last 32 stdout and stderr lines; the harness
// notices at once rather than at teardown.
//
// # Guarantees
//
//   - history.jsonl is in real-time order: only the loop goroutine writes
//     it, reading the clock as it writes;
//   - a seed fixes the latency draws, the nemesis schedule, targets and
//     grudges, and the workload's choices (WorkloadSeed);
//   - Run returns only after every node program has been killed and
//     reaped.
//
// Exit statuses: ExitValid 0, ExitInvalid 1, ExitFailed 2 (the run
// failed, the checker crashed, or bad options).
//
// Tests: envelope_test.go and client_test.go (pure helpers),
// exec_test.go (real processes built from testdata/fakenode: launch,
// strict rejection of each bad output kind, early exit, init errors,
// child processes, Ctrl-C, cleanup by pid), sim_test.go (whole runs with
// in-process fake nodes inside testing/synctest: time limit, timeouts,
// error mapping, nemesis ops, seeds, closed clients, mute mode).
package harness
