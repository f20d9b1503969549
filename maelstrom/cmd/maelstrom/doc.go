// Command maelstrom is the project's Maelstrom-compatible test runner:
//
//	maelstrom test -w lease --bin ./lease-node --node-count 5 --time-limit 30 \
//	  --rate 100 --concurrency 10 --latency 10 --nemesis partition --nemesis-interval 5
//
// It starts the node program once per node, drives a workload through a
// simulated network with partitions, checks the history and writes
// store/<workload>/<timestamp>/ (store/latest points at the last run).
// Exit status: 0 valid, 1 invalid, 2 the run itself failed (a node
// crashed or printed a malformed line, init failed, bad flags).
//
// Flags have Maelstrom's names and defaults (--node-count, --nodes, -n,
// --time-limit, --rate, --concurrency N|Kn, --latency, --latency-dist,
// --nemesis partition, --nemesis-interval, --availability, --log-stderr),
// plus --seed (printed at start; replays latencies, partitions and
// workload choices), --strict (default true; false mutes a node that
// prints a bad line, as Maelstrom does), --store DIR (default store) and
// the lease workload's --lease-ms, --servers and --chunks. Arguments after
// -- go to the node program. The default workload is lease.
//
// Files: flags.go (flag set and parsing), main.go (run, usage, options,
// workload construction). Tests: main_test.go runs whole tests through
// run with the harness's scripted fake node (echo valid and invalid, a
// single-table lease node valid on one node and split-brained on three,
// partitions) and checks every bad-argument diagnostic.
// See package chunklease/maelstrom/harness for the model.
package main
