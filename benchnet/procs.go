package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"chunklease/internal/loopport"
)

// Processes and ports. Every process this program starts is stopped by
// its PID, by this program, on every path out of it; each PID is also
// written to the PID file (-pidfile) so that scripts/bench_net.sh can
// stop what a killed benchmark left behind. Traffic goes to 127.0.0.1
// only.

// loadAverage is the machine's 1-minute load average (/proc/loadavg);
// -1 when it cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// ports hands out loopback ports below the kernel's ephemeral range (so
// no outgoing connection takes one meanwhile), each free when handed out
// and never handed out twice, as scripts/cluster.sh picks its own.
type ports struct{ *loopport.Picker }

func newPorts(seed uint64) *ports { return &ports{loopport.New(seed)} }

func (p *ports) next() (int, error) { return p.Next() }

// pidFile records the PIDs of started processes, one "PID NAME" a line.
type pidFile struct {
	mu   sync.Mutex
	path string
}

func (p *pidFile) add(pid int, name string) {
	if p == nil || p.path == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d %s\n", pid, name)
}

// isProgram reports whether PID runs the program at path (its
// /proc/PID/cmdline starts with it), so that a PID reused by another
// process is never signalled.
func isProgram(pid int, path string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	arg0, _, _ := strings.Cut(string(b), "\x00")
	return arg0 == path
}

// killPID sends SIGKILL to PID if it still runs program path.
func killPID(pid int, path string) error {
	if !isProgram(pid, path) {
		return fmt.Errorf("pid %d does not run %s any more", pid, path)
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}

// vmRSS is VmRSS of PID (/proc/PID/status) in bytes.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// waitUntil polls ok every 50 ms until it holds or timeout passes (for
// external processes only: nothing else can tell us they are ready).
func waitUntil(timeout time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// cpuTime is the CPU time (user and system) PID has used so far, from
// /proc/PID/stat; 0 when it cannot be read (the process is gone).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ioCalls is the number of read and write system calls PID has made so
// far (syscr + syscw in /proc/PID/io); 0 when it cannot be read.
func ioCalls(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	var sum int64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok && (k == "syscr" || k == "syscw") {
			n, _ := strconv.ParseInt(v, 10, 64)
			sum += n
		}
	}
	return sum
}
