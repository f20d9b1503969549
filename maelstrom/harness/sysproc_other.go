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
