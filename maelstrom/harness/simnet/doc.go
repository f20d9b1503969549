// Package simnet is the harness's first Network (harness.Network):
// Maelstrom's process model over the simulated network of package
// netsim. Every node is a program started as Maelstrom starts it,
// speaking JSON lines on stdin and stdout; the harness's clients are
// c<k>; partitions are per-receiver drop sets; kill, pause and resume are
// signals to the node's process group. It owns processes, pipes, clients
// and the message network; it knows nothing of workloads, histories or
// verdicts (the runner in package harness does).
//
// # Start (simnet.go, setup.go)
//
// Every node id is registered in the network before any program starts.
// Each program is started with the canonical --bin path and the
// positional arguments (nodeproc.ExecLauncher; Config.Launch), in the OS
// temp directory, with the harness's environment plus Host.Env and
// Host.NodeEnv(id) (a restart: the fault's Env and Host.NodeEnv(id)), in
// its own process group. Node i gets init from client c(i) (msg_id 1, node_ids in
// CLI order) and must answer init_ok within Config.InitTimeout (the CLI's
// --init-timeout, 10 s by default as in Maelstrom), at the start and
// after every restart; the failure of one that does not says what it has
// printed and names slow starts and the flag (setup.go). The init
// clients are then closed and idle setup clients c(n)..c(2n-1) opened, so
// worker clients start at c(2n), as in Maelstrom.
//
// # Faults (simnet.go)
//
// A start-partition installs the grudge as drop sets (netsim.Partition),
// a stop-partition heals them all. kill sends SIGKILL to each chosen
// node's process group (SIGCONT first, so a paused node dies too); the
// node is down until the next start, and messages for it are lost, as
// messages to a dead process are in Maelstrom. start launches a fresh
// program for every node that is down and sends it init from a new client
// (msg_id 1), in the background (Applied.Done reports when every one has
// answered init_ok). pause sends SIGSTOP to each chosen node's process
// group (a node that is down or already paused is skipped); resume sends
// SIGCONT to every paused node. Messages for a paused node wait in its
// stdin pipe and then in the network, behind the message its delivery
// loop is writing, and come out late after the resume. start-packet puts
// the op's settings on its nodes' links (netsim.StartPacket: added delay
// with jitter, loss, duplication, reordering of the messages they send to
// other nodes) and stop-packet takes every packet fault off
// (netsim.StopPacket). Clock faults are the runner's (it writes each
// node's clock file); the network's part is to give every program, at
// every start and restart, Host.NodeEnv's variables for its node, which
// name that file.
//
// # Node I/O (node.go)
//
// The programs of a node are supervised by package nodeproc (launch,
// stderr to node-logs/<id>.log and, with --log-stderr, the console; exit
// watching; kill, pause and resume by process group; reaping), which the
// real network shares. What is this network's own: each node id has a
// delivery goroutine (network -> the running program's stdin, one JSON
// line per message with the global id; the messages already due go out
// in one write, netsim's RecvReady) for the whole test, and each
// program it runs (an incarnation) has a stdout reader. Every stdout
// line goes through Maelstrom's checks (envelope.go and the network's
// registration check). In strict mode (the default) the
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
// # Stop
//
// Node output stops counting, a restart in flight is waited for (its
// init gives up when the runner cancels), clients close, the network
// heals (not recorded, as in Maelstrom), and every program of every node
// is continued (SIGCONT, in case it is paused) and killed (SIGKILL to its
// process group, no stdin EOF first) and waited for.
//
// Tests: envelope_test.go and client_test.go (pure helpers),
// exec_test.go (real processes built from testdata/fakenode: launch,
// strict rejection of each bad output kind, early exit, init errors,
// child processes, Ctrl-C, kills, pauses and restarts of real processes
// and cleanup by pid, a node paused at the end), sim_test.go (whole runs
// with in-process fake nodes inside testing/synctest: time limit,
// timeouts, error mapping, partition ops, seeds, closed clients, mute
// mode), faults_test.go (kill and start with re-init and the boot-wait
// environment, the kill-without-boot-wait negative control caught on
// fixed seeds, pauses holding requests back and late replies dropped, the
// final phase's heal order and reads, no final phase for echo),
// nodeenv_test.go (the lease environment the master workload's nodes
// get).
package simnet
