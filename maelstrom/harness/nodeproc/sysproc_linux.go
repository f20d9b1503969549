package nodeproc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts a node in its own process group and asks the kernel to
// kill it if the harness dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// peakRSSKiB is a running process's peak resident memory (VmHWM in
// /proc/<pid>/status), in KiB; 0 when it cannot be read. (getrusage's
// maxrss of a child is no use: it counts the harness's own memory, which
// the child shared between fork and exec.)
func peakRSSKiB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib
		}
	}
	return 0
}
