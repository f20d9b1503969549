// Package proctest finds processes for tests that must prove none of
// theirs is left running: it reads /proc (Linux), and finds nothing
// elsewhere; and it holds a process's output for reading while the
// process writes (Output), and waits for a signalled process to stop
// (WaitStopped). It starts and signals nothing.
package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Running lists the pids of live processes (not zombies) whose program
// is path (the first word of their command line).
func Running(path string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(cmdline, []byte(path+"\x00")) {
			continue
		}
		if pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p))); Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Alive reports whether process pid exists and is not a zombie (one that
// exited and was not reaped yet no longer runs).
func Alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state is the field after the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] != 'Z' && stat[i+2] != 'X'
}
