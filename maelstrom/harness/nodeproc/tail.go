package nodeproc

import "sync"

// TailLines is how many of a program's last stdout and stderr lines are
// kept for diagnostics, as Maelstrom keeps 32.
const TailLines = 32

// Tail keeps the last TailLines lines of a stream. It is safe for
// concurrent use.
type Tail struct {
	mu  sync.Mutex
	buf []string
}

// Add keeps line, dropping the oldest beyond TailLines.
func (t *Tail) Add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == TailLines {
		t.buf = t.buf[1:]
	}
	t.buf = append(t.buf, line)
}

// Lines are the kept lines, oldest first.
func (t *Tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.buf...)
}
