package nodeproc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// readerDrainTimeout bounds how long an exited node's pipes may stay open
// (a child process that inherited them) before the harness stops reading.
const readerDrainTimeout = 2 * time.Second

// Config is what a supervised node needs besides its id.
type Config struct {
	Launch  Launcher
	LogPath string // the node's log (node-logs/<id>.log), created by Start and shared by every incarnation
	// Console writes a line to the harness's console; with Mirror every
	// stderr line goes there too, as "<id> stderr: <line>" (--log-stderr).
	Console func(line string)
	Mirror  bool
	// Fail reports a program that exited on its own (an *ExitError).
	Fail func(error)
	// Stdout, when not nil, reads each incarnation's stdout until it ends
	// (the simulated network: protocol lines, judged and forwarded). nil:
	// stdout lines go to the tail and the log, as stderr lines do.
	Stdout func(inc *Incarnation)
}

// Node runs one node id's programs: at most one incarnation (a started
// program) at a time, a new one after each kill. It logs stderr, notices
// exits and signals the process group; what flows on stdin and stdout is
// the network's business. Problems go to Config.Fail; nothing here
// decides the run.
type Node struct {
	id  string
	cfg Config
	log io.WriteCloser

	stopping atomic.Bool // teardown began: exits and late output are expected

	mu         sync.Mutex
	cur        *Incarnation   // the running program; nil while killed
	all        []*Incarnation // every incarnation, for teardown
	resumedAt  time.Time      // when the last pause of this node ended
	everPaused bool
	peakKiB    int64 // the largest peak RSS of an incarnation killed so far
}

// Incarnation is one started program of a node.
type Incarnation struct {
	proc    Proc
	outTail *Tail
	errTail *Tail
	readers sync.WaitGroup // stdout and stderr readers
	exited  chan struct{}
	status  string      // how the program exited; set before exited closes
	killed  atomic.Bool // the nemesis killed it: its exit is expected
	paused  bool        // guarded by Node.mu
}

// Proc is the running program.
func (inc *Incarnation) Proc() Proc { return inc.proc }

// NoteStdout keeps a stdout line for the diagnostics of an early exit.
func (inc *Incarnation) NoteStdout(line string) { inc.outTail.Add(line) }

// StdoutTail is the program's last stdout lines, as NoteStdout kept them.
func (inc *Incarnation) StdoutTail() []string { return inc.outTail.Lines() }

// StderrTail is the program's last stderr lines.
func (inc *Incarnation) StderrTail() []string { return inc.errTail.Lines() }

// Start creates node id's log and starts its first program with env.
func Start(id string, cfg Config, env []string) (*Node, error) {
	logFile, err := os.Create(cfg.LogPath)
	if err != nil {
		return nil, fmt.Errorf("node %s: creating its log: %w", id, err)
	}
	n := &Node{id: id, cfg: cfg, log: logFile}
	if _, err := n.launch(env); err != nil {
		logFile.Close()
		return nil, err
	}
	return n, nil
}

// ID is the node's id.
func (n *Node) ID() string { return n.id }

// LogPath is the node's log file.
func (n *Node) LogPath() string { return n.cfg.LogPath }

// launch starts a new incarnation; the previous one must have exited.
func (n *Node) launch(env []string) (*Incarnation, error) {
	proc, err := n.cfg.Launch(n.id, env)
	if err != nil {
		return nil, fmt.Errorf("node %s: starting the program: %w", n.id, err)
	}
	inc := &Incarnation{proc: proc, outTail: &Tail{}, errTail: &Tail{}, exited: make(chan struct{})}
	n.mu.Lock()
	n.cur = inc
	n.all = append(n.all, inc)
	n.mu.Unlock()
	inc.readers.Add(2)
	go func() {
		defer inc.readers.Done()
		if n.cfg.Stdout != nil {
			n.cfg.Stdout(inc)
			return
		}
		n.copyLines(proc.Stdout(), inc.outTail, "stdout")
	}()
	go func() {
		defer inc.readers.Done()
		n.copyLines(proc.Stderr(), inc.errTail, "stderr")
	}()
	go n.watchExit(inc)
	return inc, nil
}

// Current is the running incarnation, nil while the node is killed.
func (n *Node) Current() *Incarnation {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur
}

// copyLines writes each line of r to the tail and the node's log
// (flushed per line) and, with Mirror, to the console as "<id>
// <stream>: <line>".
func (n *Node) copyLines(r io.Reader, t *Tail, stream string) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			text := strings.TrimSuffix(line, "\n")
			t.Add(text)
			_, _ = io.WriteString(n.log, text+"\n") // a full disk must not stop the test
			if n.cfg.Mirror {
				n.cfg.Console(n.id + " " + stream + ": " + text)
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
func (n *Node) watchExit(inc *Incarnation) {
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
		n.cfg.Fail(&ExitError{Node: n.id, Status: status, Stdout: inc.outTail.Lines(),
			Stderr: inc.errTail.Lines(), LogPath: n.cfg.LogPath})
	}
}

// drainReaders waits for stdout and stderr to reach EOF, or closes them
// when a child that inherited the pipes keeps them open.
func (inc *Incarnation) drainReaders() {
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

// Kill is the nemesis's SIGKILL: the running program dies (resumed
// first if paused) and the node is down until Restart. It reports
// whether a program was running. Killing a paused program ends its
// pause: between the SIGCONT and the SIGKILL it may still answer what it
// held, and PausedSince must excuse those answers as any resume's.
func (n *Node) Kill() bool {
	n.mu.Lock()
	inc := n.cur
	n.cur = nil
	if inc != nil && inc.paused {
		inc.paused = false
		n.resumedAt = time.Now()
	}
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
func (n *Node) notePeak(inc *Incarnation) {
	if pid := inc.proc.PID(); pid > 0 {
		kib := peakRSSKiB(pid)
		n.mu.Lock()
		n.peakKiB = max(n.peakKiB, kib)
		n.mu.Unlock()
	}
}

// PeakMemoryKiB is the largest peak RSS of the programs killed so far.
func (n *Node) PeakMemoryKiB() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.peakKiB
}

// Restart waits until every earlier incarnation has exited and starts a
// new one with env.
func (n *Node) Restart(env []string) (*Incarnation, error) {
	n.mu.Lock()
	old := slices.Clone(n.all)
	n.mu.Unlock()
	for _, inc := range old {
		<-inc.exited
	}
	return n.launch(env)
}

// Down reports whether the node has no running program (it was killed).
func (n *Node) Down() bool { return n.Current() == nil }

// DownOf lists the nodes that are down (killed and not started again), in
// order, and their ids: what a start brings back.
func DownOf[N interface {
	Down() bool
	ID() string
}](nodes []N) (down []N, ids []string) {
	for _, nd := range nodes {
		if nd.Down() {
			down, ids = append(down, nd), append(ids, nd.ID())
		}
	}
	return down, ids
}

// Pause stops the running program; false when it is down or paused.
func (n *Node) Pause() bool {
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

// Resume continues a paused program; false when it was not paused.
func (n *Node) Resume(now time.Time) bool {
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

// Paused reports whether the running program is paused.
func (n *Node) Paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur != nil && n.cur.paused
}

// PausedSince reports whether a pause of this node was in force at some
// time after t: it is paused now, or its last pause ended after t.
func (n *Node) PausedSince(t time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return (n.cur != nil && n.cur.paused) || (n.everPaused && n.resumedAt.After(t))
}

// SetStopping marks the start of teardown: from now on an exit is
// expected and output is moot.
func (n *Node) SetStopping() { n.stopping.Store(true) }

// Stopping reports whether teardown began.
func (n *Node) Stopping() bool { return n.stopping.Load() }

// KillAll is teardown's first half: every program still running is
// killed (SIGKILL, no stdin EOF first; resumed first if paused) and every
// incarnation is waited for.
func (n *Node) KillAll() {
	n.SetStopping()
	all := n.Incarnations()
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
}

// Incarnations are every program the node has run.
func (n *Node) Incarnations() []*Incarnation {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.all)
}

// Close is teardown's second half, after KillAll: every pipe and the log
// are closed.
func (n *Node) Close() {
	for _, inc := range n.Incarnations() {
		inc.proc.Stdin().Close()
		inc.proc.Stdout().Close()
		inc.proc.Stderr().Close()
	}
	n.log.Close()
}

// Stop is KillAll then Close, for a network with nothing of its own to
// wind down in between.
func (n *Node) Stop() {
	n.KillAll()
	n.Close()
}
