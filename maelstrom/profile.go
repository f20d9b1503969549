package maelstrom

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"chunklease/internal/cpuprof"
)

// Profiling a node in a real run (docs/performance.md). Harnesses start
// nodes without arguments but pass their environment on, so the switch is
// an environment variable, shared with the harness command:
//
//	MAELSTROM_CPUPROFILE_DIR=DIR   write DIR/node-<id>-<pid>.pprof
//	MAELSTROM_CPUPROFILE_S=N       for the first N seconds after init (default 10)
//
// The profile stops after N seconds because Maelstrom ends nodes with
// SIGKILL, which would lose a profile written at exit; at the end of input
// it stops earlier.
// defaultProfileLimit is how long a node profiles without cpuprof.SecondsEnv.
const defaultProfileLimit = 10 * time.Second

// startProfile starts the node's CPU profile on first init when asked to;
// a profile that cannot start is logged, never fatal.
func (n *Node) startProfile() {
	dir := os.Getenv(cpuprof.DirEnv)
	if dir == "" || n.stopProfile != nil {
		return
	}
	path := filepath.Join(dir, fmt.Sprintf("node-%s-%d.pprof", n.id, os.Getpid()))
	stop, err := cpuprof.Start(path, cpuprof.Limit(cpuprof.SecondsEnv, defaultProfileLimit))
	if err != nil {
		n.Logf("%s is set but profiling failed: %v", cpuprof.DirEnv, err)
		return
	}
	n.stopProfile = stop
	n.Logf("writing a CPU profile to %s", path)
}
