// Command benchnet measures the chunk-lease service on a real network
// against etcd on the same machine: the program behind
// scripts/bench_net.sh, which builds etcd 3.7 and this and runs the
// parts. It is a module of its own (go.mod here, chunklease replaced by
// the repository), so go.etcd.io/etcd/client/v3 and gRPC are never
// dependencies of the node.
//
//	benchnet table    [-duration 3s] [-warm 1s] [-rounds 3] [-clients 1,16,64] [-benchmarks ...] [-fsync] [-profile DIR]
//	benchnet latency  [-delay-ms 5] [-duration 3s] [-rounds 3] [-clients 1,16,64] [-benchmarks renew]
//	benchnet openloop [-duration 3s] [-rounds 3] [-fractions 25,50,75] [-sat-clients 64] [-holders 1000]
//	benchnet failover [-tries 10] [-lease-ms 300] [-hold 3s]
//	benchnet memory   [-chunks 1000000] [-budget 150s]
//	benchnet report   -results STORE/results.jsonl   (the table's report again, from a stored run)
//
// with the shared flags -repo, -work, -store, -pidfile, -seed, -etcd
// (the etcd 3.7 binary: the anchor, named "etcd" in every table),
// -etcd34 (a second etcd, a column of its own when it is there: Debian's
// 3.4), -member-cpus and -cpuprofile (`benchnet PART -h`).
//
// Every member of both systems starts with Go's default GOMAXPROCS,
// what an operator gets; -member-cpus share gives each its share of the
// machine's cores (cores / 3, at least 1), -member-cpus N sets N
// (memberEnv in main.go says what the share changes). Every report says
// which setting it ran with.
//
// # Table (table.go, load.go, report.go)
//
// The per-op table of scripts/bench.sh: grant, renew, check, release
// (each alone) and mixed (each client grants, renews, checks and releases
// in turn), at 1, 16 and 64 concurrent clients, against the systems
// started side by side:
//
//   - ours: 3 `lease-node serve` members started by scripts/cluster.sh
//     (mutual TLS between members, plain HTTP for clients on loopback),
//     through one chunklease/client.Client with Batching (ours.go);
//   - etcd: 3 etcd 3.7 members, each with its own data directory,
//     --unsafe-no-fsync (no disk on the request path, as PaxosLease has
//     none), through one go.etcd.io/etcd/client/v3 client with every
//     member's endpoint (etcd.go, etcdproc.go): grant = LeaseGrant,
//     renew = LeaseKeepAliveOnce, check = LeaseTimeToLive, release =
//     LeaseRevoke;
//   - etcd-3.4: the same with the second etcd, when there;
//   - etcd-fsync (-fsync): etcd 3.7 with fsync on, as it ships.
//
// Like for like: each client works on chunks (leases) of its own, so
// nothing contends; renew and check clients cycle over 1000 / clients
// chunks granted before the run; release clients give back chunks
// granted before the run (a pool sized from the rates measured so far;
// a client whose pool runs out stops, and the run is incomplete); grant
// clients take fresh chunks. A run is set up (not measured), warmed for
// -warm (not measured), started at one instant, measured for -duration
// (an op started before the end counts when answered), and torn down
// after (everything still held given back, not measured). ops/s is the
// ok ops over the time from the start to the last answer; latencies are
// of the ok ops, nearest-rank percentiles. Each row runs the systems in
// turn (reversed on odd rounds), so that a change in the machine's load
// falls on all; the table shows each figure's median over the rounds and
// its spread (the least and the most). Each run also reports the CPU
// time the servers and this process (the clients) used per op. The
// goals (report.go): every benchmark at least twice etcd 3.7's (no
// fsync) ops/s at 16 and at 64 clients, and a p50 no higher than
// etcd's at 1 client; a missing or incomplete run misses its goal.
//
// # Latency-bound (latency.go, lab.go)
//
// Every member of both systems and this program's clients in network
// namespaces of their own (maelstrom/netns), with a fixed delay on every
// packet between any two (-delay-ms one way; the lab's userspace delay
// path), so that what limits a client is the network's latency, not the
// CPU: 64 clients renewing stay far below what two cores serve. A
// client or member that makes calls wait for one another shows it as a
// p50 that grows with the clients. The goal: ours at 16 and 64 clients
// within 1.2x of its 1-client p50 (etcd's ratios as a reference). Linux
// and root only; the lab is removed at the end.
//
// # Open loop (openloop.go)
//
// Holders renewing on a schedule: renewals of 1000 leases in turn at a
// fixed offered rate, Poisson arrivals, whether or not earlier ones were
// answered; each latency counts from the renewal's scheduled arrival.
// The rates are 25, 50 and 75 % of etcd 3.7's saturation rate (renew,
// 64 clients in a closed loop, measured first). The goals: ours p50 and
// p99 no higher than etcd's at every rate.
//
// # Failover (failover.go)
//
// Ours: a Session of 300 ms leases held through member A (listed first);
// SIGKILL A; the time until the Session's first renewal sent after the
// kill is answered (by another member: A is dead), and the time until a
// Renew called in a loop from the kill succeeds; then the Session is
// held 3 s more (renewals counted, a loss reported) and A is restarted
// with its default boot wait. etcd: a lease kept through the client;
// SIGKILL the leader; the time until a KeepAliveOnce called in a loop
// from the kill succeeds; the member is restarted and every member is
// healthy before the next try. The goal: the Session's p50 below etcd's.
// It also shows etcd's granularity: a lease asked for 1 s is granted as
// 2 s (the TTL counts whole seconds and has a minimum).
//
// # Memory (memory.go)
//
// A fresh cluster; a million chunks granted through the client with
// leases that all end at one instant, so that they are all live when the
// grants are done and all idle just after, with no other request; the
// heap (right after a garbage collection) and VmRSS of each member are
// read empty, live, idle and after the sweeps reclaimed the chunks.
//
// Every part prints its goals as PASS or MISS lines and appends them to
// STORE/goals.txt, which scripts/bench_net.sh prints at the end. Every
// process is started and stopped by PID by this program (ours on
// loopback through scripts/cluster.sh), on every path out; each PID also
// goes to -pidfile for the script's backstop. Every loop is bounded in
// count and time, and traffic goes to 127.0.0.1 or into the lab's
// namespaces only.
//
// What it is not: a test. It asserts nothing about speed; a missed goal
// is a figure, printed as MISS.
//
// Tests: load_test.go (the runner against a fake system: the duration
// measured, warm-up left out, failures apart from ok ops, an interrupted
// run, a release pool used up, setup failures), stats_test.go
// (nearest-rank percentiles, medians), report_test.go (the goals pass,
// and each way of missing one is caught; the tables print every row,
// with the spread), goals_test.go (the latency, open-loop and failover
// goals pass and miss as they should).
package main
