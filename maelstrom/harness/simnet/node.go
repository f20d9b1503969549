package simnet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/netsim"
)

// node is one node id on the simulated network: its programs, supervised
// by package nodeproc (launch, stderr log, exits, signals), and what only
// this network does with them: a delivery loop that feeds the running
// program's stdin from the network, and a stdout reader that validates
// and forwards every line. Problems are reported to fail; nothing here
// decides the run.
type node struct {
	*nodeproc.Node
	id     string
	cfg    nodeConfig
	cancel context.CancelFunc
	feeder sync.WaitGroup
}

// nodeConfig is what a node needs besides its id.
type nodeConfig struct {
	net    *network
	launch nodeproc.Launcher
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
	n := &node{id: id, cfg: cfg}
	sup, err := nodeproc.Start(id, nodeproc.Config{Launch: cfg.launch, LogPath: filepath.Join(cfg.logDir, id+".log"),
		Console: cfg.log, Mirror: cfg.mirror, Fail: cfg.fail, Stdout: n.readStdout}, env)
	if err != nil {
		return nil, err
	}
	n.Node = sup
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.feeder.Add(1)
	go n.feed(ctx)
	return n, nil
}

// feed is the node's delivery loop: each message the network delivers is
// written to the running program's stdin as one line. A message for a
// killed node, or one the dead program's pipe refuses, is lost, as in
// Maelstrom; a program that stops reading (or is paused) stalls only its
// own deliveries, which come out when it reads again.
//
// Every message already due when one arrives goes out in the same write
// (up to feedBatchBytes): one system call for the harness and one read
// for the node instead of one per message, which is most of the cost of
// a message at zero latency.
func (n *node) feed(ctx context.Context) {
	defer n.feeder.Done()
	var lines []byte
	for {
		m, err := n.cfg.net.Recv(ctx, n.id)
		if err != nil {
			return
		}
		lines = append(lines[:0], m.Line()...)
		for len(lines) < feedBatchBytes {
			m, ok := n.cfg.net.RecvReady(n.id)
			if !ok {
				break
			}
			lines = append(lines, m.Line()...)
		}
		if inc := n.Current(); inc != nil {
			_, _ = inc.Proc().Stdin().Write(lines) // a dead program's pipe: the messages are lost
		}
	}
}

// feedBatchBytes bounds one write of the delivery loop: a pipe's buffer
// (64 KiB on Linux) takes it whole while the node reads.
const feedBatchBytes = 32 << 10

// readStdout forwards each stdout line of inc to the network after
// Maelstrom's checks. In strict mode the first bad line fails the run;
// otherwise the node is muted (its stdout is never read again), as
// Maelstrom does.
func (n *node) readStdout(inc *nodeproc.Incarnation) {
	r := bufio.NewReaderSize(inc.Proc().Stdout(), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && err == nil {
			line = line[:len(line)-1]
			inc.NoteStdout(string(line))
			if !n.forward(line) {
				return
			}
		} else if len(line) > 0 {
			inc.NoteStdout(string(line) + " (no newline before EOF)")
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
		if errors.Is(err, netsim.ErrClosedClient) && !n.Stopping() && n.cfg.lateReply != nil && n.cfg.lateReply(n, env.Dest) {
			return true // a reply the node held while paused: dropped, counted
		}
		err = explainSendError(err)
	}
	if err == nil {
		return true
	}
	if n.Stopping() {
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

// stop kills the running program (SIGKILL, no stdin EOF first; resumed
// first if paused), waits for every incarnation and for the delivery
// loop, and closes the pipes and the log.
func (n *node) stop() {
	n.KillAll()
	n.cancel()
	for _, inc := range n.Incarnations() {
		inc.Proc().Stdin().Close()
	}
	n.feeder.Wait()
	n.Close()
}

// warn prints a warning on the console.
func (n *node) warn(msg string) {
	n.cfg.log("WARN " + msg)
}

// OutputError is a node line that Maelstrom would reject.
type OutputError struct {
	Node   string
	Line   string
	Reason string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("node %s printed a line to stdout that Maelstrom rejects (real Maelstrom logs a warning with this error and then never reads %s's stdout again, so its later replies are lost): %s\n  line: %s",
		e.Node, e.Node, e.Reason, nodeproc.QuoteLine(e.Line))
}
