//go:build unix && !linux

package harness

import "syscall"

// sysProcAttr puts a node in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// maxRSSUnit is the unit of getrusage's ru_maxrss: bytes on macOS (the
// BSDs count KiB; their figures read 1024 times too small).
const maxRSSUnit = 1

// peakRSSKiB is a process's peak resident memory where the system says
// it cheaply; here it does not (0).
func peakRSSKiB(int) int64 { return 0 }
