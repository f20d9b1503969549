// Package netns is the plumbing of the harness's real network (--network
// netns, contract section 2): a lab of Linux network namespaces on a
// bridge, in which every node runs as a real process with its own
// address, the harness's HTTP clients dial from a namespace of their own,
// and every fault is the kernel's, Jepsen-style. It is Linux only and
// needs root; elsewhere every entry point returns ErrUnsupported.
//
// It is not the harness: it starts no node by itself, knows nothing of
// TLS, HTTP or the workloads, and keeps no schedule. The harness decides
// what happens when and calls the methods below; the settings it passes
// are plain values it records in the history.
//
// # The lab
//
// Create(ctx, Config{Nodes: ids, Seed: seed, Logf: logf}) builds, for one
// run, N+2 named network namespaces (under /run/netns, as `ip netns add`
// makes them):
//
//	chunklease-<pid>-<start>-<seq>-switch   br0, and one port p<i> per member
//	chunklease-<pid>-<start>-<seq>-client   lo, eth0 198.18.0.254/24
//	chunklease-<pid>-<start>-<seq>-node-<id> lo, eth0 198.18.0.<i+1>/24 for the i-th node (from 0)
//
// <pid> and <start> (the creator's start time in clock ticks, so a reused
// pid is told apart) name the creating process; <seq> numbers its labs.
// That prefix is Lab.Name(). Each member's eth0 is one end of a veth
// pair created in the switch's namespace with its far end placed
// directly in the member's namespace: nothing of the lab ever exists in
// the root namespace. 198.18.0.0/15 is reserved for network tests (RFC
// 2544). Every member's only route is its /24: no default route, no link
// but lo and eth0, so nothing in the lab can reach anything outside it.
// IPv6 is switched off in every lab namespace before any link exists:
// the rules below speak IPv4, and IPv6 link-local traffic would go
// around a partition. Create returns once the kernel has every link in
// service (eth0 operationally up, every bridge port forwarding: the
// kernel brings links up asynchronously, and a packet sent earlier is
// dropped) and has accepted every kind of rule the faults use, so a
// missing kernel feature fails Create, not a run.
//
// Nodes are at most 126 (198.18.0.1 to .126 = 198.18.0.0/25, the block
// the rules match); ids are 1 to 64 letters, digits, '_', '.', '-'.
//
// # API (what the harness calls)
//
//	Check() error                                     nil, or why a lab cannot be built here (wraps ErrNeedRoot or ErrUnsupported)
//	Create(ctx, Config) (*Lab, error)                 build a lab (removes stale labs first, saying so through Config.Logf)
//	CleanStale() ([]string, error)                    remove labs whose creator is dead; one message per lab removed
//	KillGroup(pid int) error                          SIGKILL pid's process group (a node started with Setpgid)
//	(*Lab) Name() string                              the run's prefix of every namespace name
//	(*Lab) Nodes() []string                           the node ids
//	(*Lab) Node(id) *Namespace / Client() *Namespace  a member (nil for an unknown id)
//	(*Lab) Partition(grudge map[string][]string) error  receiver -> senders it drops; replaces the partition in place
//	(*Lab) Heal() error                               remove every partition rule at once
//	(*Lab) SetLatency(ms int) error                   a constant delay on every node's packets to other nodes (--latency)
//	(*Lab) StartPacket(nodes []string, f PacketFault) error  Jepsen's packet fault on those nodes' links
//	(*Lab) StopPacket() error                         remove every packet fault at once (latency stays)
//	(*Lab) PacketStats() map[string]PacketStats       what the delay paths did with each node's packets
//	(*Lab) Close() error                              remove everything (see Cleanup)
//	(*Namespace) ID(), Name(), Addr()                 node id or "client"; the name for `ip netns exec`; 198.18.0.x
//	(*Namespace) Start(cmd *exec.Cmd) error           cmd.Start() inside the namespace
//	(*Namespace) DialContext(ctx, network, addr)      http.Transport.DialContext from inside the namespace
//	(*Namespace) Listen / ListenPacket(network, addr) a listener inside the namespace
//
// nemesis.Grudge converts to Partition's argument as it is.
//
// # Processes and sockets inside a namespace
//
// Start, DialContext, Listen and ListenPacket each run on a fresh
// goroutine locked to its OS thread, which enters the namespace (setns),
// does the one call, and goes back to the harness's namespace; if it
// cannot go back, the thread is never unlocked, so the Go runtime ends it
// and no other goroutine ever runs in the wrong namespace. A socket keeps
// the namespace it was created in for its whole life; a process keeps the
// one it was forked in. So Start's cmd.Process.Pid is the program's own
// pid (no wrapper such as `ip netns exec`: the tests check the pid and
// the namespace the program reports), and the caller signals it
// (SIGSTOP, SIGCONT, SIGKILL; KillGroup for a Setpgid group), waits for
// it and starts it again in the same namespace. The caller's
// cmd.SysProcAttr applies; Pdeathsig works, because the starting thread
// lives on. A started program sees the lab's network but the harness's
// /sys (unlike `ip netns exec`, nothing is remounted). DialContext takes
// an IP literal inside 198.18.0.0/24 only, so no name lookup runs on
// another thread in another namespace and nothing is sent outside the
// lab.
//
// # Faults, exactly as this kernel carries them out
//
// The machines this project runs on (developers' and CI's) have no netem
// (CONFIG_NET_SCH_NETEM unset) and no nftables queue expression
// (CONFIG_NFT_QUEUE unset), but have nf_tables with numgen and dup,
// nft_compat, iptables' NFQUEUE target and nfnetlink_queue. So every
// fault is an nftables rule, and delays go through a small userspace
// path in the harness process. netem is not used even where it exists:
// one path, the tested one, runs everywhere. Each node has one table,
// named Lab.Name(), with three chains (rules_linux.go shows them); each
// chain is rewritten whole in one netlink batch, so a change is atomic
// within a node. A change across nodes is applied node by node, within
// milliseconds.
//
// Partition(grudge): for each receiver, in its namespace, "ip saddr
// <sender> counter drop" on the input hook, one rule per sender, as
// Jepsen's iptables partitions do. A directed grudge (the 3-node
// majorities ring) cuts one direction only; a TCP connection needs both,
// so it breaks, while UDP still passes the other way. ARP is not
// dropped (as with iptables). The client (198.18.0.254) is never
// dropped. Heal (= Partition(nil)) flushes every node's partition chain.
//
// A packet fault on node X's link acts on every packet X sends to
// another node (never to or from the client: Maelstrom gives clients zero
// latency, since client latency hides anomalies). Loss and delay act
// where X's packets arrive, in each receiver's namespace: a drop on X's
// own output would fail X's send with EPERM, and a packet held on X's
// output would stay charged to X's socket buffer and throttle it; a real
// link, and netem, do neither. PacketFault's fields on this kernel:
//
//   - LossPct: at each receiver, "ip saddr X numgen random mod 10000 <
//     LossPct*100 counter drop" on input. Independent per packet, drawn
//     by the kernel (not seeded); resolution 0.01%. A dropped packet is
//     silently gone, as on a wire.
//   - DelayMs, JitterMs: at each receiver, "ip saddr X counter queue"
//     (iptables' NFQUEUE target through nft_compat, one queue number per
//     sender) hands X's packets to the receiver's delay path: a netlink
//     socket the harness process opened in that namespace, a reader
//     goroutine and a scheduler goroutine. The scheduler holds each
//     packet until arrival + DelayMs + U(-JitterMs, +JitterMs) (uniform,
//     in nanoseconds, never below 0: netem's jitter without correlation),
//     then gives the kernel its accept verdict and the packet goes on.
//     Arrival is the kernel's receive timestamp (the path turns on
//     SO_TIMESTAMP, which enables receive timestamps system-wide, as
//     tcpdump does), so the wait to be read counts towards the delay.
//     Packets leave in due-time order, arrival order on ties: a plain
//     delay never reorders, jitter reorders packets whose delays cross.
//     The draws are seeded (Config.Seed, one stream per (sender,
//     receiver) pair). Only metadata is copied to userspace, never a
//     payload.
//   - ReorderPct: a packet drawn with this chance goes on at once
//     instead of waiting, overtaking the held ones (netem's reorder); it
//     needs a delay (DelayMs, JitterMs or the latency), else it is an
//     error.
//   - DuplicatePct: at X, on output, "numgen random mod 10000 <
//     DuplicatePct*100 dup to ip daddr device eth0" for packets to other
//     nodes: the kernel sends a copy at once, which holds nothing; the
//     original and the copy then meet loss and delay at the receiver
//     independently. Kernel draws, not seeded.
//   - SetLatency(ms) adds ms to every node's DelayMs (with or without a
//     packet fault on it): a constant delay on every node-to-node packet,
//     no jitter.
//
// A "packet" is one IP packet as the kernel handles it: with TCP
// segmentation offload, a bulk TCP sender's packet may carry many MTU
// segments; the lease service's messages are small, so for it a packet
// is a message.
//
// StopPacket removes the rules first (no packet is queued any more),
// then releases every held packet at once (one batch verdict per queue)
// and, when nothing is delayed any more, stops the delay path. In the
// other direction the path listens before the rule that feeds it
// exists. So no packet is ever queued with nobody listening (the NFQUEUE
// target has no bypass flag: such a packet would be dropped, showing a
// bug instead of hiding it). The kernel holds at most 10000 packets per
// queue (2000 packets/s for 5 s) and drops new ones beyond that; delays
// are bounded at 60 s.
//
// PacketStats counts, per sending node: packets delayed, packets that
// went on at once, the most held at one time, and how late after its due
// time a held packet got its verdict (mean and max, µs): the userspace
// path's own error, worth recording beside the settings. Measured
// (BenchmarkDelayPath2000pps, 2 shared cores at load average 4 to 7): at
// 2000 packets/s under a 10 ms delay the path adds about 0.7 ms at the
// median and 10 to 30 ms at p99 (most of that is the busy machine's
// scheduling: the no-fault stream's p99 is 3 to 25 ms too), held packets
// get their verdicts 0.7 ms late on average, and the path costs about 7%
// of one core. Create takes about 40 ms for 3 nodes and 47 ms for 5
// (75 and 155 ms at load 7), Close about 1.5 ms.
//
// # Cleanup
//
// Close stops every delay path (held packets go on; both goroutines of
// every path have ended when Close returns), kills any process still in
// one of the lab's namespaces (the caller should have stopped its own;
// Close names the ones it killed through Config.Logf) and deletes the
// namespaces, with which go every link, address, rule and queue. The
// root namespace never held anything: `ip netns list`, `ip link`, `nft
// list ruleset` and `tc qdisc` there show nothing of the run, during or
// after it (TestCloseLeavesNothing compares them). Close may be called
// twice; it must come after the caller's last use of the lab.
//
// A harness killed with SIGKILL cannot run Close: its namespaces stay
// named, and its nodes may survive it. CleanStale, which Create runs
// first, finds every lab whose creator is gone (no process with that pid
// and start time, or a zombie), kills the processes inside its
// namespaces (found as `ip netns pids` does, by /proc/<pid>/ns/net) and
// deletes the namespaces, returning a message such as:
//
//	removed stale lab chunklease-4242-98765-1 left by pid 4242, which is
//	no longer running: namespaces chunklease-4242-98765-1-client, ...;
//	killed 1 process(es) left in them: 4250 (lease-node) in
//	chunklease-4242-98765-1-node-n1
//
// Labs of running processes and names this package did not make are
// left alone.
//
// # Requirements
//
// Root, or CAP_SYS_ADMIN and CAP_NET_ADMIN: Check (and so Create) says
// which is missing and that the real-network test must run as root, and
// wraps ErrNeedRoot; the caller fails loudly with it, never skips. The
// kernel needs network namespaces, veth, bridge, nf_tables (ip family)
// with counter, numgen and dup, nft_compat with the NFQUEUE target, and
// nfnetlink_queue (Create probes the rules). No external program is run:
// links and addresses go through vishvananda/netlink and netns, rules
// through google/nftables, the queue through a client written here on
// mdlayher/netlink (florianl/go-nfqueue is not available here).
// scripts/setup_netns.sh installs ip, tc and nft from Debian's packages
// for people and for the tests' root-namespace comparison.
//
// # Tests
//
// Pure, on any OS: packet_test.go (fault values: validation, netem-style
// text, JSON; names; configuration), delayq_test.go (the delay queue:
// plain delays keep order exactly, jitter's distribution and reordering,
// reorder shares, per-sender sources, seeds). As root, each building its
// own lab: lab_linux_test.go (TCP client->node and node->node through
// programs started in the namespaces, the pid and namespace they run in,
// HTTP through Client().DialContext, links and routes of every member,
// dialing outside refused), partition_linux_test.go (a directed ring
// blocks exactly its three pairs, proven by arrivals and by each drop
// rule's counter; a replacement grudge; heal; clients never cut; bad
// grudges), packet_linux_test.go (loss over 2000 datagrams within 30% ±
// 5% and none without the fault; delay >= setting and order kept;
// jitter spreads and reorders; duplicates over 1000 datagrams within 50%
// ± 8%; reorder shares and overtaking; latency adds up and spares
// clients), process_linux_test.go (SIGSTOP, SIGCONT, SIGKILL and restart
// in place), cleanup_linux_test.go (Close leaves nothing and stops every
// goroutine; a Create that fails leaves nothing; a SIGKILLed harness's
// lab is removed by the next Create, with its message; the refusal
// without root, checked as the user nobody when the tests run as root). Not as root, the lab tests skip with a
// message naming root; the refusal test runs. Every wait is bounded
// (kernel and process states are polled with a deadline; every role
// process exits by itself after 60 s). bench_linux_test.go: Create and
// Close for 3 and 5 nodes, and the delay path at 2000 packets/s.
package netns
