package nodeproc

import (
	"bytes"
	"fmt"
	"strings"
)

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
	fmt.Fprintf(&b, "\n  last stdout lines:%s", IndentLines(e.Stdout))
	fmt.Fprintf(&b, "\n  last stderr lines:%s", IndentLines(e.Stderr))
	fmt.Fprintf(&b, "\n  full stderr log: %s", e.LogPath)
	return b.String()
}

// IndentLines quotes each line on a line of its own, indented, for a
// diagnostic; " (none)" when there are none.
func IndentLines(lines []string) string {
	if len(lines) == 0 {
		return " (none)"
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n    ")
		b.WriteString(QuoteLine(l))
	}
	return b.String()
}

// QuoteLine shows a line as Go quotes it (so blank lines and control
// characters are visible), cut at 500 bytes.
func QuoteLine(s string) string {
	const limit = 500
	if len(s) > limit {
		return fmt.Sprintf("%q... (%d bytes)", s[:limit], len(s))
	}
	return fmt.Sprintf("%q", s)
}
