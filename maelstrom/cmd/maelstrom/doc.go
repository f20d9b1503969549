// Command maelstrom is the project's Maelstrom-compatible test runner:
//
//	maelstrom test -w lease --bin ./lease-node --node-count 5 --time-limit 30 \
//	  --rate 100 --concurrency 10 --latency 10 --nemesis partition,kill,pause --nemesis-interval 2
//
// It starts the node program once per node, drives a workload through a
// simulated network (--network sim, the default) or a real one
// (--network netns: every node `BIN serve` in its own Linux network
// namespace, faults by the kernel; root) with the chosen faults, checks
// the history and writes store/<workload>/<timestamp>/ (store/latest
// points at the last run).
//
// # Commands and exit status
//
// The commands are test and analyze. analyze [--store DIR] [RUN_DIR]
// (analyze.go) judges a stored run again, as Maelstrom's analyze does:
// the checker, the statistics, the pictures and the pages are computed
// again from RUN_DIR's history.jsonl (default STORE/latest) and written
// over the old ones; the run's flags, seed and network figures come from
// its results.json, messages.svg (from the live network's journal) is
// kept, and the exit status is the one test gives, 254 when RUN_DIR is no
// stored run. A bare maelstrom prints the command usage on stderr and
// exits 254 (bad arguments: everything a mistake prints goes to stderr);
// any other command names itself as unknown, then the same; --help (or
// -h) before a command prints the usage on stdout and exits 0, as test
// --help (or -h) prints the help of test once, on stdout, and exits 0.
// (Jepsen's cli prints its usage on stdout and exits 254 for --help too.) The exit status of test is real
// Maelstrom's: 0 valid, 1 invalid, 2 validity unknown (the final phase
// never saw an ok op), 254 bad arguments (unknown option, missing --bin,
// a value Maelstrom refuses such as --node-count 0 or a fractional
// --time-limit, and the harness's own checks such as an unreadable --bin
// or a node id starting with c), 255 the run failed (a node crashed
// outside the kill nemesis or never answered init, a checker crashed).
// With --test-count N the test runs up to N times, the seed plus one each
// time, and stops at the first run that is not valid, with its status.
//
// # Arguments
//
// Parsing is Maelstrom's (tools.cli) as far as users can tell, through
// spf13/pflag: long options take -- and short ones -, values follow as
// the next word or after =, options may come before, between or after
// positional words, every positional word goes to the node program, and
// so does everything after --. Errors are worded as Maelstrom words them
// ("Unknown option", "Failed to validate ...: Must be positive", "Error
// while parsing option ..."). --nodes is split at commas with spaces
// around names trimmed.
//
// Maelstrom's flags, with its defaults: --bin, --node-count (nodes n0..),
// --nodes, -n/--node, --nodes-file, --time-limit (whole seconds),
// --rate, --concurrency N|Kn, --latency, --latency-dist, --nemesis (a
// set of partition, kill, pause, clock, packet; clock needs a node built
// with -tags clockfault), --nemesis-interval, --availability,
// --log-stderr, --log-net-send, --log-net-recv, --test-count, and Jepsen's
// SSH options, accepted without effect and hidden from the help as they
// have no effect in Maelstrom either. The default workload is lease (in
// Maelstrom, lin-kv, which this harness does not run).
//
// The harness's own: --network sim|netns (netns refuses the echo
// workload, a --latency-dist other than constant and --log-net-*: 254),
// --seed (printed at start; replays latencies, faults and workload
// choices), --strict (default true; false mutes a node that
// prints a bad line, as Maelstrom does), --store DIR (default store),
// --recovery-time (the final phase's wait; default twice the longest
// lease, at least 1 s, and none in a run without a nemesis), --kill-without-boot-wait (the kill nemesis's
// negative control), --clock-drift-ppm and --clock-max-offset-ms (the
// clock nemesis's bounds, by default the nodes' own; beyond them, its
// negative control), --lease-ms (the lease workload's longest lease_ms;
// the master workload's lease length, which every node gets as LEASE_MS
// and LEASE_MAX_MS), the lease workload's --servers and --chunks, and the
// lease benchmark's (-w lease-bench, workloads/leasebench) --bench-op
// and --ops. With MAELSTROM_CPUPROFILE_DIR set in the environment the
// command writes its CPU profile there, and the nodes, which inherit the
// environment, theirs (internal/cpuprof).
//
// Files: flags.go (flag set, value checks, Maelstrom's error words),
// main.go (commands, help, runs), workloads.go (the table of workloads:
// each -w name and its constructor; adding a workload is one line there,
// docs/adding-a-workload.md), analyze.go (the analyze command). The
// simulated network (package harness/simnet) or the real one (package
// harness/realnet) runs --bin. Tests:
// main_test.go runs whole tests through run with the simulated network's
// scripted fake node (echo valid and invalid, a single-table lease node
// valid on one node and split-brained on three, partitions), analyze on
// stored runs, and checks every bad-argument diagnostic and the parsing
// rules; exit_test.go builds the binary and pins every exit status, the
// help, flags after positional words and the network log on it;
// bench_test.go runs -w lease-bench; recipe_test.go follows the recipe
// for a new workload with a toy one.
// See package chunklease/maelstrom/harness for the model.
package main
