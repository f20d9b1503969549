// Package harness is the project's Maelstrom-compatible test runner: it
// starts node programs as Maelstrom does, connects them through the
// simulated network (package netsim), drives a workload (package
// workloads) with Jepsen's combined nemesis (package nemesis: partitions,
// kills, pauses), records the history and judges it. The CLI is
// maelstrom/cmd/maelstrom; the model is /work/shared/maelstrom-spec.md,
// sections A to G, and the contract's section 2.
//
// # A run
//
//  1. Prepare: store/<workload>/<timestamp>/ (store/current points at it),
//     history.jsonl opened, the network created with the latency model.
//  2. Setup: every node id is registered in the network before any
//     program starts. Each program is started with the canonical --bin
//     path and the positional arguments, in the OS temp directory, with
//     the harness's environment (see Environment), in its own process
//     group. Node i gets init from client c(i) (msg_id 1, node_ids in CLI
//     order) and must answer init_ok within 10 s. The init clients are
//     then closed and idle setup clients c(n)..c(2n-1) opened, so worker
//     clients start at c(2n), as in Maelstrom.
//  3. Main phase (loop.go), relative time 0 after init: one goroutine owns
//     the workload, the nemesis and the history. It fires due nemesis ops,
//     asks the workload for ops for free workers (rotating through them,
//     as Jepsen's generator context does), and records completions.
//     Worker i talks to node i mod n through its own client, one op at a
//     time, with a 5 s timeout. The workload maps the reply (nil on
//     timeout) to ok, fail or info; after an info the worker's process
//     becomes process + concurrency and its next op uses a fresh client
//     (the old one is closed then). Nothing, client op or nemesis op, is
//     invoked at or after the first op's time + the time limit; ops in
//     flight then finish or time out, and a nemesis op in flight
//     completes.
//  4. Final phase (final.go), only for workloads with final ops
//     (workloads.Finisher), as Maelstrom's final generator: the nemesis
//     heals every fault it can cause, in Jepsen's order, each recorded
//     whether or not the fault is in force: stop-partition, resume (every
//     paused node), start (every killed node, with a fresh init). Then the
//     harness waits the recovery time (--recovery-time; by default twice
//     the workload's longest lease, at least 1 s, where Maelstrom waits a
//     fixed 10 s) and invokes each final op once, op i on worker i mod
//     concurrency. The lease workload checks every chunk once. A workload
//     without final ops (echo) ends with the main phase, faults in force
//     and unrecorded, as in Maelstrom.
//  5. Teardown: node output stops counting, a restart in flight gives up,
//     clients close, the network heals (not recorded, as in Maelstrom),
//     and every program of every node is continued (SIGCONT, in case it
//     is paused) and killed (SIGKILL to its process group, no stdin EOF
//     first) and waited for. This happens on every path: failure, Ctrl-C,
//     normal end.
//  6. Analysis (analysis.go, finish.go): history.jsonl is read back from
//     disk (workloads.ReadBack: a pass for the nemesis ops, then a pass
//     for every op, paired as PairOps pairs them) and judged in memory
//     that does not grow with the run: Jepsen's stats checker (invalid
//     if some f never completed ok), the availability checker and the
//     net checker count op by op; the nemesis's counts come from its
//     ops; latency-raw.png and rate.png from a bounded summary (PerfData:
//     completions per rate bucket, and the latency dots a reader can tell
//     apart, at most one per cell of a grid of about two by two pixels,
//     with every op counted in the legend); a workload that
//     implements workloads.Analyzer judges the pairs as they stream by
//     and writes its statistics and report files (the lease workload
//     spills ops by chunk to disk and checks the chunks on every core;
//     results.json gets its summary, lease-details.jsonl the rest), and
//     any other is judged from the history held in memory (Check, Stats,
//     Report). Then the final phase's verdict, messages.svg, index.html,
//     results.json (with "timing": run_s, analysis_s, time_limit_s, and
//     "memory": the peak resident memory of the harness and of the
//     largest node program, from getrusage), store/latest.
//
// # Nemesis (nemesis.go)
//
// --nemesis is a set of faults: partition, kill, pause. The schedule is
// Jepsen's combined nemesis (package nemesis): the partition package and
// the process package (kill and pause mixed) each stagger their ops with
// --nemesis-interval, the first at t=0. Like Jepsen's nemesis, it
// performs one op at a time, each written as an invoke and a completion
// of type info with process "nemesis":
//
//	f                invoke value                     completion value
//	start-partition  the shape ("majority", ...)      ["isolated", grudge]
//	stop-partition   null                             "network-healed"
//	kill             the node spec, null for random   the nodes killed, e.g. ["n1","n3"]
//	start            "all"                            the nodes started again
//	pause            the node spec, null for random   the nodes paused
//	resume           "all"                            the nodes resumed
//
// Node specs are Jepsen's: a random non-empty subset (null), one,
// minority-third, minority, majority, all. kill sends SIGKILL to each
// chosen node's process group (SIGCONT first, so a paused node dies too);
// the node is down until the next start, and messages for it are lost,
// as messages to a dead process are in Maelstrom. start launches a fresh
// program for every node that is down and sends it init from a new client
// (msg_id 1); its completion is recorded once every restarted node has
// answered init_ok, and no other nemesis op begins before. A restarted
// node that does not answer init fails the run, as init does at setup.
// pause sends SIGSTOP to each chosen node's process group (a node that is
// down or already paused is skipped); resume sends SIGCONT to every paused
// node. Messages for a paused node wait in its stdin pipe and then in the
// network, behind the message its delivery loop is writing, and come out
// late after the resume.
//
// # Environment
//
// Programs inherit the harness's environment unchanged, as in Maelstrom,
// except with a workload that has leases (workloads.LeaseBounded, L = its
// longest lease in ms) under the kill nemesis, or with one whose leases
// have the nodes' own length (workloads.NodeLeased: the master workload,
// whose requests carry none) in every run: every program then gets
// LEASE_MAX_MS=L, and LEASE_MS=L unless the environment already sets
// LEASE_MS to a whole number of at most L (the node refuses a default
// lease above its maximum); a restarted program also gets
// LEASE_BOOT_WAIT_MS=L: its acceptor stays silent until every lease it
// may have accepted and forgotten has ended (the node stretches the wait
// by its own drift bound). --kill-without-boot-wait restarts with
// LEASE_BOOT_WAIT_MS=0 instead: the negative control, which the lease
// and master checkers must catch.
//
// # Node I/O (node.go)
//
// Each node id has a delivery goroutine (network -> the running
// program's stdin, one JSON line per message with the global id) for the
// whole test, and each program it runs (an incarnation) has a stdout
// reader, a stderr reader (every line to node-logs/<id>.log, shared by
// the incarnations, and to the console with --log-stderr) and an exit
// watcher. Every stdout line goes through Maelstrom's checks (envelope.go
// and the network's registration check). In strict mode (the default) the
// first bad line fails the run at once with a diagnostic that names the
// node and quotes the line; with Strict off the node is muted instead (its
// stdout is never read again), as Maelstrom does. A program that exits
// before teardown, with any status, fails the run with its status and its
// last 32 stdout and stderr lines, unless the kill nemesis killed it; the
// harness notices at once rather than at teardown.
//
// One exception to judging output: a reply to a closed client from a node
// that was paused at some time after that client was opened is dropped
// and counted (results.json nemesis.late_replies_dropped), in strict mode
// and out of it. Such a reply answers a request that waited in the stopped
// process until its client had timed out and moved on; the node cannot
// tell, and Maelstrom, which has no pause nemesis, would mute it.
//
// A message to an open client that answers none of its requests (a stale
// or duplicate reply, a wrong in_reply_to) is discarded, as Maelstrom's
// client does; the harness prints the first as a warning and counts them
// (results.json net.stray_replies), so a node whose every reply is stray
// does not just look silent. An init that times out quotes the first.
//
// With --log-net-send and --log-net-recv every accepted send and every
// delivery is written to the console as ":send <message>" and ":recv
// <message>", the message as the node receives it on stdin.
//
// # Guarantees
//
//   - history.jsonl is in real-time order: only the loop goroutine writes
//     it, and it reads the clock as it appends each op (record);
//   - the run keeps no op in memory: history.jsonl is written through a
//     buffer flushed at every progress tick (250 ms) and before the
//     analysis, which reads it back; what the harness holds during a run
//     is bounded by the workload's own state (the lease generator's
//     table of server-chunk pairs), the network journal (netsim's first
//     and latest messages) and the ops in flight, not by the run's length;
//   - a seed fixes the latency draws, the nemesis schedule, shapes, node
//     specs, grudges and chosen nodes, and the workload's choices
//     (WorkloadSeed);
//   - Run returns only after every program it started, restarted ones
//     included, has been killed and reaped.
//
// Exit statuses (Outcome.Exit, the CLI's status), as real Maelstrom's:
// ExitValid 0; ExitInvalid 1 (some checker found the history invalid);
// ExitUnknown 2 (none did, but the final phase ran and none of its ops
// completed ok: the service was never seen to come back); ExitBadArgs 254
// (options the run refuses); ExitFailed 255 (a node crashed outside the
// kill nemesis, printed a line Maelstrom rejects in strict mode, or never
// answered init; a checker crashed; the history could not be written or
// read back; the run was interrupted). Validity
// merges as in Jepsen: invalid beats unknown beats valid.
//
// Tests: envelope_test.go and client_test.go (pure helpers),
// plot_test.go (the pictures, stable colours, rate buckets, latency dots
// bounded however many ops),
// exec_test.go (real processes built from testdata/fakenode: launch,
// strict rejection of each bad output kind, early exit, init errors,
// child processes, Ctrl-C, kills, pauses and restarts of real processes
// and cleanup by pid, a node paused at the end), sim_test.go (whole runs
// with in-process fake nodes inside testing/synctest: time limit,
// timeouts, error mapping, partition ops, seeds, closed clients, mute
// mode), faults_test.go (kill and start with re-init and the boot-wait
// environment, the kill-without-boot-wait negative control caught on
// fixed seeds, pauses holding requests back and late replies dropped, the
// final phase's heal order and reads, no final phase for echo).
package harness
