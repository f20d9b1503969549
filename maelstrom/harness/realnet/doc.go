// Package realnet is the harness's real network (harness.Network,
// `maelstrom test --network netns`, contract section 2): every node runs
// as `BIN serve` in its own Linux network namespace with its own address,
// the harness's clients speak the nodes' HTTP API from a namespace of
// their own, and every fault is the kernel's, as Jepsen tests a database
// on real machines. The plumbing (namespaces, bridge, rules, delay
// paths) is package netns; process supervision (launch, stderr log, exit
// watching, signals, reaping) is package nodeproc, shared with the
// simulated network. The runner, workloads, checkers, history and report
// are the same as on the simulated network: nothing on the runner's side
// of the seam knows which network runs.
//
// It is not a simulation: timing is the machine's, the kernel's loss and
// duplicate draws are not seeded, and the same seed gives the same
// schedule (faults, nodes, grudges, settings, the workload's choices)
// but not the same interleaving.
//
// # Start (realnet.go, launch.go, ready.go)
//
// Start builds a lab (netns.Create: one namespace per node at
// 198.18.0.<i+1>, one for the clients at 198.18.0.254, a switch;
// stale labs of dead harnesses are removed first, with a console line
// each), sets --latency (Lab.SetLatency: a constant delay on every
// node-to-node packet), writes a fresh CA and one certificate per node
// (its id as the DNS name its peers check) into <run>/certs/, and starts
// each node in its namespace:
//
//	BIN serve -id <id> -cluster n0=198.18.0.1:7000,... -client-addr 198.18.0.<i+1>:8080 \
//	  -tls-ca <run>/certs/ca.crt -tls-cert <run>/certs/<id>.crt -tls-key <run>/certs/<id>.key \
//	  [-boot-wait-ms 0] [-acceptors <id>] ARGS...
//
// with the harness's environment plus Host.Env and Host.NodeEnv(id) (the
// LEASE_* settings pass through), in the OS temp directory, in its own
// process group, its stderr (and stdout) in node-logs/<id>.log. The first
// program of each node gets -boot-wait-ms 0 (nothing was accepted before
// it); every restart gets the serve default, the longest lease, or
// LEASE_BOOT_WAIT_MS from its environment (the kill nemesis sets it,
// --kill-without-boot-wait to 0: the negative control). LEASE_ACCEPTORS
// =self, the contract's negative control, which serve refuses in a
// cluster, becomes -acceptors <id>: the same configuration, each node its
// own sole acceptor, said on the console. Start then probes every node's
// GET /readyz (boot wait over, a majority of acceptors reachable) every
// 50 ms until it answers 200; a node that does not within ReadyTimeout
// (--init-timeout, 10 s by default) fails the run (exit 255), named with its last answer and its
// log's last lines; a node that exits fails it at once.
//
// # Clients (client.go)
//
// Client.Call sends the workload's request body, less "type" and
// "msg_id", as POST /v1/<type> to the node's client address, dialled
// from the client namespace (Lab.Client().DialContext), with the 5 s
// client timeout; connections are kept alive and shared. The answer
// becomes what the workloads already read (Reply, Unanswered), with
// "in_reply_to" added (the client numbers its requests from 1, as a
// Maelstrom client numbers its msg_id):
//
//	HTTP 200                         the _ok body: ok
//	409 with a lease_grant_ok body   a grant naming another primary: ok, as a 200
//	400 401 404 405 409 413 503      the {type:"error",code,text} body
//	                                 (503 is code 11: fail; 409 is 22: fail; ...)
//	504                              harness.ErrTimeout: may have happened (info;
//	                                 fail for an idempotent check, as the workloads classify)
//	connection refused               dialled again every 100 ms until the timeout, as a
//	                                 Maelstrom client waits on a dead node; never
//	                                 connected: a code-11 error body, nothing was sent: fail
//	no answer in time, a connection  harness.ErrTimeout (info)
//	broken or reset
//
// An answer that is not such a body (not JSON, no type, an error body
// with 200) fails the run, naming the node, the endpoint and the answer,
// as a line Maelstrom rejects does on the simulated network.
//
// # Faults (apply.go)
//
//	start-partition  Lab.Partition(grudge): nftables drops on each receiver's input (Jepsen's iptables)
//	stop-partition   Lab.Heal: every partition rule flushed
//	kill             SIGKILL to each chosen node's process group (SIGCONT first); the node is down
//	start            every killed node started again in its namespace (restart boot wait);
//	                 Applied.Done once each answers GET /healthz within ReadyTimeout
//	pause, resume    SIGSTOP / SIGCONT to the process group
//	start-packet     Lab.StartPacket(nodes, settings): loss and delay (with jitter, reordering)
//	                 where the nodes' packets arrive, duplication where they leave
//	stop-packet      Lab.StopPacket: rules removed, held packets released
//
// This kernel has no netem and no nftables queue expression: loss is an
// nftables numgen rule, duplication nftables dup, and delay, jitter and
// reordering an NFQUEUE path in the harness process that holds each
// packet until its due time (package netns's doc.go says exactly how,
// with its measured error). Client traffic is never partitioned, delayed
// or lost, as Maelstrom gives clients zero latency. The final phase heals
// through the same actions (stop-partition, stop-packet, resume, start),
// so the final reads run on a whole, healed network.
//
// # Stop and cleanup
//
// Stop waits for a restart in flight (the runner cancelled it), reads
// what the kernel counted (observe.go), kills and reaps every program,
// and closes the lab: its namespaces go, and with them every link,
// address, rule and queue; a process left in one is killed and named on
// the console. It runs on every path: the end of a run, a failure, a
// Ctrl-C (SIGINT or SIGTERM to the harness: the runner's context ends).
// A harness killed with SIGKILL leaves its lab behind (its nodes die with
// it: Pdeathsig); the next run's Create removes it and says so. Nothing
// is ever sent outside the lab: every member's only route is the lab's
// /24, and the clients dial IP literals inside it only.
//
// # What it observes (observe.go)
//
// No message counts and no journal (results.json has no net counts, the
// report no messages.svg); instead results.json "network_observed": the
// lab's name and latency, and per node its address, how many programs it
// ran, their peak memory (VmHWM as each was killed), what its delay path
// did with the packets it sent (netns.PacketStats), and its namespace's
// TCP counters (/proc/<pid>/net/snmp: segments, retransmissions, resets,
// opens) read from its last program before teardown. The console's
// summary has a line of totals.
//
// # Requirements
//
// Root (netns.Check; a run without it fails with exit 255 and says so),
// and a node program with `serve` (lease-node). The workloads lease,
// master and lease-bench run through it; echo does not (serve has no echo
// endpoint: the CLI refuses it, 254, as it refuses --latency-dist other
// than constant and --log-net-*).
//
// Tests: client_test.go (the HTTP mapping, on any OS), realnet_linux_test.go
// (as root, with the built node: a short run under every fault, valid; a
// node that never becomes ready fails the run naming it, and leaves
// nothing; a run interrupted halfway with SIGINT leaves no namespace,
// rule, qdisc or process; a node killed from outside during the final
// phase fails the run and leaves nothing), clock_linux_test.go (as root,
// with a clockfault build under kills and clock skews: every program of
// every node, restarts included, follows its clock file; valid; the final
// clock-reset before the final start). Without root those tests
// fail, naming root, rather than skip. scripts/run_tests.sh runs a short
// real-network lease run and its negative control; scripts/netns_acceptance.sh
// the longer acceptance runs beside the simulated network.
package realnet
