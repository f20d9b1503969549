//go:build unix

package nodeproc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// CanonicalBin resolves --bin the way Maelstrom does: an absolute path
// relative to the working directory, with symlinks resolved. It also
// checks that the file can be executed, so a typo fails before any node
// starts.
func CanonicalBin(bin string) (string, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", fmt.Errorf("--bin %s: %w", bin, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("--bin %s: %w", bin, unwrapPathError(err))
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("--bin %s: %w", bin, unwrapPathError(err))
	}
	if info.IsDir() {
		return "", fmt.Errorf("--bin %s is a directory, not a program", bin)
	}
	if info.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("--bin %s is not executable (chmod +x %s)", bin, bin)
	}
	return real, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ExecLauncher starts bin (already canonical) with args as Maelstrom
// starts a node: working directory the OS temp dir, the harness's
// environment (plus the launch's extra variables), stdin/stdout/stderr
// pipes. Each node gets its own process group, so Kill, Pause and Resume
// also reach any children it started, and (on Linux) the kernel kills it
// if the harness dies without cleaning up.
func ExecLauncher(bin string, args []string) Launcher {
	return func(id string, env []string) (Proc, error) {
		return StartExec(Command{Bin: bin, Args: args, Env: env})
	}
}

// Command is one program to start as a node program.
type Command struct {
	Bin  string   // the program, already canonical (CanonicalBin)
	Args []string // its arguments
	// Env lists extra variables ("KEY=value") over the harness's own
	// environment, which the program otherwise inherits; a later value of
	// a key wins.
	Env []string
	// Start starts the prepared command; nil is exec.Cmd.Start. The real
	// network starts it inside a network namespace (netns.Namespace.Start),
	// where the pid is still the program's own.
	Start func(*exec.Cmd) error
}

type execProc struct {
	cmd               *exec.Cmd
	stdin             *os.File
	stdout, stderr    *os.File
	childIn, childOut *os.File
	childErr          *os.File
}

// StartExec starts c in the OS temp dir, with pipes for stdin, stdout
// and stderr, in its own process group (and, on Linux, killed by the
// kernel if the harness dies).
func StartExec(c Command) (Proc, error) {
	p := &execProc{cmd: exec.Command(c.Bin, c.Args...)}
	if len(c.Env) > 0 {
		p.cmd.Env = append(os.Environ(), c.Env...) // the last value of a key wins
	}
	var err error
	if p.childIn, p.stdin, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.stdout, p.childOut, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, err
	}
	if p.stderr, p.childErr, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, err
	}
	p.cmd.Dir = os.TempDir()
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = p.childIn, p.childOut, p.childErr
	p.cmd.SysProcAttr = sysProcAttr()
	start := c.Start
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(p.cmd); err != nil {
		p.closeAll()
		return nil, err
	}
	// The child holds its own copies; ours would keep stdout open forever.
	p.childIn.Close()
	p.childOut.Close()
	p.childErr.Close()
	return p, nil
}

func (p *execProc) closeAll() {
	for _, f := range []*os.File{p.stdin, p.stdout, p.stderr, p.childIn, p.childOut, p.childErr} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *execProc) Stdin() io.WriteCloser { return p.stdin }
func (p *execProc) Stdout() io.ReadCloser { return p.stdout }
func (p *execProc) Stderr() io.ReadCloser { return p.stderr }
func (p *execProc) PID() int              { return p.cmd.Process.Pid }

func (p *execProc) Wait() string {
	err := p.cmd.Wait()
	if p.cmd.ProcessState != nil {
		return p.cmd.ProcessState.String()
	}
	return err.Error()
}

// Kill sends SIGCONT and then SIGKILL to the node's process group (a
// stopped process would otherwise linger until continued), and SIGKILL to
// the process itself in case the group is already gone.
func (p *execProc) Kill() {
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGCONT) // ESRCH: the group is gone
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = p.cmd.Process.Kill() // ErrProcessDone: already reaped
}

// Pause sends SIGSTOP to the node's process group.
func (p *execProc) Pause() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGSTOP) }

// Resume sends SIGCONT to the node's process group.
func (p *execProc) Resume() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT) }
