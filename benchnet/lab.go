package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"chunklease/client"
	"chunklease/internal/certs"
	"chunklease/maelstrom/netns"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// The latency part's lab: seven namespaces of maelstrom/netns, one per
// process (our members n1..n3, etcd's e1..e3) and one for this
// program's clients ("bench"), all of them lab nodes, so that the lab's
// latency (a fixed delay on every packet from one node to another)
// lies on every path: client to member, member to member, and back.
// Nothing runs in the root namespace but this program; the lab's Close
// removes every namespace, link and rule.

var (
	labOurs  = []string{"n1", "n2", "n3"}
	labEtcd  = []string{"e1", "e2", "e3"}
	labBench = "bench"
)

// labKeys is how many leases a renew run in the lab cycles over, all
// clients together: each grant of the set-up costs two round trips of
// the delay, so the 1000 of the loopback table would take a lone client
// 40 s to set up.
const labKeys = 64

const (
	labPeerPort   = 7000
	labClientPort = 8080
	labEtcdClient = 2379
	labEtcdPeer   = 2380
)

func (l *latencyPart) run(ctx context.Context, env *benchEnv) error {
	clients, err := intList(l.clients)
	if err != nil {
		return err
	}
	ops, err := benchList(l.benchOps)
	if err != nil {
		return err
	}
	if len(clients) < 2 {
		return fmt.Errorf("-clients %s: give the base count and at least one more", l.clients)
	}
	lab, err := netns.Create(ctx, netns.Config{Nodes: slices.Concat(labOurs, labEtcd, []string{labBench}), Seed: env.seed,
		Logf: func(format string, args ...any) { env.logf("lab: "+format, args...) }})
	if err != nil {
		return fmt.Errorf("the latency part needs network namespaces (run as root): %w", err)
	}
	defer lab.Close()
	if err := lab.SetLatency(l.delayMs); err != nil {
		return err
	}
	env.logf("lab %s: %d ms one way between any two of its %d namespaces", lab.Name(), l.delayMs, len(lab.Nodes()))
	us, stopOurs, err := startLabOurs(ctx, env, lab, l.leaseMs)
	defer stopOurs()
	if err != nil {
		return err
	}
	them, stopEtcd, err := startLabEtcd(env, lab, (l.leaseMs+999)/1000)
	defer stopEtcd()
	if err != nil {
		return err
	}
	systems := []system{us, them}
	var results []result
	for round := range l.rounds {
		for _, op := range ops {
			for _, n := range clients {
				for _, sys := range alternate(systems, round) {
					id := fmt.Sprintf("L%d%s%d", round, op[:2], n)
					spec := runSpec{Op: op, Clients: n, Duration: l.duration, Warm: l.warm}
					if op == "release" {
						// A hop costs delayMs: n clients release at most
						// n / (4 hops) per ms.
						perS := 1000 / (4 * float64(max(l.delayMs, 1)))
						spec.Pool, spec.WarmPool = int(perS*l.duration.Seconds())+20, int(perS*l.warm.Seconds())+20
					}
					r, err := runOnce(ctx, sys, spec, id)
					if err != nil {
						return fmt.Errorf("%s %s with %d clients: %w", sys.Name(), op, n, err)
					}
					if ctx.Err() != nil {
						return ctx.Err()
					}
					r.Round, r.MemberProcs = round, env.memberProcs()
					results = append(results, r)
					env.save("latency.jsonl", r)
					all := r.Kinds["all"]
					env.logf("latency-bound %-5s %-7s %2d clients: %d/%d ok, %.0f ops/s, p50 %.2f ms, p99 %.2f ms (load %.2f -> %.2f)%s",
						r.System, op, n, all.OK, r.Done, all.OpsPerS, all.P50Ms, all.P99Ms, r.Load[0], r.Load[1], firstErr(all))
				}
			}
		}
	}
	l.report(env, results, ops, clients, pathNote(lab.PacketStats()))
	return nil
}

// pathNote sums up what the delay paths did: how late after its due
// time a held packet went on (the userspace path's own error).
func pathNote(stats map[string]netns.PacketStats) string {
	var delayed uint64
	var meanSum, maxLate int64
	for _, s := range stats {
		delayed += s.Delayed
		meanSum += s.MeanLateUs * int64(s.Delayed)
		maxLate = max(maxLate, s.MaxLateUs)
	}
	if delayed == 0 {
		return ""
	}
	return fmt.Sprintf("%d packets held; each went on %.0f µs after its due time on average, %d µs at most", delayed, float64(meanSum)/float64(delayed), maxLate)
}

// labProc is a process this program started in a lab namespace.
type labProc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startIn starts bin with args in ns, its output in log; the process
// gets SIGKILL if this program dies first.
func startIn(ns *netns.Namespace, name, bin string, args, env []string, log string, pids *pidFile) (*labProc, error) {
	out, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := ns.Start(cmd); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	pids.add(cmd.Process.Pid, name)
	p := &labProc{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM, and SIGKILL after 10 s.
func (p *labProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// labHTTP is an HTTP client that dials from the bench namespace.
func labHTTP(lab *netns.Lab) *http.Client {
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: lab.Node(labBench).DialContext, DisableKeepAlives: true}}
}

// startLabOurs builds lease-node and starts our three members in their
// namespaces (peer TLS as scripts/cluster.sh sets it up), waits until
// each is ready, and makes the client in the bench namespace.
func startLabOurs(ctx context.Context, env *benchEnv, lab *netns.Lab, maxLeaseMs int64) (*ours, func(), error) {
	var procs []*labProc
	stop := func() {
		for _, p := range procs {
			p.stop()
		}
	}
	dir := filepath.Join(env.work, "ours-lab")
	bin := filepath.Join(dir, "lease-node")
	env.logf("building lease-node for the lab")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = env.repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, stop, fmt.Errorf("go build lease-node: %v\n%s", err, out)
	}
	certDir := filepath.Join(dir, "certs")
	if _, err := certs.Write(certs.Plan{Dir: certDir, Members: labOurs, Validity: 24 * time.Hour, Now: time.Now()}); err != nil {
		return nil, stop, err
	}
	var members, endpoints []string
	for _, id := range labOurs {
		members = append(members, id+"="+netip.AddrPortFrom(lab.Node(id).Addr(), labPeerPort).String())
		endpoints = append(endpoints, "http://"+netip.AddrPortFrom(lab.Node(id).Addr(), labClientPort).String())
	}
	us := &ours{leaseMs: maxLeaseMs, keys: labKeys}
	for _, id := range labOurs {
		crt, key := certs.MemberFiles(id)
		args := []string{"serve", "-id", id, "-cluster", strings.Join(members, ","),
			"-client-addr", netip.AddrPortFrom(lab.Node(id).Addr(), labClientPort).String(),
			"-tls-ca", filepath.Join(certDir, certs.CAFile), "-tls-cert", filepath.Join(certDir, crt), "-tls-key", filepath.Join(certDir, key),
			"-boot-wait-ms", "0", "-max-lease-ms", fmt.Sprint(maxLeaseMs)}
		p, err := startIn(lab.Node(id), "lease-node "+id, bin, args, env.memberEnv(), filepath.Join(dir, id+".log"), env.pids)
		if err != nil {
			return nil, stop, err
		}
		procs = append(procs, p)
		us.pids = append(us.pids, p.cmd.Process.Pid)
	}
	hc := labHTTP(lab)
	for i, ep := range endpoints {
		ready := waitUntil(30*time.Second, func() bool {
			resp, err := hc.Get(ep + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		if !ready {
			return nil, stop, fmt.Errorf("our member %s is not ready after 30 s; see %s", labOurs[i], filepath.Join(dir, labOurs[i]+".log"))
		}
	}
	c, err := client.New(client.Config{Endpoints: endpoints, Seed: env.seed, Batching: true, DialContext: lab.Node(labBench).DialContext})
	if err != nil {
		return nil, stop, err
	}
	us.c = c
	return us, func() { c.Close(); stop() }, nil
}

// startLabEtcd starts etcd 3.7 (no fsync) in the e1..e3 namespaces and
// its client in the bench namespace.
func startLabEtcd(env *benchEnv, lab *netns.Lab, ttlS int64) (*etcdSystem, func(), error) {
	place := etcdPlace{httpc: labHTTP(lab),
		urls: func(i int) (string, string, error) {
			addr := lab.Node(labEtcd[i]).Addr()
			return "http://" + netip.AddrPortFrom(addr, labEtcdClient).String(), "http://" + netip.AddrPortFrom(addr, labEtcdPeer).String(), nil
		}}
	place.start = func(i int, cmd *exec.Cmd) error { return lab.Node(labEtcd[i]).Start(cmd) }
	env.logf("starting 3 etcd %s members in the lab (--unsafe-no-fsync)", env.etcdVersion)
	ec, err := startEtcd(env.etcdBin, filepath.Join(env.work, "etcd-lab"), "etcd", false, env.memberEnv(), place, env.pids)
	if err != nil {
		return nil, func() {}, err
	}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		return lab.Node(labBench).DialContext(ctx, "tcp", addr)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.endpoints(), DialTimeout: 5 * time.Second,
		DialKeepAliveTime: 10 * time.Second, DialKeepAliveTimeout: 3 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(dial)}})
	if err != nil {
		ec.stop()
		return nil, func() {}, err
	}
	return &etcdSystem{name: "etcd", version: env.etcdVersion, c: cli, ttlS: ttlS, ec: ec, keys: labKeys}, func() { cli.Close(); ec.stop() }, nil
}
