package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdCluster is three etcd members on 127.0.0.1, each in its own data
// directory, started and stopped by PID. fsync false runs every member
// with --unsafe-no-fsync (no disk on the request path, as PaxosLease has
// none); true is etcd as shipped. Peers speak plain HTTP (etcd's default;
// ours use mutual TLS); election timeout and heartbeat are etcd's
// defaults (1000 ms and 100 ms).
type etcdCluster struct {
	name    string
	members []*etcdMember
	httpc   *http.Client // reaches the members' /health
}

// etcdPlace is where a cluster's members live: member i's client and
// peer URLs, how member i's process starts (nil: here, cmd.Start), and
// the HTTP client that reaches the members from this program.
type etcdPlace struct {
	urls  func(i int) (clientURL, peerURL string, err error)
	start func(i int, cmd *exec.Cmd) error
	httpc *http.Client
}

// loopback places members on 127.0.0.1, on ports from pp.
func loopback(pp *ports) etcdPlace {
	return etcdPlace{httpc: &http.Client{Timeout: 2 * time.Second}, urls: func(int) (string, string, error) {
		cp, err1 := pp.next()
		pport, err2 := pp.next()
		if err := errors.Join(err1, err2); err != nil {
			return "", "", err
		}
		return fmt.Sprintf("http://127.0.0.1:%d", cp), fmt.Sprintf("http://127.0.0.1:%d", pport), nil
	}}
}

// etcdMember is one etcd process; args never change, so a restart (the
// same data directory) rejoins the cluster.
type etcdMember struct {
	name, bin, clientURL, peerURL string
	args                          []string
	env                           []string // beside this program's environment
	startIn                       func(cmd *exec.Cmd) error
	log                           string
	pids                          *pidFile
	cmd                           *exec.Cmd
	exited                        chan struct{} // closed when the process has been waited for
}

// startEtcd starts the cluster named name in dir and waits until every
// member reports healthy (60 s at most).
func startEtcd(bin, dir, name string, fsync bool, env []string, place etcdPlace, pids *pidFile) (*etcdCluster, error) {
	c := &etcdCluster{name: name, httpc: place.httpc}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var initial []string
	for i := range 3 {
		cu, pu, err := place.urls(i)
		if err != nil {
			return nil, fmt.Errorf("addresses for %s: %v", name, err)
		}
		m := &etcdMember{name: fmt.Sprintf("e%d", i+1), bin: bin, pids: pids, env: env,
			clientURL: cu, peerURL: pu}
		if place.start != nil {
			m.startIn = func(cmd *exec.Cmd) error { return place.start(i, cmd) }
		}
		initial = append(initial, m.name+"="+m.peerURL)
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.log = filepath.Join(dir, m.name+".log")
		data := filepath.Join(dir, m.name+".data")
		// A new cluster each time: a data directory left by an earlier
		// part's cluster (other addresses, another cluster token) would
		// keep the member from ever becoming healthy.
		if err := os.RemoveAll(data); err != nil {
			return nil, err
		}
		m.args = []string{"--name", m.name, "--data-dir", data,
			"--listen-client-urls", m.clientURL, "--advertise-client-urls", m.clientURL,
			"--listen-peer-urls", m.peerURL, "--initial-advertise-peer-urls", m.peerURL,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", filepath.Base(dir) + "-" + name, "--logger", "zap", "--log-outputs", "stderr"}
		if !fsync {
			m.args = append(m.args, "--unsafe-no-fsync")
		}
		if err := m.start(); err != nil {
			c.stop()
			return nil, err
		}
	}
	if err := c.waitHealthy(60 * time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// start runs the member in the background, its output in its log.
func (m *etcdMember) start() error {
	out, err := os.OpenFile(m.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(m.bin, m.args...)
	cmd.Env = append(os.Environ(), m.env...)
	cmd.Stdout, cmd.Stderr = out, out
	// A backstop if this program dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := cmd.Start
	if m.startIn != nil {
		start = func() error { return m.startIn(cmd) }
	}
	if err := start(); err != nil {
		out.Close()
		return fmt.Errorf("starting etcd %s: %w", m.name, err)
	}
	m.pids.add(cmd.Process.Pid, "etcd")
	m.cmd, m.exited = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		out.Close()
		close(m.exited)
	}()
	return nil
}

func (m *etcdMember) running() bool {
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (m *etcdMember) kill() {
	if m.running() {
		m.cmd.Process.Signal(syscall.SIGKILL)
		<-m.exited
	}
}

// stop sends SIGTERM, and SIGKILL after 10 s.
func (m *etcdMember) stop() {
	if !m.running() {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(10 * time.Second):
		m.kill()
	}
}

func (c *etcdCluster) stop() {
	for _, m := range c.members {
		m.stop()
	}
}

func (c *etcdCluster) endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.clientURL)
	}
	return eps
}

// healthy asks the member's /health, which (3.4 and 3.7) answers true only
// when the member has a leader and a read through raft succeeds.
func (m *etcdMember) healthy(hc *http.Client) bool {
	resp, err := hc.Get(m.clientURL + "/health")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"true"`)
}

// waitHealthy waits until every member is healthy, failing early with the
// end of the log of a member that exited.
func (c *etcdCluster) waitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, m := range c.members {
		for !m.healthy(c.httpc) {
			if !m.running() {
				return fmt.Errorf("%s member %s exited; see %s", c.name, m.name, m.log)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s member %s is not healthy after %v; see %s", c.name, m.name, timeout, m.log)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// leader returns the index of the member that leads, by asking each
// member's status.
func (c *etcdCluster) leader(ctx context.Context, cli *clientv3.Client) (int, error) {
	for _, m := range c.members {
		if !m.running() {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := cli.Status(sctx, m.clientURL)
		cancel()
		if err != nil || st.Leader == 0 {
			continue
		}
		for i, mm := range c.members {
			if !mm.running() {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			s2, err := cli.Status(sctx, mm.clientURL)
			cancel()
			if err == nil && s2.Header.MemberId == st.Leader {
				return i, nil
			}
		}
	}
	return -1, fmt.Errorf("%s: no member names a leader", c.name)
}

// newEtcdClient is a client of endpoints, as a program would make it.
func newEtcdClient(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second,
		DialKeepAliveTime: 10 * time.Second, DialKeepAliveTimeout: 3 * time.Second, Logger: zap.NewNop()})
}
