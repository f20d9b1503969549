package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"chunklease/internal/certs"
	"chunklease/internal/cpuprof"
	"chunklease/internal/histtest"
	"chunklease/internal/loopport"
	"chunklease/internal/proctest"
)

// serveCluster is N `lease-node serve` processes on loopback with random
// ports and generated certificates, and an HTTP client that records its
// lease ops in a history. The test stops every process by PID.
type serveCluster struct {
	t       testing.TB
	dir     string
	members []*serveMember
	extra   []string // serve flags every member gets
	env     []string
	hist    *histtest.Recorder
	client  *http.Client
}

type serveMember struct {
	id, peerAddr, clientAddr string
	logPath                  string
	mu                       sync.Mutex
	cmd                      *exec.Cmd
	exited                   chan struct{} // closed when the current process has exited
	exitErr                  error
}

// startServeCluster starts n members with -boot-wait-ms 0 (a first
// start) and the extra flags, and waits until every one is ready.
func startServeCluster(t testing.TB, n int, extra ...string) *serveCluster {
	t.Helper()
	c := newServeCluster(t, n, extra...)
	for i := range c.members {
		c.start(i, "-boot-wait-ms", "0")
	}
	for i := range c.members {
		c.waitReady(i, 15*time.Second)
	}
	return c
}

// newServeCluster makes the certificates and picks the ports; nothing runs.
func newServeCluster(t testing.TB, n int, extra ...string) *serveCluster {
	t.Helper()
	c := &serveCluster{t: t, dir: t.TempDir(), extra: extra, hist: histtest.New(t),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	for _, k := range []string{cpuprof.DirEnv, cpuprof.SecondsEnv} { // profiling the members (docs/performance.md)
		if v := os.Getenv(k); v != "" {
			c.env = append(c.env, k+"="+v)
		}
	}
	var ids []string
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%d", i)
		ids = append(ids, id)
		c.members = append(c.members, &serveMember{id: id, peerAddr: freeAddr(t), clientAddr: freeAddr(t),
			logPath: filepath.Join(c.dir, id+".log")})
	}
	if _, err := certs.Write(certs.Plan{Dir: c.dir, Members: ids, Validity: 24 * time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stopAll)
	return c
}

// freeAddr is a loopback address with a free port below Linux's
// ephemeral range: members are killed and started again on the same
// ports, and a port the kernel handed out for listening goes back to the
// pool it takes outgoing connections' ports from, so under a busy test
// run a restarted member found its port taken ("address already in
// use"). The picker never hands out a port twice (internal/loopport).
func freeAddr(t testing.TB) string {
	addr, err := testPorts.NextAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// testPorts walks from a seed of its own per process, so that test
// binaries running at once rarely meet.
var testPorts = loopport.New(uint64(os.Getpid()) * 97)

func (c *serveCluster) clusterFlag() string {
	var parts []string
	for _, m := range c.members {
		parts = append(parts, m.id+"="+m.peerAddr)
	}
	return strings.Join(parts, ",")
}

// start runs member i with the cluster's flags plus args.
func (c *serveCluster) start(i int, args ...string) {
	c.t.Helper()
	m := c.members[i]
	crt, key := certs.MemberFiles(m.id)
	all := []string{"serve", "-id", m.id, "-cluster", c.clusterFlag(), "-client-addr", m.clientAddr,
		"-tls-ca", filepath.Join(c.dir, certs.CAFile), "-tls-cert", filepath.Join(c.dir, crt), "-tls-key", filepath.Join(c.dir, key)}
	all = append(append(all, c.extra...), args...)
	logf, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(nodeBin, all...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, c.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	logf.Close()
	exited := make(chan struct{})
	m.mu.Lock()
	m.cmd, m.exited, m.exitErr = cmd, exited, nil
	m.mu.Unlock()
	go func() {
		err := cmd.Wait()
		m.mu.Lock()
		m.exitErr = err
		m.mu.Unlock()
		close(exited)
	}()
}

// signal sends sig to member i's process, by PID.
func (c *serveCluster) signal(i int, sig syscall.Signal) {
	m := c.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		_ = syscall.Kill(m.cmd.Process.Pid, sig)
	}
}

// pause SIGSTOPs member i and waits until the kernel shows it stopped.
func (c *serveCluster) pause(i int) {
	c.t.Helper()
	c.signal(i, syscall.SIGSTOP)
	m := c.members[i]
	m.mu.Lock()
	pid := m.cmd.Process.Pid
	m.mu.Unlock()
	proctest.WaitStopped(c.t, pid, m.id)
}

// resume SIGCONTs member i.
func (c *serveCluster) resume(i int) { c.signal(i, syscall.SIGCONT) }

// kill SIGKILLs member i and waits for it.
func (c *serveCluster) kill(i int) {
	c.signal(i, syscall.SIGCONT)
	c.signal(i, syscall.SIGKILL)
	c.waitExit(i, 10*time.Second)
}

// waitExit waits for member i's process to end and returns its exit status.
func (c *serveCluster) waitExit(i int, limit time.Duration) int {
	c.t.Helper()
	m := c.members[i]
	m.mu.Lock()
	exited := m.exited
	m.mu.Unlock()
	select {
	case <-exited:
	case <-time.After(limit):
		c.t.Fatalf("%s did not exit within %v; its log:\n%s", m.id, limit, c.log(i))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.exitErr == nil {
		return 0
	}
	if ee, ok := m.exitErr.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// stopAll kills every member still running (SIGCONT first, for a paused one).
func (c *serveCluster) stopAll() {
	for i, m := range c.members {
		m.mu.Lock()
		running := m.cmd != nil
		exited := m.exited
		m.mu.Unlock()
		if running {
			c.signal(i, syscall.SIGCONT)
			c.signal(i, syscall.SIGKILL)
			<-exited
		}
	}
}

func (c *serveCluster) log(i int) string {
	b, _ := os.ReadFile(c.members[i].logPath)
	return string(b)
}

// url is member i's client URL for path.
func (c *serveCluster) url(i int, path string) string {
	return "http://" + c.members[i].clientAddr + path
}

// waitReady polls member i's /readyz until 200, failing the test after
// limit or if the process exits.
func (c *serveCluster) waitReady(i int, limit time.Duration) {
	c.t.Helper()
	c.poll(limit, fmt.Sprintf("%s ready", c.members[i].id), func() bool {
		status, _ := c.get(i, "/readyz")
		return status == http.StatusOK
	}, i)
}

// poll calls ok every 20 ms until it is true; a deadline for an external
// process, never a synchronisation inside one.
func (c *serveCluster) poll(limit time.Duration, what string, ok func() bool, watch ...int) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		for _, i := range watch {
			select {
			case <-c.members[i].exited:
				c.t.Fatalf("waiting for %s: %s exited; its log:\n%s", what, c.members[i].id, c.log(i))
			default:
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %s: not within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond) // polling an external process, with a deadline
	}
}

// get fetches path from member i: status and body ("" on a connection error).
func (c *serveCluster) get(i int, path string) (int, string) {
	resp, err := c.client.Get(c.url(i, path))
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends body to member i's endpoint: the status, the decoded reply
// and the response (nil on a connection error, with err).
func (c *serveCluster) post(i int, path string, body []byte, header ...string) (int, map[string]any, *http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, c.url(i, path), bytes.NewReader(body))
	for k := 0; k+1 < len(header); k += 2 {
		req.Header.Set(header[k], header[k+1])
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var reply map[string]any
	if err := json.Unmarshal(raw, &reply); err != nil {
		c.t.Errorf("%s %s answered %d with a body that is not JSON: %q", c.members[i].id, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, reply, resp, nil
}

// abandon posts body to path on member i and gives up once /metrics shows
// waiting (the request is in the core), then waits until /metrics shows
// every one of counted, nothing in flight and nothing pending in the core.
func (c *serveCluster) abandon(i int, path, body, waiting string, counted ...string) {
	c.t.Helper()
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url(i, path), strings.NewReader(body))
	gone := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %d", resp.StatusCode)
		}
		gone <- err
	}()
	c.poll(5*time.Second, "the impatient request to "+path+" in flight", func() bool {
		_, m := c.get(i, "/metrics")
		return strings.Contains(m, waiting)
	}, i)
	leave()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		c.t.Fatalf("the client that gave up on %s: %v", path, err)
	}
	c.poll(5*time.Second, "the abandoned request to "+path+" counted and nothing in flight", func() bool {
		_, m := c.get(i, "/metrics")
		for _, want := range append(counted, "chunklease_requests_in_flight 0", "chunklease_core_pending_requests 0") {
			if !strings.Contains(m, want) {
				return false
			}
		}
		return true
	}, i)
}

// op runs lease op f (grant, renew, check, release) through member i as
// client process proc and records it in the history. value is the

// history value: chunk, server, lease_ms, token.
func (c *serveCluster) op(proc, i int, f string, value map[string]any) (int, map[string]any) {
	body := map[string]any{"chunk_handle": value["chunk"]}
	for k, v := range value {
		if k != "chunk" {
			body[k] = v
		}
	}
	b, _ := json.Marshal(body)
	node := c.members[i].id
	c.hist.Invoke(proc, node, f, value)
	status, reply, _, err := c.post(i, "/v1/lease_"+f, b)
	if err != nil {
		c.hist.Unknown(proc, node, f, value, err.Error())
		return 0, nil
	}
	c.hist.Complete(proc, node, f, value, reply)
	return status, reply
}
