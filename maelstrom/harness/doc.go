// Package harness is the project's Maelstrom-compatible test runner: it
// drives a workload (package workloads and its sub-packages) against the
// nodes of a Network with Jepsen's combined nemesis (package nemesis:
// partitions, kills, pauses, clocks, packet faults), records the history
// (package history), has the workload judge it and package report draw
// it. It neither starts processes nor carries messages itself: a Network
// does (the seam, network.go): package simnet (Maelstrom's process model
// over a simulated network, --network sim, the default) or package
// realnet (every node `BIN serve` in its own Linux network namespace,
// faults by the kernel, --network netns). Both supervise their node
// programs with package nodeproc. The CLI is
// maelstrom/cmd/maelstrom; the model is real Maelstrom's behaviour, and
// docs/harness.md tables every difference from it.
//
// # The seam: Network (network.go)
//
// The runner owns the workload, the workers and their Jepsen processes,
// the nemesis schedule and every random choice of a fault (a partition's
// shape and grudge, the nodes a kill or pause hits, settings a fault
// carries), the history, the final phase and the analysis. A Network
// owns the nodes and how clients and faults reach them:
//
//   - Start(ctx, Host) brings the nodes up and ready (Host: the run
//     directory for node logs, node ids, environment, NodeEnv for a
//     node's own extra environment at every start and restart, the
//     network's seed, Fail to fail the run, Log for console lines);
//   - OpenClient gives a Client (Call(ctx, node, request, timeout): the
//     reply body, or ErrTimeout when none came; Close retires it after an
//     indefinite outcome, as Maelstrom's process model does);
//   - Apply(ctx, Fault) applies one nemesis action: a start-partition's
//     Grudge (receiver -> the senders it drops), the Nodes a kill or
//     pause picked, the Env of restarted programs, the Settings of a
//     fault that carries some; it returns the nodes it acted on, or a
//     completion value, and for a start that takes time a Done channel;
//   - Supports says which --nemesis faults it can apply (others are a
//     bad argument, 254); Stop ends everything on every path (clients
//     closed, faults healed, every process killed and reaped); Observed
//     is what it saw: message counts and a journal where it carries
//     every message (results.json's net counts, messages per op and
//     messages.svg exist only then), replies it discarded, the largest
//     node's peak memory, and what that network alone observes
//     (results.json "network_observed").
//
// results.json and index.html name the network that ran ("network":
// "sim" or "netns"). The real network (package realnet: clients over
// HTTP, POST /v1/<type> with the request body minus type and msg_id, 200
// the _ok body, 4xx/5xx an error body, 504 or a broken connection
// ErrTimeout; partitions as packet filter drops computed from the same
// grudges; kill and pause by signals) implements the same interface;
// nothing on the runner's side changes. The clock fault is the runner's
// own, for every network that passes Host.NodeEnv on (and says so in
// Supports): see Clock below. The packet fault (delay, jitter, loss,
// duplication, reordering on links) has its history names and settings
// in package nemesis (StartPacket/StopPacket with PacketSettings): the
// schedule draws them (nemesis.Op.Settings), FinalOps heals them, and the
// runner applies and records them like any other fault
// (TestFaultSettingsReachTheNetwork). TestAnotherNetworkPlugsIn runs the
// unchanged runner on an in-memory network that counts no messages.
//
// # A run
//
//  1. Prepare: store/<workload>/<timestamp>/ (store/current points at it),
//     history.jsonl opened, the nemesis schedule made.
//  2. Start: the network starts every node with the environment below
//     and waits until each is ready.
//  3. Main phase (loop.go), relative time 0 after the start: one
//     goroutine owns the workload, the nemesis and the history. It fires
//     due nemesis ops, asks the workload for ops for free workers
//     (rotating through them, as Jepsen's generator context does), and
//     records completions. Worker i talks to node i mod n through its own
//     client, one op at a time, with a 5 s timeout (ClientTimeout). The
//     workload maps the reply (nil on timeout) to ok, fail or info; after
//     an info the worker's process becomes process + concurrency and its
//     next op uses a fresh client (the old one is closed then). Nothing,
//     client op or nemesis op, is invoked at or after the first op's time
//     + the time limit; ops in flight then finish or time out, and a
//     nemesis op in flight completes.
//  4. Final phase (final.go), only for workloads with final ops
//     (workloads.Finisher), as Maelstrom's final generator: the nemesis
//     heals every fault it can cause, in Jepsen's order, each recorded
//     whether or not the fault is in force: stop-partition, stop-packet,
//     clock-reset (every node's clock), resume (every paused node), start
//     (every killed node). Then the harness waits the
//     recovery time (--recovery-time; by default twice the workload's
//     longest lease, at least 1 s, where Maelstrom waits a fixed 10 s,
//     and nothing in a run without a nemesis) and invokes each final op
//     once, op i on worker i mod w, where w is at least 8 per node
//     (finalWorkers; added workers are new processes). A
//     workload without final ops (echo) ends with the main phase, faults
//     in force and unrecorded, as in Maelstrom.
//  5. Teardown: a fault action in flight gives up and the network stops
//     (Network.Stop), on every path: failure, Ctrl-C, normal end.
//  6. Analysis (analysis.go, finish.go): history.jsonl is read back from
//     disk (history.ReadBack: a pass for the nemesis ops, then a pass for
//     every op, paired as PairOps pairs them) and judged in memory that
//     does not grow with the run: Jepsen's stats checker (invalid if some
//     f never completed ok), the availability checker and the net checker
//     count op by op; the nemesis's counts come from its ops; the pictures
//     from a bounded summary (report.PerfData); a workload that implements
//     workloads.Analyzer judges the pairs as they stream by and writes its
//     statistics and detail files (the lease workload spills ops by chunk
//     to disk and checks the chunks on every core), and any other is
//     judged from the history held in memory (Check, Stats, Focus). Then
//     package report draws the workload's pictures, messages.svg (where
//     the network kept a journal) and index.html, and writes results.json
//     (with "timing": run_s, analysis_s, time_limit_s, and "memory": the
//     peak resident memory of the harness and of the largest node
//     program), and store/latest points at the run. The console gets the
//     summary (finish.go): the verdict; for an invalid run the violations
//     by kind and the first one in full, with the node that answered
//     each op (report.FindingsOf), and where every one is; the ops, the
//     network's messages, the nemesis's fault periods (those that hit
//     some node; steps that hit none are named apart), the final phase,
//     the analysis time and memory, the seed and the report's files.
//
// Analyze (analyze.go) runs step 6 again on a stored run (`maelstrom
// analyze`): what the history does not hold comes from its results.json.
//
// # Nemesis (nemesis.go)
//
// --nemesis is a set of faults: partition, kill, pause, clock, packet.
// The schedule is Jepsen's combined nemesis (package nemesis): the
// partition package, the packet package, the process package (kill and
// pause mixed) and the clock package each stagger their ops with
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
//	clock-skew       each affected node's clock       each affected node's clock once in force
//	clock-reset      every node at offset 0, rate 1   the same
//	start-packet     the settings drawn, with "nodes" the settings applied, with "nodes"
//	                 the node spec (null for random)  the nodes picked
//	stop-packet      "all"                            the nodes whose links were restored
//
// Node specs are Jepsen's: a random non-empty subset (null), one,
// minority-third, minority, majority, all. The runner picks the nodes (a
// packet fault's too, from a stream of its own);
// the network kills (a node already down is skipped) or pauses them (a
// node down or already paused is skipped), and resumes every paused node
// or starts every killed one: a start's completion is recorded once every
// node is back and ready, and no other nemesis op begins before. A node
// that does not come back fails the run, as a failed start does.
//
// # Clock (clock.go)
//
// The clock fault is Jepsen's clock nemesis (nemesis/time.clj) for nodes
// built with -tags clockfault (package internal/clock), and the runner
// applies it itself, the same on every network: each node's clock is a
// control file, <run>/clock/<node>.json ({"offset_ms": N, "rate": R},
// rewritten whole by a rename), named to the node by LEASE_CLOCK_FILE
// through Host.NodeEnv at every start and restart; the node reads it at
// start and every 10 ms. A clock value maps each affected node to
// {"offset_ms", "rate"}: the offset is added to the node's wall clock,
// which it reads only at start (incarnation, ballot floor), so an offset
// counts from the node's next restart (the kill nemesis); the rate scales
// its elapsed time and timers from the moment it is read. The clock
// package's ops, drawn with nemesis.DrawClock from their own random
// streams (7 and 8):
//
//   - bump (clock-skew): each chosen node gets an offset and a rate,
//     absolute, half of them at the bound itself;
//   - strobe (clock-skew with "strobe": {"rate", "period_ms",
//     "duration_ms"}): each chosen node's rate flips between two rates
//     mirrored around 1 every 20-200 ms for four periods plus up to
//     min(interval, 5 s); it completes when the strobe ends (no other
//     nemesis op runs meanwhile), at its settled rate;
//   - reset (clock-reset): every node back to a true clock; also the
//     final phase's second heal, so killed nodes start again true.
//
// Bounds. Within the nodes' bounds a run must be valid: every rate within
// 1 +- rho, where rho is the nodes' LEASE_DRIFT_PPM (from the environment
// they inherit, 1000 ppm by default), and every offset within
// +-nemesis.ClockOffsetBoundMs: M/4 for M the workload's longest lease
// (lease-node's 60 s without one), 250 ms with 1 s leases, so two clocks
// differ by at most M/2 plus what the rates add over the run, under the
// lease core's 3M/4 for token order across restarts (B - M/4 with the
// boot wait B = M the harness gives; lease/doc.go, "Fencing tokens").
// --clock-drift-ppm and --clock-max-offset-ms (Options.ClockDriftPPM,
// ClockMaxOffsetMs) replace the bounds; beyond the nodes' bounds a run is
// the clock nemesis's negative control, and the banner and results.json
// (nemesis.clock, within_bound false) say so.
//
// A node that does not follow its file would make every clock fault a
// silent no-op and a valid verdict meaningless, so after Start the runner
// reads every node's log (node-logs/<id>.log) for internal/clock's note
// "clockfault build: following <file>"; a node whose log says the file is
// ignored (a normal build), or says neither within 5 s, fails the run
// (255) with the command that builds the right node (BuildClockfault).
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
// and master checkers must catch. With the clock nemesis every program
// also gets LEASE_CLOCK_FILE=<run>/clock/<node>.json, last (Host.NodeEnv).
//
// # Guarantees
//
//   - history.jsonl is in real-time order: only the loop goroutine writes
//     it, and it reads the clock as it appends each op (record);
//   - the run keeps no op in memory: history.jsonl is written through a
//     buffer flushed at every progress tick (250 ms) and before the
//     analysis, which reads it back; what the harness holds during a run
//     is bounded by the workload's own state (the lease generator's
//     table of server-chunk pairs), the network's (the simulated one's
//     journal of its first and latest messages) and the ops in flight,
//     not by the run's length;
//   - a seed fixes the latency draws, the nemesis schedule, shapes, node
//     specs, grudges, chosen nodes, clock and packet settings, and the
//     workload's choices (WorkloadSeed); on the real network not the
//     timing, the kernel's loss and duplicate draws, or the interleaving;
//   - Run returns only after the network stopped: every program it
//     started, restarted ones included, killed and reaped.
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
// Tests: network_test.go (the runner on an in-memory network: the
// actions it gets and the history it writes, an unsupported fault, a
// fault's settings carried to the network and into the history),
// clock_test.go (the clock nemesis on that network: the node environment,
// the history's settings within the bounds, the files, a node that does
// not follow its file failing the run, the negative control's bounds,
// bad options, a strobe's flips in virtual time), console_test.go (the
// progress line). The whole runs over the simulated
// network, with in-process fake nodes and real processes, are package
// simnet's tests; over the real network, package realnet's.
package harness
