package nodeproc

import (
	"io"
)

// Proc is a running node program as the harness drives it: three pipes, a
// way to wait for its exit, to kill it, and to pause and resume it. The
// exec launcher starts real processes; tests also use in-process fakes.
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
	// Maelstrom does), resuming it first if it is paused. It may be
	// called more than once.
	Kill()
	// Pause stops the program from running (SIGSTOP) until Resume
	// (SIGCONT); its pipes stay open, so what is written to its stdin
	// waits in the pipe.
	Pause()
	Resume()
}

// Launcher starts the program of node id. env lists extra environment
// variables ("KEY=value") that override the harness's own environment,
// which the program otherwise inherits unchanged.
type Launcher func(id string, env []string) (Proc, error)
