package harness

import (
	"io"
	"os"
	"strings"
	"sync"
)

// console is the harness's stderr: whole lines (warnings, mirrored node
// stderr) and, on a terminal, one progress line rewritten in place below
// them. It is safe for concurrent use.
type console struct {
	mu       sync.Mutex
	w        io.Writer
	live     bool   // w is a terminal: show the progress line
	progress string // the progress line now on screen, "" if none
}

func newConsole(w io.Writer) *console {
	return &console{w: w, live: isTerminal(w)}
}

// isTerminal reports whether w is a character device (a terminal), where
// a line can be rewritten in place; CI logs get no progress line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// println writes a whole line above the progress line.
func (c *console) println(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	io.WriteString(c.w, strings.TrimRight(line, "\n")+"\n")
	c.redrawLocked()
}

// setProgress replaces the progress line (terminals only).
func (c *console) setProgress(line string) {
	if !c.live {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	c.progress = line
	c.redrawLocked()
}

// endProgress removes the progress line for good.
func (c *console) endProgress() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	c.progress = ""
}

func (c *console) clearLocked() {
	if c.live && c.progress != "" {
		io.WriteString(c.w, "\r\033[K")
	}
}

func (c *console) redrawLocked() {
	if c.live && c.progress != "" {
		io.WriteString(c.w, c.progress)
	}
}
