package main

import (
	"bufio"
	"chunklease/internal/histtest"
	"chunklease/internal/proctest"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Two safety holes an earlier node had (a shorter renewal, a late
// release), replayed against three real node processes
// joined by an in-test router (zero latency, every message delivered), with
// SIGSTOP and SIGCONT for a paused node. Each scenario's history is judged
// by the harness's own lease checker: it must be valid, every ok grant and
// renew must carry a distinct integer token, and the grant for the other
// server at the end must name the first server as primary.

// liveCluster is three lease-node processes n1..n3 and the router between
// them; the test is client c1.
type liveCluster struct {
	t       *testing.T
	procs   map[string]*exec.Cmd
	stdins  map[string]io.WriteCloser
	mu      sync.Mutex
	replies replyWaits
	hist    *histtest.Recorder
	wg      sync.WaitGroup
}

func startLiveCluster(t *testing.T, env ...string) *liveCluster {
	c := &liveCluster{t: t, procs: map[string]*exec.Cmd{}, stdins: map[string]io.WriteCloser{},
		hist: histtest.New(t)}
	ids := []string{"n1", "n2", "n3"}
	for _, id := range ids {
		cmd := exec.Command(nodeBin)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.procs[id], c.stdins[id] = cmd, in
		c.wg.Add(1)
		go c.route(out)
	}
	t.Cleanup(c.stop)
	for i, id := range ids {
		c.write(id, fmt.Sprintf(`{"src":"c0","dest":%q,"body":{"type":"init","msg_id":%d,"node_id":%q,"node_ids":["n1","n2","n3"]}}`, id, 1000+i, id))
	}
	return c
}

// route forwards one node's output: to another node's stdin, or to the
// client waiting for it.
func (c *liveCluster) route(out io.Reader) {
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
		_ = json.Unmarshal(line, &env)
		if _, isNode := c.stdins[env.Dest]; isNode {
			c.write(env.Dest, string(line[:len(line)-1]))
			continue
		}
		c.replies.deliver(env.Dest, env.Body)
	}
}

func (c *liveCluster) write(id, line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = io.WriteString(c.stdins[id], line+"\n") // a paused node's pipe buffers it
}

// stop ends every node process (SIGCONT first, in case one is paused).
func (c *liveCluster) stop() {
	for _, p := range c.procs {
		_ = p.Process.Signal(syscall.SIGCONT)
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	c.wg.Wait()
}

// pause SIGSTOPs node id and waits until the kernel shows it stopped, so
// a request sent next waits in its input.
func (c *liveCluster) pause(id string) {
	_ = c.procs[id].Process.Signal(syscall.SIGSTOP)
	proctest.WaitStopped(c.t, c.procs[id].Process.Pid, id)
}

func (c *liveCluster) resume(id string) { _ = c.procs[id].Process.Signal(syscall.SIGCONT) }

// replyWaits matches the replies to client c1 with the requests waiting
// for them, by msg_id.
type replyWaits struct {
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan json.RawMessage
}

// add is a new request's msg_id and the channel its reply body comes on.
func (w *replyWaits) add() (int, chan json.RawMessage) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting == nil {
		w.waiting = map[int]chan json.RawMessage{}
	}
	w.nextID++
	ch := make(chan json.RawMessage, 1)
	w.waiting[w.nextID] = ch
	return w.nextID, ch
}

// deliver hands a message for dest to the request it answers, once: a
// duplicate or a reply nobody waits for is dropped.
func (w *replyWaits) deliver(dest string, body json.RawMessage) {
	var head struct {
		InReplyTo *int `json:"in_reply_to"`
	}
	if dest != "c1" || json.Unmarshal(body, &head) != nil || head.InReplyTo == nil {
		return
	}
	w.mu.Lock()
	ch := w.waiting[*head.InReplyTo]
	delete(w.waiting, *head.InReplyTo)
	w.mu.Unlock()
	if ch != nil {
		ch <- body
	}
}

// clientRequest is the Maelstrom request line from c1 to node of a lease
// workload op: value's chunk as chunk_handle, its other fields as they are.
func clientRequest(node, f string, id int, value map[string]any) []byte {
	body := map[string]any{"type": "lease_" + f, "msg_id": id, "chunk_handle": value["chunk"]}
	for k, v := range value {
		if k != "chunk" {
			body[k] = v
		}
	}
	req, _ := json.Marshal(map[string]any{"src": "c1", "dest": node, "body": body})
	return req
}

// call sends one client request and records it in the history as the
// lease workload would: invoke value, then ok (with the reply's fields),
// fail or info. It returns the reply body, or nil on timeout.
func (c *liveCluster) call(proc int, node, f string, value map[string]any, timeout time.Duration) map[string]any {
	id, ch := c.replies.add()
	req := clientRequest(node, f, id, value)
	c.hist.Invoke(proc, node, f, value)
	c.write(node, string(req))
	select {
	case raw := <-ch:
		var reply map[string]any
		_ = json.Unmarshal(raw, &reply)
		c.hist.Complete(proc, node, f, value, reply)
		return reply
	case <-time.After(timeout):
		c.hist.Unknown(proc, node, f, value, "net-timeout")
		return nil
	}
}

// judge checks the history with the lease checker and the tokens.
func (c *liveCluster) judge() { c.t.Helper(); c.hist.Judge() }

func token(t *testing.T, reply map[string]any) int64 {
	t.Helper()
	v, ok := reply["token"].(float64)
	if !ok || v <= 0 || v >= 1<<53 || v != float64(int64(v)) {
		t.Fatalf("reply %v has no integer token", reply)
	}
	return int64(v)
}

func mustPrimary(t *testing.T, reply map[string]any, want string) {
	t.Helper()
	if reply == nil || reply["primary"] != want {
		t.Fatalf("grant answered %v, want primary %s", reply, want)
	}
}

const callTimeout = 3 * time.Second

func grantValue(server string, leaseMs int) map[string]any {
	return map[string]any{"chunk": "ch", "server": server, "lease_ms": leaseMs}
}

// TestShorterRenewKeepsTheLongerLease: cs1 is granted 2000 ms, renews
// asking for 50 ms, and 200 ms later cs2 is not granted: cs1 still holds
// the 2000 ms lease it was told about (rule 10).
func TestShorterRenewKeepsTheLongerLease(t *testing.T) {
	t.Parallel()
	c := startLiveCluster(t, "LEASE_MAX_MS=5000", "LEASE_MS=1000")
	t1 := token(t, c.call(0, "n1", "grant", grantValue("cs1", 2000), callTimeout))
	t2 := token(t, c.call(0, "n2", "renew", grantValue("cs1", 50), callTimeout))
	time.Sleep(200 * time.Millisecond) // the property: the short renewal's end has passed
	mustPrimary(t, c.call(1, "n3", "grant", grantValue("cs2", 1000), callTimeout), "cs1")
	if t2 <= t1 {
		t.Fatalf("renew token %d is not above the grant's %d", t2, t1)
	}
	c.judge()
}

// TestLateReleaseFromAPausedNode: cs1's release of its first lease waits
// in a paused node's input while cs1 is granted (or renews) again; when the
// node resumes, the release names the old token and the new lease stays:
// a grant for cs2 still names cs1.
func TestLateReleaseFromAPausedNode(t *testing.T) {
	for _, again := range []string{"grant", "renew"} {
		t.Run(again, func(t *testing.T) {
			t.Parallel()
			c := startLiveCluster(t, "LEASE_MAX_MS=5000", "LEASE_MS=2000")
			t1 := token(t, c.call(0, "n2", "grant", grantValue("cs1", 2000), callTimeout))
			c.pause("n1")
			rel := map[string]any{"chunk": "ch", "server": "cs1", "token": t1}
			if r := c.call(0, "n1", "release", rel, 300*time.Millisecond); r != nil {
				t.Fatalf("a paused node answered %v", r)
			}
			t2 := token(t, c.call(1, "n2", again, grantValue("cs1", 2000), callTimeout))
			c.resume("n1")
			// n1 now handles the old release; a check through n1 comes after it.
			c.call(2, "n1", "check", map[string]any{"chunk": "ch"}, callTimeout)
			mustPrimary(t, c.call(3, "n3", "grant", grantValue("cs2", 1000), callTimeout), "cs1")
			if t2 <= t1 {
				t.Fatalf("the second token %d is not above the first %d", t2, t1)
			}
			c.judge()
		})
	}
}

// TestReleaseBesideARenewal: cs1 renews through n1 and, before the renew
// is answered, releases its grant's token through n2. The renewal's new
// instance survives; a grant for cs2 names cs1.
func TestReleaseBesideARenewal(t *testing.T) {
	t.Parallel()
	c := startLiveCluster(t, "LEASE_MAX_MS=5000", "LEASE_MS=2000")
	t1 := token(t, c.call(0, "n1", "grant", grantValue("cs1", 2000), callTimeout))
	var wg sync.WaitGroup
	var t2 int64
	wg.Go(func() { t2 = token(t, c.call(0, "n1", "renew", grantValue("cs1", 2000), callTimeout)) })
	wg.Go(func() {
		c.call(1, "n2", "release", map[string]any{"chunk": "ch", "server": "cs1", "token": t1}, callTimeout)
	})
	wg.Wait()
	mustPrimary(t, c.call(2, "n3", "grant", grantValue("cs2", 1000), callTimeout), "cs1")
	if t2 <= t1 {
		t.Fatalf("renew token %d is not above the grant's %d", t2, t1)
	}
	c.judge()
}
