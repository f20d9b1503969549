package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/internal/proctest"
	leasewl "chunklease/workloads/lease"
)

// procCluster is three lease-node processes n1..n3 that can be killed,
// restarted (with a fresh environment: a boot wait, a skewed clock) and
// cut off from each other, joined by an in-test router, with the test as
// the client c1. Every client op goes into a history in the workload's
// format, for the lease checker. scenarios_test.go's liveCluster is the
// simpler router it grew from.
type procCluster struct {
	t       *testing.T
	ids     []string
	mu      sync.Mutex
	procs   map[string]*exec.Cmd
	stdins  map[string]io.WriteCloser
	logs    map[string]*proctest.Output // each node's stderr, over all its incarnations
	blocked map[[2]string]bool          // [from, to] pairs whose messages are dropped
	replies replyWaits
	start   time.Time
	ops     []history.Op
	wg      sync.WaitGroup
}

// The settings of every process test: 1 s leases, a 1 s boot wait on
// restart (rule 7 of package lease, with M = 1 s), a 1 s quorum timeout.
// L = M/4 = 250 ms, so wall clocks must agree within 1000 - 250 = 750 ms.
var procEnv = []string{"LEASE_MAX_MS=1000", "LEASE_MS=1000", "LEASE_QUORUM_TIMEOUT_MS=1000"}

const (
	procBootWaitMs = 1000
	procLeadMs     = 250
)

var (
	clockfaultOnce sync.Once
	clockfaultBin  string
	clockfaultErr  error
)

// clockfaultNode builds the node with -tags clockfault once, beside the
// normal binary TestMain built.
func clockfaultNode(t *testing.T) string {
	clockfaultOnce.Do(func() {
		clockfaultBin = filepath.Join(filepath.Dir(nodeBin), "lease-node-clockfault")
		out, err := exec.Command("go", "build", "-tags", "clockfault", "-o", clockfaultBin, ".").CombinedOutput()
		if err != nil {
			clockfaultErr = fmt.Errorf("building the clockfault node: %v\n%s", err, out)
		}
	})
	if clockfaultErr != nil {
		t.Fatal(clockfaultErr)
	}
	return clockfaultBin
}

func newProcCluster(t *testing.T) *procCluster {
	c := &procCluster{t: t, ids: []string{"n1", "n2", "n3"}, procs: map[string]*exec.Cmd{}, stdins: map[string]io.WriteCloser{},
		logs: map[string]*proctest.Output{}, blocked: map[[2]string]bool{}, start: time.Now()}
	for _, id := range c.ids {
		c.logs[id] = &proctest.Output{}
	}
	t.Cleanup(c.stop)
	return c
}

// startNode starts node id with bin (the clockfault build when clock
// settings are given) and env on top of procEnv, and sends it init.
func (c *procCluster) startNode(id, bin string, env ...string) {
	cmd := exec.Command(bin)
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH")}, procEnv...), env...)
	cmd.Stderr = c.logs[id]
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.procs[id], c.stdins[id] = cmd, in
	c.mu.Unlock()
	c.wg.Add(1)
	go c.route(id, out)
	c.write(id, fmt.Sprintf(`{"src":"c0","dest":%q,"body":{"type":"init","msg_id":1,"node_id":%q,"node_ids":["n1","n2","n3"]}}`, id, id))
}

// kill stops node id with SIGKILL, as the kill nemesis does.
func (c *procCluster) kill(id string) {
	c.mu.Lock()
	cmd := c.procs[id]
	delete(c.procs, id)
	delete(c.stdins, id)
	c.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

func (c *procCluster) stop() {
	for _, id := range c.ids {
		c.kill(id)
	}
	c.wg.Wait()
}

// cut drops every message between the two groups, both ways; heal ends
// every cut.
func (c *procCluster) cut(a, b []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			c.blocked[[2]string{x, y}], c.blocked[[2]string{y, x}] = true, true
		}
	}
}

func (c *procCluster) heal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.blocked)
}

// route forwards node from's output to another node (unless cut off or
// down) or to the waiting client.
func (c *procCluster) route(from string, out io.Reader) {
	defer c.wg.Done()
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var env struct {
			Dest string          `json:"dest"`
			Body json.RawMessage `json:"body"`
		}
		if json.Unmarshal(line, &env) != nil {
			continue
		}
		if strings.HasPrefix(env.Dest, "n") {
			c.mu.Lock()
			drop := c.blocked[[2]string{from, env.Dest}]
			c.mu.Unlock()
			if !drop {
				c.write(env.Dest, string(line[:len(line)-1]))
			}
			continue
		}
		c.replies.deliver(env.Dest, env.Body)
	}
}

func (c *procCluster) write(id, line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.stdins[id]; in != nil {
		_, _ = io.WriteString(in, line+"\n")
	}
}

func (c *procCluster) record(op history.Op) {
	c.mu.Lock()
	defer c.mu.Unlock()
	op.Time, op.Index = int64(time.Since(c.start)), len(c.ops)
	c.ops = append(c.ops, op)
}

// send writes a client request and records its invoke; the returned
// channel gets the reply body.
func (c *procCluster) send(proc int, node, f string, value map[string]any) chan json.RawMessage {
	id, ch := c.replies.add()
	req := clientRequest(node, f, id, value)
	inv, _ := json.Marshal(value)
	c.record(history.Op{Process: history.Process{ID: proc}, Type: history.Invoke, F: f, Node: node, Value: inv})
	c.write(node, string(req))
	return ch
}

// complete records an op's completion: ok with the reply's fields, fail
// for a definite error, info for error 0 or no reply.
func (c *procCluster) complete(proc int, node, f string, value, reply map[string]any) {
	out := map[string]any{}
	for k, v := range value {
		out[k] = v
	}
	typ := history.OK
	switch {
	case reply == nil:
		typ = history.Info
	case reply["type"] == "error" && reply["code"] == float64(0):
		typ = history.Info
	case reply["type"] == "error":
		typ = history.Fail
	default:
		for _, k := range []string{"primary", "expires_in_ms", "new_expires_in_ms", "remaining_ms", "expired", "token"} {
			if v, ok := reply[k]; ok && !(f == "release" && k == "token") {
				out[k] = v
			}
		}
	}
	v, _ := json.Marshal(out)
	c.record(history.Op{Process: history.Process{ID: proc}, Type: typ, F: f, Node: node, Value: v})
}

// call sends one request and waits for its reply (nil on timeout).
func (c *procCluster) call(proc int, node, f string, value map[string]any) map[string]any {
	ch := c.send(proc, node, f, value)
	var reply map[string]any
	select {
	case raw := <-ch:
		_ = json.Unmarshal(raw, &reply)
	case <-time.After(3 * time.Second):
	}
	c.complete(proc, node, f, value, reply)
	return reply
}

// burst sends count grants of server for distinct chunks to node as fast
// as the pipe takes them, then waits for every reply (at most 10 s after
// the last send: on a loaded machine a node takes seconds for thousands). Processes from proc on. It
// returns how long the burst took.
func (c *procCluster) burst(proc int, node, server string, count int) time.Duration {
	began := time.Now()
	type call struct {
		value map[string]any
		ch    chan json.RawMessage
	}
	calls := make([]call, count)
	for i := range calls {
		v := map[string]any{"chunk": fmt.Sprintf("load_%s_%d", node, i), "server": server, "lease_ms": 1000}
		calls[i] = call{v, c.send(proc+i, node, "grant", v)}
	}
	deadline := time.After(10 * time.Second)
	for i, cl := range calls {
		var reply map[string]any
		select {
		case raw := <-cl.ch:
			_ = json.Unmarshal(raw, &reply)
		case <-deadline:
		}
		c.complete(proc+i, node, "grant", cl.value, reply)
	}
	return time.Since(began)
}

// waitLog waits (polling an external process, at most deadline) until
// node id's log contains text.
func (c *procCluster) waitLog(id, text string, deadline time.Duration) bool {
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		if strings.Contains(c.logs[id].String(), text) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// judge checks the history with the lease checker (fencing included).
func (c *procCluster) judge() leasewl.LeaseResult {
	c.mu.Lock()
	ops := append([]history.Op(nil), c.ops...)
	c.mu.Unlock()
	return leasewl.CheckLease(ops)
}

// waitBootOver waits until node id logs the end of its boot wait.
func (c *procCluster) waitBootOver(id string) {
	c.t.Helper()
	if !c.waitLog(id, "boot wait over", 5*time.Second) {
		c.t.Fatalf("%s never logged the end of its boot wait; log:\n%s", id, c.logs[id].String())
	}
}

// restart kills node id and starts it again with the boot wait.
func (c *procCluster) restart(id, bin string, env ...string) {
	c.kill(id)
	c.startNode(id, bin, append([]string{fmt.Sprintf("LEASE_BOOT_WAIT_MS=%d", procBootWaitMs)}, env...)...)
}
