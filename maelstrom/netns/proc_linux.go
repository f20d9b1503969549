package netns

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// KillGroup sends SIGKILL to the process group led by pid (a process
// started with Setpgid, and everything it started), or to pid alone when
// it leads no group. A process already gone is not an error.
func KillGroup(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("kill group: pid %d is not a process", pid)
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		err = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill group %d: %w", pid, err)
	}
	return nil
}

// procStat is what a lab needs of /proc/<pid>/stat: the state letter and
// the start time in clock ticks after boot (field 22).
type procStat struct {
	state      byte
	startTicks uint64
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// or parentheses itself: the fields after the last ')' are plain.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	fields := strings.Fields(s[i+1:]) // fields 3, 4, ...
	if len(fields) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat start time: %w", pid, err)
	}
	return procStat{state: fields[0][0], startTicks: start}, nil
}

// ownerAlive reports whether the process that created lab n still runs:
// same pid, same start time, not a zombie.
func ownerAlive(n labName) bool {
	st, err := readProcStat(n.pid)
	return err == nil && st.startTicks == n.startTicks && st.state != 'Z'
}

// nsProcess is a process found in one of a lab's namespaces.
type nsProcess struct {
	pid       int
	comm      string
	namespace string
}

func (p nsProcess) String() string { return fmt.Sprintf("%d (%s) in %s", p.pid, p.comm, p.namespace) }

// processesIn lists the processes (other than this one) whose network
// namespace is one of inodes (inode -> namespace name), as `ip netns
// pids` does, by pid.
func processesIn(inodes map[uint64]string) []nsProcess {
	entries, err := os.ReadDir("/proc")
	if err != nil || len(inodes) == 0 {
		return nil
	}
	self := os.Getpid()
	var found []nsProcess
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			continue // gone, a zombie, or a kernel thread
		}
		inode, ok := parseNetLink(link)
		if name, in := inodes[inode]; ok && in {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			found = append(found, nsProcess{pid: pid, comm: strings.TrimSpace(string(comm)), namespace: name})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].pid < found[j].pid })
	return found
}

// parseNetLink reads "net:[4026532320]".
func parseNetLink(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "net:[")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return n, err == nil
}

// killAll SIGKILLs every process in procs and says which, in one
// sentence for a log line.
func killAll(procs []nsProcess) string {
	var names []string
	for _, p := range procs {
		err := syscall.Kill(p.pid, syscall.SIGKILL)
		if err != nil && !errors.Is(err, syscall.ESRCH) {
			names = append(names, fmt.Sprintf("%s (kill failed: %v)", p, err))
			continue
		}
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}
