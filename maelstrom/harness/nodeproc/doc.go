// Package nodeproc supervises the node programs of a harness network: the
// part of running a node that the simulated network (package simnet) and
// the real one (package realnet) share. It starts a program, logs its
// stderr, notices when it exits, signals its process group (kill, pause,
// resume) and reaps it. It knows nothing of what flows on stdin and
// stdout (Maelstrom's JSON lines on the simulated network; nothing on the
// real one, whose nodes talk over sockets), of clients or of verdicts.
//
// # Programs (exec.go, proc.go)
//
// A Proc is a running program with three pipes, a PID, Wait, Kill, Pause
// and Resume; a Launcher starts one for a node id with extra environment.
// StartExec starts a Command as Maelstrom starts a node: the canonical
// path (CanonicalBin: absolute, symlinks resolved, executable), working
// directory the OS temp dir, the harness's environment plus the
// command's extra variables (a later value of a key wins), its own
// process group (Kill, Pause and Resume signal the group, so children are
// reached too), and on Linux the kernel's SIGKILL if the harness dies
// first (Pdeathsig). Command.Start replaces exec.Cmd.Start: the real
// network starts the program inside a network namespace, and the pid is
// still the program's own. Kill sends SIGCONT then SIGKILL to the group
// (a stopped process would linger otherwise) and SIGKILL to the process.
//
// # Supervision (node.go)
//
// A Node is one node id's programs over a test: at most one incarnation
// runs at a time; Kill (the nemesis) ends it and marks the exit expected,
// Restart starts a new one once every earlier one has exited. Every
// stderr line of every incarnation goes to the node's log
// (node-logs/<id>.log, flushed per line) and, with Mirror, to the console;
// stdout goes to the network's reader (Config.Stdout) or, without one, to
// the log as well. The last TailLines lines of each stream are kept. An
// exit that neither Kill nor teardown caused is reported to Config.Fail as
// an *ExitError (status, both tails, the log's path), for any status, 0
// included, as Maelstrom does. Pause and Resume send SIGSTOP and SIGCONT
// to the running program (a node down or already paused is skipped);
// PausedSince tells whether a pause was in force after a given time.
// Teardown is KillAll (every program still running killed, every
// incarnation waited for) then Close (pipes and log): a network with
// goroutines of its own on the pipes stops them in between.
//
// Peak memory: the VmHWM of /proc/<pid>/status of each program, read just
// before it is killed (by the nemesis or at teardown); PeakMemoryKiB is
// the largest (0 where /proc does not tell).
//
// # Guarantees
//
//   - after KillAll every program the node ever started has exited and
//     been reaped: no process outlives the test, and no pid is signalled
//     after its process was reaped (a reused pid is never hit);
//   - a program's exit is noticed as it happens, not at teardown;
//   - every goroutine a Node starts ends once its programs have exited
//     (an exited program's pipes held open by a child are closed after 2
//     s).
//
// Tests: node_test.go (real /bin/sh programs: stderr to the log and the
// tail, an early exit reported with its status and tail, a kill not
// reported, pause and resume of the process group, restart after a kill,
// teardown reaps every incarnation; CanonicalBin's errors). The whole
// networks' tests exercise it further (simnet's exec_test.go, realnet's
// tests).
package nodeproc
