package maelstrom

import (
	"bufio"
	"io"
	"sync"
)

// lineWriter is the single writer of stdout. The loop hands it complete
// lines with push, which never blocks on I/O: the queue has no bound, so a
// slow or stalled stdout costs memory, never a stalled loop (under real
// Maelstrom a stalled stdout means the node's output is already dead, §A.5,
// and a blocked loop would also stop timers and stdin). Lines are written
// in push order and flushed whenever the queue runs empty, so no line waits
// in a buffer while the writer is idle.
type lineWriter struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   [][]byte
	closing bool

	out    *bufio.Writer
	logf   func(format string, args ...any)
	failed bool          // a write failed; later lines are discarded
	done   chan struct{} // closed when everything pushed before close is handled
}

func newLineWriter(out io.Writer, logf func(string, ...any)) *lineWriter {
	w := &lineWriter{out: bufio.NewWriterSize(out, 64<<10), logf: logf, done: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// push queues one line ('\n' included). Safe from any goroutine.
func (w *lineWriter) push(line []byte) {
	w.mu.Lock()
	w.queue = append(w.queue, line)
	w.mu.Unlock()
	w.cond.Signal()
}

// close asks the writer to finish the queue and stop; done closes then.
func (w *lineWriter) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	w.cond.Signal()
}

// run is the writer goroutine.
func (w *lineWriter) run() {
	defer close(w.done)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closing {
			w.cond.Wait()
		}
		batch := w.queue
		w.queue = nil
		closing := w.closing
		w.mu.Unlock()

		w.writeBatch(batch)
		if closing && len(batch) == 0 {
			return
		}
	}
}

func (w *lineWriter) writeBatch(batch [][]byte) {
	if w.failed || len(batch) == 0 {
		return
	}
	for _, line := range batch {
		if _, err := w.out.Write(line); err != nil {
			w.fail(err)
			return
		}
	}
	if err := w.out.Flush(); err != nil {
		w.fail(err)
	}
}

func (w *lineWriter) fail(err error) {
	w.failed = true
	w.logf("writing stdout failed: %v; discarding all further output", err)
}
