package harness

import (
	"io"
)

// Proc is a running node program as the harness drives it: three pipes, a
// way to wait for its exit and a way to kill it. The exec launcher starts
// real processes; tests also use in-process fakes.
type Proc interface {
	Stdin() io.WriteCloser
	Stdout() io.ReadCloser
	Stderr() io.ReadCloser
	// PID is the operating-system process id, or 0 for an in-process fake.
	PID() int
	// Wait blocks until the program has exited and describes how ("exit
	// status 3", "signal: killed"). It is called once.
	Wait() string
	// Kill stops the program at once (SIGKILL, no stdin EOF first, as
	// Maelstrom does). It may be called more than once.
	Kill()
}

// Launcher starts the program of node id.
type Launcher func(id string) (Proc, error)
