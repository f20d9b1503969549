package simnet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/maelstrom/netsim"
)

// tailLines is how many of a node's last stdout and stderr lines are kept
// for diagnostics, as Maelstrom keeps 32.
const tailLines = 32

// readerDrainTimeout bounds how long an exited node's pipes may stay open
// (a child process that inherited them) before the harness stops reading.
const readerDrainTimeout = 2 * time.Second

// node runs one node id's programs: at most one incarnation (a started
// program) at a time, a new one after each kill. It feeds stdin from the
// network, validates and forwards stdout, logs stderr and notices exits.
// Problems are reported to fail; nothing here decides the run.
type node struct {
	id      string
	cfg     nodeConfig
	log     io.WriteCloser // node-logs/<id>.log, shared by every incarnation
	logPath string

	stopping atomic.Bool // teardown began: exits and late output are expected
	cancel   context.CancelFunc
	feeder   sync.WaitGroup

	mu         sync.Mutex
	cur        *incarnation   // the running program; nil while killed
	all        []*incarnation // every incarnation, for teardown
	resumedAt  time.Time      // when the last pause of this node ended
	everPaused bool

	peakKiB int64 // the largest peak RSS of an incarnation killed so far
}

// incarnation is one started program of a node.
type incarnation struct {
	proc    Proc
	outTail *tail
	errTail *tail
	readers sync.WaitGroup // stdout and stderr readers
	exited  chan struct{}
	status  string      // how the program exited; set before exited closes
	killed  atomic.Bool // the nemesis killed it: its exit is expected
	paused  bool        // guarded by node.mu
}

// nodeConfig is what a node needs besides its id.
type nodeConfig struct {
	net    *network
	launch Launcher
	logDir string
	log    func(line string) // the console
	mirror bool              // --log-stderr
	strict bool
	fail   func(error)
	// lateReply decides whether a reply to a closed client is a pause's
	// doing (the request waited in a stopped node's pipe) and is dropped
	// instead of judged; nil judges every such reply.
	lateReply func(n *node, client string) bool
}

// startNode creates node id, starts its first program and its delivery
// loop.
func startNode(id string, cfg nodeConfig, env []string) (*node, error) {
	logPath := filepath.Join(cfg.logDir, id+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("node %s: creating its log: %w", id, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &node{id: id, cfg: cfg, log: logFile, logPath: logPath, cancel: cancel}
	if _, err := n.launch(env); err != nil {
		cancel()
		logFile.Close()
		return nil, err
	}
	n.feeder.Add(1)
	go n.feed(ctx)
	return n, nil
}

// launch starts a new incarnation; the previous one must have exited.
func (n *node) launch(env []string) (*incarnation, error) {
	proc, err := n.cfg.launch(n.id, env)
	if err != nil {
		return nil, fmt.Errorf("node %s: starting the program: %w", n.id, err)
	}
	inc := &incarnation{proc: proc, outTail: &tail{}, errTail: &tail{}, exited: make(chan struct{})}
	n.mu.Lock()
	n.cur = inc
	n.all = append(n.all, inc)
	n.mu.Unlock()
	inc.readers.Add(2)
	go n.readStdout(inc)
	go n.readStderr(inc)
	go n.watchExit(inc)
	return inc, nil
}

// current is the running incarnation, nil while the node is killed.
func (n *node) current() *incarnation {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur
}

// feed is the node's delivery loop: each message the network delivers is
// written to the running program's stdin as one line. A message for a
// killed node, or one the dead program's pipe refuses, is lost, as in
// Maelstrom; a program that stops reading (or is paused) stalls only its
// own deliveries, which come out when it reads again.
func (n *node) feed(ctx context.Context) {
	defer n.feeder.Done()
	for {
		m, err := n.cfg.net.Recv(ctx, n.id)
		if err != nil {
			return
		}
		if inc := n.current(); inc != nil {
			_, _ = inc.proc.Stdin().Write(m.Line()) // a dead program's pipe: the message is lost
		}
	}
}

// readStdout forwards each stdout line of inc to the network after
// Maelstrom's checks. In strict mode the first bad line fails the run;
// otherwise the node is muted (its stdout is never read again), as
// Maelstrom does.
func (n *node) readStdout(inc *incarnation) {
	defer inc.readers.Done()
	r := bufio.NewReaderSize(inc.proc.Stdout(), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && err == nil {
			line = line[:len(line)-1]
			inc.outTail.add(string(line))
			if !n.forward(line) {
				return
			}
		} else if len(line) > 0 {
			inc.outTail.add(string(line) + " (no newline before EOF)")
		}
		if err != nil {
			return
		}
	}
}

// forward validates and sends one line; false means the node is muted.
func (n *node) forward(line []byte) bool {
	env, err := parseEnvelope(line)
	if err == nil {
		_, err = n.cfg.net.Send(env.Src, env.Dest, env.Body)
		if errors.Is(err, netsim.ErrClosedClient) && !n.stopping.Load() && n.cfg.lateReply != nil && n.cfg.lateReply(n, env.Dest) {
			return true // a reply the node held while paused: dropped, counted
		}
		err = explainSendError(err)
	}
	if err == nil {
		return true
	}
	if n.stopping.Load() {
		return false // the test is over: clients are closed, output is moot
	}
	bad := &OutputError{Node: n.id, Line: string(line), Reason: err.Error()}
	if n.cfg.strict {
		n.cfg.fail(bad)
		return false
	}
	n.warn(bad.Error() + "\nAs Maelstrom does, the harness now ignores everything " + n.id + " prints on stdout.")
	return false
}

// explainSendError turns a network refusal into the words of spec A.5.
func explainSendError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, netsim.ErrClosedClient):
		return fmt.Errorf("%v: a reply to a client that is already closed (the request timed out and the client moved on); drop replies to requests older than the client timeout", err)
	case errors.Is(err, netsim.ErrUnknown):
		return fmt.Errorf("%v: send only to ids from init's node_ids, or to the src of a message you received, and use your own node_id as src", err)
	}
	return err
}

// readStderr writes each stderr line of inc to node-logs/<id>.log
// (flushed per line) and, with --log-stderr, to the console.
func (n *node) readStderr(inc *incarnation) {
	defer inc.readers.Done()
	r := bufio.NewReaderSize(inc.proc.Stderr(), 64<<10)
	for {
		line, err := r.ReadString('\n')
		if len(line) > 0 {
			text := strings.TrimSuffix(line, "\n")
			inc.errTail.add(text)
			_, _ = io.WriteString(n.log, text+"\n") // a full disk must not stop the test
			if n.cfg.mirror {
				n.cfg.log(n.id + " stderr: " + text)
			}
		}
		if err != nil {
			return
		}
	}
}

// watchExit waits for inc to exit. An exit that neither teardown nor the
// kill nemesis caused is a crash: Maelstrom reports it for any status, 0
// included.
func (n *node) watchExit(inc *incarnation) {
	status := inc.proc.Wait()
	inc.drainReaders()
	inc.status = status
	n.mu.Lock()
	if n.cur == inc {
		n.cur = nil
	}
	n.mu.Unlock()
	close(inc.exited)
	if !n.stopping.Load() && !inc.killed.Load() {
		n.cfg.fail(&ExitError{Node: n.id, Status: status, Stdout: inc.outTail.lines(),
			Stderr: inc.errTail.lines(), LogPath: n.logPath})
	}
}

// drainReaders waits for stdout and stderr to reach EOF, or closes them
// when a child that inherited the pipes keeps them open.
func (inc *incarnation) drainReaders() {
	done := make(chan struct{})
	go func() { inc.readers.Wait(); close(done) }()
	timer := time.NewTimer(readerDrainTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		inc.proc.Stdout().Close()
		inc.proc.Stderr().Close()
		<-done
	}
}

// kill is the nemesis's SIGKILL: the running program dies (resumed
// first if paused) and the node is down until restart. It reports
// whether a program was running.
func (n *node) kill() bool {
	n.mu.Lock()
	inc := n.cur
	n.cur = nil
	n.mu.Unlock()
	if inc == nil {
		return false
	}
	inc.killed.Store(true)
	n.notePeak(inc)
	inc.proc.Kill()
	return true
}

// notePeak records the peak resident memory of a program about to be
// killed.
func (n *node) notePeak(inc *incarnation) {
	if pid := inc.proc.PID(); pid > 0 {
		kib := peakRSSKiB(pid)
		n.mu.Lock()
		n.peakKiB = max(n.peakKiB, kib)
		n.mu.Unlock()
	}
}

// peakMemoryKiB is the largest peak RSS of the programs killed so far.
func (n *node) peakMemoryKiB() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.peakKiB
}

// restart waits until every earlier incarnation has exited and starts a
// new one with env.
func (n *node) restart(env []string) error {
	n.mu.Lock()
	old := slices.Clone(n.all)
	n.mu.Unlock()
	for _, inc := range old {
		<-inc.exited
	}
	_, err := n.launch(env)
	return err
}

// down reports whether the node has no running program (it was killed).
func (n *node) down() bool { return n.current() == nil }

// pause stops the running program; false when it is down or paused.
func (n *node) pause() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cur == nil || n.cur.paused {
		return false
	}
	n.cur.paused = true
	n.everPaused = true
	n.cur.proc.Pause()
	return true
}

// resume continues a paused program; false when it was not paused.
func (n *node) resume(now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cur == nil || !n.cur.paused {
		return false
	}
	n.cur.paused = false
	n.resumedAt = now
	n.cur.proc.Resume()
	return true
}

// paused reports whether the running program is paused.
func (n *node) paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur != nil && n.cur.paused
}

// pausedSince reports whether a pause of this node was in force at some
// time after t: it is paused now, or its last pause ended after t.
func (n *node) pausedSince(t time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return (n.cur != nil && n.cur.paused) || (n.everPaused && n.resumedAt.After(t))
}

// stop kills the running program (SIGKILL, no stdin EOF first; resumed
// first if paused), waits for every incarnation and every goroutine of
// the node, and closes the pipes and the log.
func (n *node) stop() {
	n.stopping.Store(true)
	n.mu.Lock()
	all := slices.Clone(n.all)
	n.mu.Unlock()
	for _, inc := range all {
		select {
		case <-inc.exited: // reaped: its pid may belong to another process now
		default:
			n.notePeak(inc)
			inc.proc.Kill()
		}
	}
	for _, inc := range all {
		<-inc.exited
	}
	n.cancel()
	for _, inc := range all {
		inc.proc.Stdin().Close()
	}
	n.feeder.Wait()
	for _, inc := range all {
		inc.proc.Stdout().Close()
		inc.proc.Stderr().Close()
	}
	n.log.Close()
}

// warn prints a warning on the console.
func (n *node) warn(msg string) {
	n.cfg.log("WARN " + msg)
}

// tail keeps the last tailLines lines of a stream.
type tail struct {
	mu  sync.Mutex
	buf []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == tailLines {
		t.buf = t.buf[1:]
	}
	t.buf = append(t.buf, line)
}

func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.buf...)
}

// OutputError is a node line that Maelstrom would reject.
type OutputError struct {
	Node   string
	Line   string
	Reason string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("node %s printed a line to stdout that Maelstrom rejects (real Maelstrom would silently ignore %s from then on): %s\n  line: %s",
		e.Node, e.Node, e.Reason, quoteLine(e.Line))
}

// ExitError is a node program that exited before the harness stopped it.
type ExitError struct {
	Node    string
	Status  string
	Stdout  []string
	Stderr  []string
	LogPath string
}

func (e *ExitError) Error() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "node %s exited early (%s); a node must keep running until the harness kills it.", e.Node, e.Status)
	fmt.Fprintf(&b, "\n  last stdout lines:%s", indentLines(e.Stdout))
	fmt.Fprintf(&b, "\n  last stderr lines:%s", indentLines(e.Stderr))
	fmt.Fprintf(&b, "\n  full stderr log: %s", e.LogPath)
	return b.String()
}

func indentLines(lines []string) string {
	if len(lines) == 0 {
		return " (none)"
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n    ")
		b.WriteString(quoteLine(l))
	}
	return b.String()
}

// quoteLine shows a line as Go quotes it (so blank lines and control
// characters are visible), cut at 500 bytes.
func quoteLine(s string) string {
	const limit = 500
	if len(s) > limit {
		return fmt.Sprintf("%q... (%d bytes)", s[:limit], len(s))
	}
	return fmt.Sprintf("%q", s)
}
