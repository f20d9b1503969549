// Command benchnet measures the chunk-lease service on a real network
// against etcd 3.4 on the same machine: the program behind
// scripts/bench_net.sh, which installs etcd, builds this and runs its
// three parts. It is a module of its own (go.mod here, chunklease
// replaced by the repository), so go.etcd.io/etcd/client/v3 and gRPC are
// never dependencies of the node.
//
//	benchnet table    [-ops 2000] [-clients 1,16,64] [-rounds 1] [-benchmarks ...] [-profile DIR]
//	benchnet failover [-tries 10] [-lease-ms 300] [-hold 3s]
//	benchnet memory   [-chunks 1000000] [-budget 150s]
//	benchnet report   -results STORE/results.jsonl   (the table's report again, from a stored run)
//
// with the shared flags -repo, -work, -store, -pidfile, -seed, -etcd,
// -member-cpus and -cpuprofile (`benchnet PART -h`).
//
// Every member of both systems starts with GOMAXPROCS = -member-cpus
// (default: the machine's cores / 3, at least 1; -1 leaves Go's
// default): the three members of a cluster share this machine with each
// other and the clients, where a real member has a machine of its own,
// and with Go's default their runtimes spend much of the shared cores
// looking for work (memberEnv in main.go has the measurement). The
// table prints the setting it ran with.
//
// # Table (table.go, load.go, report.go)
//
// The per-op table of scripts/bench.sh: grant, renew, check, release
// (each alone) and mixed (each client grants, renews, checks and releases
// in turn), at 1, 16 and 64 concurrent clients, 2000 measured ops each,
// against three systems started side by side:
//
//   - ours: 3 `lease-node serve` members started by scripts/cluster.sh
//     (mutual TLS between members, plain HTTP for clients on loopback),
//     through one chunklease/client.Client (ours.go);
//   - etcd: 3 etcd members from Debian's etcd-server (3.4), each with its
//     own data directory, --unsafe-no-fsync (no disk on the request path,
//     as PaxosLease has none), through one go.etcd.io/etcd/client/v3
//     client with every member's endpoint (etcd.go, etcdproc.go): grant =
//     LeaseGrant, renew = LeaseKeepAliveOnce, check = LeaseTimeToLive,
//     release = LeaseRevoke;
//   - etcd-fsync: the same with fsync on, as etcd ships.
//
// Like for like: each client works on chunks (leases) of its own, so
// nothing contends; renew and check clients cycle over 1000 / clients
// chunks granted before the run; release clients give back chunks
// granted before the run; grant clients take free chunks. A run is set
// up (not measured), warmed (5 ops a client, not measured), started at
// one instant, and torn down after (everything still held given back,
// not measured). ops/s is the ok ops over the time from the start to the
// last answer; latencies are of the ok ops, nearest-rank percentiles.
// Each row runs the systems in turn (ours, etcd, etcd-fsync; reversed on
// odd rounds), so that a change in the machine's load falls on all. Each
// run also reports the CPU time the servers and this process (the
// clients) used per op, which is what decides throughput at 16 and 64
// clients on a machine of few cores. The goals (report.go): every
// benchmark at least twice etcd's (no fsync) ops/s at 16 and at 64
// clients, and a p50 no higher than etcd's at 1 client; a missing or
// incomplete run misses its goal.
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
// healthy before the next try. It also shows etcd's granularity: a lease
// asked for 1 s is granted as 2 s (the TTL counts whole seconds, and 3.4
// raises it to its minimum).
//
// # Memory (memory.go)
//
// A fresh cluster; a million chunks granted through the client with
// leases that all end at one instant, so that they are all live when the
// grants are done and all idle just after, with no other request; the
// heap (right after a garbage collection) and VmRSS of each member are
// read empty, live, idle and after the sweeps reclaimed the chunks.
//
// Every process is started and stopped by PID by this program (ours
// through scripts/cluster.sh), on every path out; each PID also goes to
// -pidfile for the script's backstop. Every loop is bounded in count and
// time, and traffic goes to 127.0.0.1 only.
//
// What it is not: a test. It asserts nothing about speed; a missed goal
// is a figure, printed as MISS.
//
// Tests: load_test.go (the runner against a fake system: the ops spread
// over the clients, warm-up left out, failures apart from ok ops, the
// limit, setup failures), stats_test.go (nearest-rank percentiles,
// medians), report_test.go (the goals pass, and each way of missing one
// is caught; the tables print every row).
package main
