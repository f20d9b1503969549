//go:build unix && !linux

package harness

import "syscall"

// sysProcAttr puts a node in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
