package realnet

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"chunklease/internal/certs"
	"chunklease/maelstrom/harness/nodeproc"
)

// The ports every node listens on, at its own address in its own
// namespace: peers (mutual TLS) and clients (HTTP).
const (
	peerPort   = 7000
	clientPort = 8080
)

// certValidity is the lifetime of a run's certificates: longer than any
// run, shorter than anything worth stealing from a run directory.
const certValidity = 7 * 24 * time.Hour

// makeCerts writes a fresh cluster CA and one certificate per node (its
// id as the DNS name peers check) into the run directory's certs/, and
// the -cluster list every node gets.
func (n *Network) makeCerts() error {
	dir, err := filepath.Abs(filepath.Join(n.host.Dir, "certs")) // the nodes run in the temp dir
	if err != nil {
		return err
	}
	n.certDir = dir
	plan := certs.Plan{Dir: n.certDir, Members: n.host.Nodes, Validity: certValidity, Now: time.Now()}
	if _, err := certs.Write(plan); err != nil {
		return fmt.Errorf("the nodes' certificates in %s: %w", n.certDir, err)
	}
	members := make([]string, len(n.host.Nodes))
	for i, id := range n.host.Nodes {
		members[i] = id + "=" + netip.AddrPortFrom(n.lab.Node(id).Addr(), peerPort).String()
	}
	n.cluster = strings.Join(members, ",")
	return nil
}

// procConfig is node id's supervision: its log, the console, failures,
// and programs started inside its namespace.
func (n *Network) procConfig(id string) nodeproc.Config {
	return nodeproc.Config{Launch: n.launch, LogPath: filepath.Join(n.host.Dir, "node-logs", id+".log"),
		Console: n.host.Log, Mirror: n.cfg.LogStderr, Fail: n.fail.Set}
}

// launch starts node id's program inside its namespace: `BIN serve` with
// its id, the cluster, its client address and certificates, then the
// extra words; the environment is the harness's plus env (Host.Env and
// the node's own at the first start; a restart's Fault.Env and the
// node's own after a kill). The first program of a node gets
// -boot-wait-ms 0: nothing was accepted before it, so there is nothing
// to forget. Every later one gets the serve default, the longest lease
// (or LEASE_BOOT_WAIT_MS from its environment: the kill nemesis sets it,
// --kill-without-boot-wait to 0).
func (n *Network) launch(id string, env []string) (nodeproc.Proc, error) {
	ns := n.lab.Node(id)
	crt, key := certs.MemberFiles(id)
	args := []string{"serve", "-id", id, "-cluster", n.cluster,
		"-client-addr", netip.AddrPortFrom(ns.Addr(), clientPort).String(),
		"-tls-ca", filepath.Join(n.certDir, certs.CAFile),
		"-tls-cert", filepath.Join(n.certDir, crt), "-tls-key", filepath.Join(n.certDir, key)}
	n.mu.Lock()
	first := !n.launched[id]
	n.launched[id] = true
	n.mu.Unlock()
	if first {
		args = append(args, "-boot-wait-ms", "0")
	}
	if v, _ := lookupEnv(env, "LEASE_ACCEPTORS"); v == "self" && len(n.host.Nodes) > 1 {
		args = append(args, "-acceptors", id) // selfAcceptors
		if first {
			n.host.Log(fmt.Sprintf("netns: LEASE_ACCEPTORS=self: %s gets -acceptors %s, its own sole acceptor (serve refuses self in a cluster: this is the negative control)", id, id))
		}
	}
	args = append(args, n.cfg.Args...)
	return nodeproc.StartExec(nodeproc.Command{Bin: n.cfg.Bin, Args: args, Env: env,
		Start: ns.Start})
}

// clientURL is the base URL of node id's client API.
func (n *Network) clientURL(id string) string {
	return "http://" + netip.AddrPortFrom(n.lab.Node(id).Addr(), clientPort).String()
}

// lookupEnv is key's value in the environment a program started with env
// gets: the harness's own, then env, the last value winning.
//
// selfAcceptors: LEASE_ACCEPTORS=self is the contract's negative control
// (each node its own sole acceptor, so two nodes can grant one chunk).
// lease-node serve refuses self in a cluster of more than one member, a
// guard for people; the same configuration is a one-member acceptor list
// naming the node itself, which the harness passes as -acceptors <id> so
// that the negative control runs on the real network as it does on the
// simulated one.
func lookupEnv(env []string, key string) (string, bool) {
	value, found := os.LookupEnv(key)
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			value, found = v, true
		}
	}
	return value, found
}
