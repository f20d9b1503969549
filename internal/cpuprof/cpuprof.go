// Package cpuprof writes a CPU profile (runtime/pprof) when an environment
// variable asks for one, so that the node and the harness can be profiled
// in a real run without a flag on either command line. It exists for the
// performance work (docs/performance.md): read the profiles with
// `go tool pprof -top BINARY FILE`.
//
// Nodes are killed with SIGKILL at the end of a run, which would lose a
// profile written at exit, so a profile may also stop after a fixed time.
package cpuprof

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

// The environment variables that ask for profiles, shared by the node
// library (maelstrom/profile.go) and the harness command, so one setting
// profiles a whole run: the harness passes its environment to the nodes.
const (
	DirEnv     = "MAELSTROM_CPUPROFILE_DIR" // write profiles into this directory
	SecondsEnv = "MAELSTROM_CPUPROFILE_S"   // stop after this many seconds
)

// Start profiles the CPU into path until stop is called or, when limit > 0,
// until limit has passed, whichever comes first; stop is idempotent and
// safe from any goroutine. path "" profiles nothing (stop is a no-op). A
// profile that cannot start is an error: the caller asked for it.
func Start(path string, limit time.Duration) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}
	if limit > 0 {
		time.AfterFunc(limit, stop)
	}
	return stop, nil
}

// Limit reads a profile length in whole seconds from environment variable
// name; unset, empty or not a positive integer means def.
func Limit(name string, def time.Duration) time.Duration {
	if s, err := strconv.Atoi(os.Getenv(name)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return def
}
