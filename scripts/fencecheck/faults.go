package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// faultKind names a fault, as the summary prints it.
type faultKind string

const (
	holderStop       faultKind = "holder-sigstop"
	holderPauseInAct faultKind = "holder-pause-in-act"
	memberStop       faultKind = "member-sigstop"
	memberKill       faultKind = "member-kill-restart"
	holderCut        faultKind = "holder-cut-off"
)

// inject runs the phase's faults one after another, cycling, with a
// quiet stretch before each, until the phase's time is up.
func (r *runner) inject(p *phase) error {
	start := time.Now()
	members := []string{"n1", "n2", "n3"}
	for i := 0; time.Since(start) < p.duration; i++ {
		if err := r.sleep(2 * r.lease()); err != nil {
			return err
		}
		kind := p.faults[i%len(p.faults)]
		var text string
		var err error
		switch kind {
		case holderStop:
			text, err = r.stopHolder(p)
		case holderPauseInAct:
			text, err = r.pauseInAct(p)
		case memberStop:
			text, err = r.stopMember(members[i%3])
		case memberKill:
			text, err = r.killMember(members[(i+1)%3])
		case holderCut:
			text, err = r.cutHolder(p)
		}
		if err != nil {
			return fmt.Errorf("fault %s: %w", kind, err)
		}
		p.counts[kind]++
		if kind == holderPauseInAct {
			p.inAct++
		}
		fmt.Printf("fence:   %5.1fs %s: %s\n", time.Since(start).Seconds(), kind, text)
	}
	return r.sleep(2 * r.lease())
}

// writer waits (10 s at most) for a write and returns the holder that
// wrote last and the chunk's highest token.
func (r *runner) writer(p *phase) (*holderProc, int64, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		id, token, err := lastWrite(p.store, p.chunk)
		for _, h := range p.holders {
			if err == nil && h.id == id && h.cmd != nil {
				return h, token, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, 0, fmt.Errorf("no holder wrote %s for 10 s (last answer: %v)", p.chunk, err)
		}
		if err := r.sleep(20 * time.Millisecond); err != nil {
			return nil, 0, err
		}
	}
}

// awaitNewer waits (20 s at most) until the chunk server has accepted a
// token above token: another holder took the lease and wrote.
func (r *runner) awaitNewer(p *phase, token int64) (int64, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, t, err := lastWrite(p.store, p.chunk); err == nil && t > token {
			return t, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no token above %d was accepted within 20 s", token)
		}
		if err := r.sleep(20 * time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// stopHolder SIGSTOPs the holder that wrote last until another holder's
// newer token was accepted, and at least twice the lease.
func (r *runner) stopHolder(p *phase) (string, error) {
	h, token, err := r.writer(p)
	if err != nil {
		return "", err
	}
	h.cmd.Process.Signal(syscall.SIGSTOP)
	defer h.cmd.Process.Signal(syscall.SIGCONT)
	start := time.Now()
	if err := r.awaitStopped(h.cmd.Process.Pid); err != nil {
		return "", err
	}
	newer, err := r.awaitNewer(p, token)
	if err != nil {
		return "", err
	}
	if err := r.sleep(2*r.lease() - time.Since(start)); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s stopped for %.2f s (its token %d; token %d accepted meanwhile)", h.id, time.Since(start).Seconds(), token, newer), nil
}

// pauseInAct asks the holder that wrote last to pause between its next
// check and its write (SIGUSR1; it says "paused TOKEN" and waits), stops
// it (SIGSTOP) until another holder's newer token was accepted, then
// continues it and lets it write: its write is then certainly late. A
// holder whose session ends before its next act (its holding time was
// up just then) drops the request (holder.maybePause); the holder that
// wrote last after it is asked instead.
func (r *runner) pauseInAct(p *phase) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	var h *holderProc
	var token int64
	for {
		var last int64
		var err error
		if h, last, err = r.writer(p); err != nil {
			return "", err
		}
		for len(h.paused) > 0 {
			<-h.paused
		}
		h.cmd.Process.Signal(syscall.SIGUSR1)
		var paused bool
		if token, paused, err = r.awaitPause(p, h, last, deadline); err != nil {
			return "", err
		}
		if paused {
			break
		}
	}
	defer fmt.Fprintln(h.stdin, "continue")
	h.cmd.Process.Signal(syscall.SIGSTOP)
	defer h.cmd.Process.Signal(syscall.SIGCONT)
	start := time.Now()
	if err := r.awaitStopped(h.cmd.Process.Pid); err != nil {
		return "", err
	}
	newer, err := r.awaitNewer(p, token)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s stopped between its check and its write for %.2f s (its token %d; token %d accepted meanwhile)",
		h.id, time.Since(start).Seconds(), token, newer), nil
}

// awaitPause waits until h says it paused (true, and the token it
// holds), or until a token above last was accepted before it did (false:
// h no longer holds the session it was asked in, so it will not pause).
func (r *runner) awaitPause(p *phase, h *holderProc, last int64, deadline time.Time) (int64, bool, error) {
	for {
		select {
		case token := <-h.paused:
			return token, true, nil
		case <-r.ctx.Done():
			return 0, false, r.stopped()
		case <-time.After(20 * time.Millisecond):
		}
		if _, t, err := lastWrite(p.store, p.chunk); err == nil && t > last {
			select {
			case token := <-h.paused: // paused just before the newer write
				return token, true, nil
			default:
				return 0, false, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, false, fmt.Errorf("%s did not pause, and no holder took the lease from it, within 30 s of the first SIGUSR1", h.id)
		}
	}
}

// awaitStopped waits (5 s at most) until pid is in the stopped state.
func (r *runner) awaitStopped(pid int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if processState(pid) == "T" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d is not stopped after 5 s (state %q)", pid, processState(pid))
		}
		if err := r.sleep(5 * time.Millisecond); err != nil {
			return err
		}
	}
}

// processState is the state letter of /proc/PID/stat ("" if gone).
func processState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// stopMember SIGSTOPs a member for 2.5 leases.
func (r *runner) stopMember(id string) (string, error) {
	pids, err := r.memberPIDs()
	if err != nil {
		return "", err
	}
	pid, ok := pids[id]
	if !ok {
		return "", fmt.Errorf("no PID for member %s", id)
	}
	syscall.Kill(pid, syscall.SIGSTOP)
	defer syscall.Kill(pid, syscall.SIGCONT)
	d := 5 * r.lease() / 2
	if err := r.sleep(d); err != nil {
		return "", err
	}
	return fmt.Sprintf("member %s (pid %d) stopped for %v", id, pid, d), nil
}

// killMember SIGKILLs a member and restarts it with its boot wait
// (scripts/cluster.sh restart, which waits until it is ready).
func (r *runner) killMember(id string) (string, error) {
	pids, err := r.memberPIDs()
	if err != nil {
		return "", err
	}
	pid, ok := pids[id]
	if !ok {
		return "", fmt.Errorf("no PID for member %s", id)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for processState(pid) != "" && processState(pid) != "Z" {
		if time.Now().After(deadline) {
			return "", fmt.Errorf("member %s (pid %d) still runs 5 s after SIGKILL", id, pid)
		}
		if err := r.sleep(5 * time.Millisecond); err != nil {
			return "", err
		}
	}
	start := time.Now()
	if out, err := r.cluster("restart", id); err != nil {
		return "", fmt.Errorf("scripts/cluster.sh restart %s: %w\n%s", id, err, out)
	}
	return fmt.Sprintf("member %s (pid %d) killed, restarted and ready %.2f s later", id, pid, time.Since(start).Seconds()), nil
}

// cutHolder cuts the holder that wrote last off from every member for
// 2.5 leases.
func (r *runner) cutHolder(p *phase) (string, error) {
	h, _, err := r.writer(p)
	if err != nil {
		return "", err
	}
	h.gate.set(true)
	defer h.gate.set(false)
	d := 5 * r.lease() / 2
	if err := r.sleep(d); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s cut off from the members for %v", h.id, d), nil
}
