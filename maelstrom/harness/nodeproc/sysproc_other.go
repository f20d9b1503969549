//go:build unix && !linux

package nodeproc

import "syscall"

// sysProcAttr puts a node in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// peakRSSKiB is a process's peak resident memory where the system says
// it cheaply; here it does not (0).
func peakRSSKiB(int) int64 { return 0 }
