package harness

import "syscall"

// sysProcAttr puts a node in its own process group and asks the kernel to
// kill it if the harness dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// maxRSSUnit is the unit of getrusage's ru_maxrss: KiB on Linux.
const maxRSSUnit = 1024
