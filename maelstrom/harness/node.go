package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// node runs one node program: it feeds its stdin from the network,
// validates and forwards its stdout, logs its stderr, and notices its
// exit. Problems are reported to fail; nothing here decides the run.
type node struct {
	id      string
	proc    Proc
	net     *netsim.Net
	log     io.WriteCloser // node-logs/<id>.log
	logPath string
	console *console
	mirror  bool // --log-stderr: copy stderr lines to the console
	strict  bool
	fail    func(error)

	stopping atomic.Bool // teardown began: exits and late output are expected
	cancel   context.CancelFunc
	outTail  *tail
	errTail  *tail
	readers  sync.WaitGroup // stdout and stderr readers
	feeder   sync.WaitGroup
	exited   chan struct{}
	status   string // how the program exited; set before exited closes
}

// nodeConfig is what startNode needs besides the program.
type nodeConfig struct {
	net     *netsim.Net
	logDir  string
	console *console
	mirror  bool // --log-stderr
	strict  bool
	fail    func(error)
}

// startNode launches node id and starts its I/O goroutines.
func startNode(id string, launch Launcher, cfg nodeConfig) (*node, error) {
	logPath := filepath.Join(cfg.logDir, id+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("node %s: creating its log: %w", id, err)
	}
	proc, err := launch(id)
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("node %s: starting the program: %w", id, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &node{
		id: id, proc: proc, net: cfg.net, log: logFile, logPath: logPath,
		console: cfg.console, mirror: cfg.mirror, strict: cfg.strict, fail: cfg.fail, cancel: cancel,
		outTail: &tail{}, errTail: &tail{}, exited: make(chan struct{}),
	}
	n.feeder.Add(1)
	go n.feed(ctx)
	n.readers.Add(2)
	go n.readStdout()
	go n.readStderr()
	go n.watchExit()
	return n, nil
}

// feed is the node's delivery loop: each message the network delivers is
// written to stdin as one line. A write to a dead program fails and the
// message is lost, as in Maelstrom; a program that stops reading stalls
// only its own deliveries.
func (n *node) feed(ctx context.Context) {
	defer n.feeder.Done()
	stdin := n.proc.Stdin()
	for {
		m, err := n.net.Recv(ctx, n.id)
		if err != nil {
			return
		}
		_, _ = stdin.Write(m.Line()) // a dead program's pipe: the message is lost
	}
}

// readStdout forwards each stdout line to the network after Maelstrom's
// checks. In strict mode the first bad line fails the run; otherwise the
// node is muted (its stdout is never read again), as Maelstrom does.
func (n *node) readStdout() {
	defer n.readers.Done()
	r := bufio.NewReaderSize(n.proc.Stdout(), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && err == nil {
			line = line[:len(line)-1]
			n.outTail.add(string(line))
			if !n.forward(line) {
				return
			}
		} else if len(line) > 0 {
			n.outTail.add(string(line) + " (no newline before EOF)")
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
		_, err = n.net.Send(env.Src, env.Dest, env.Body)
		err = explainSendError(err)
	}
	if err == nil {
		return true
	}
	if n.stopping.Load() {
		return false // the test is over: clients are closed, output is moot
	}
	bad := &OutputError{Node: n.id, Line: string(line), Reason: err.Error()}
	if n.strict {
		n.fail(bad)
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

// readStderr writes each stderr line to node-logs/<id>.log (flushed per
// line) and, with --log-stderr, to the console.
func (n *node) readStderr() {
	defer n.readers.Done()
	r := bufio.NewReaderSize(n.proc.Stderr(), 64<<10)
	for {
		line, err := r.ReadString('\n')
		if len(line) > 0 {
			text := strings.TrimSuffix(line, "\n")
			n.errTail.add(text)
			_, _ = io.WriteString(n.log, text+"\n") // a full disk must not stop the test
			if n.mirror {
				n.console.println(n.id + " stderr: " + text)
			}
		}
		if err != nil {
			return
		}
	}
}

// watchExit waits for the program to exit. An exit before teardown is a
// crash: Maelstrom reports it for any status, 0 included.
func (n *node) watchExit() {
	status := n.proc.Wait()
	n.drainReaders()
	n.status = status
	close(n.exited)
	if !n.stopping.Load() {
		n.fail(&ExitError{Node: n.id, Status: status, Stdout: n.outTail.lines(),
			Stderr: n.errTail.lines(), LogPath: n.logPath})
	}
}

// drainReaders waits for stdout and stderr to reach EOF, or closes them
// when a child that inherited the pipes keeps them open.
func (n *node) drainReaders() {
	done := make(chan struct{})
	go func() { n.readers.Wait(); close(done) }()
	timer := time.NewTimer(readerDrainTimeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		n.proc.Stdout().Close()
		n.proc.Stderr().Close()
		<-done
	}
}

// stop kills the program (SIGKILL, no stdin EOF first), waits for it and
// for every goroutine of the node, and closes its pipes and log.
func (n *node) stop() {
	n.stopping.Store(true)
	n.proc.Kill()
	<-n.exited
	n.cancel()
	n.proc.Stdin().Close()
	n.feeder.Wait()
	n.proc.Stdout().Close()
	n.proc.Stderr().Close()
	n.log.Close()
}

// warn prints a warning on the console.
func (n *node) warn(msg string) {
	n.console.println("WARN " + msg)
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
