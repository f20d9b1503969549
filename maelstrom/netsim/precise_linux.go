package netsim

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// haveKernelTimer: Linux has timerfd, a high-resolution timer that the Go
// netpoller waits on (wait.go explains why).
const haveKernelTimer = true

// kernelTimer is one receiver's timerfd, opened on first use. Only that
// receiver's Recv waits on it; close may come from another goroutine.
type kernelTimer struct {
	mu   sync.Mutex
	file *os.File // nil until the first wait, and after close
	fd   uintptr
}

// itimerspec is the kernel's struct itimerspec.
type itimerspec struct {
	interval syscall.Timespec
	value    syscall.Timespec
}

const (
	clockMonotonic = 1 // CLOCK_MONOTONIC, the clock Go's monotonic time reads
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

// wait blocks the calling goroutine (not its thread) for d > 0.
func (k *kernelTimer) wait(d time.Duration) error {
	f, fd, err := k.open()
	if err != nil {
		return err
	}
	spec := itimerspec{value: syscall.NsecToTimespec(int64(max(d, 1)))}
	_, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	var expirations [8]byte
	_, err = f.Read(expirations[:]) // the netpoller parks us until the timer fires
	return err
}

// open returns the timerfd, creating it non-blocking so that os.File
// registers it with the netpoller.
func (k *kernelTimer) open() (*os.File, uintptr, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.file != nil {
		return k.file, k.fd, nil
	}
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil, 0, errno
	}
	k.file, k.fd = os.NewFile(fd, "netsim-timerfd"), fd
	return k.file, k.fd, nil
}

// close releases the timerfd; a wait in progress returns an error.
func (k *kernelTimer) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.file != nil {
		k.file.Close()
		k.file = nil
	}
}

// clockIsVirtual reports whether the time package's clock is virtual (a
// testing/synctest bubble): such a clock stands still while the calling
// goroutine sleeps in the kernel, a real one moves.
func clockIsVirtual() bool {
	start := time.Now()
	ts := syscall.NsecToTimespec(int64(20 * time.Microsecond))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
	return time.Since(start) == 0
}
