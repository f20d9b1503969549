package proctest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// WaitStopped waits (polling /proc, at most 5 s) until process pid is in
// the stopped state: SIGSTOP is delivered asynchronously, and a request
// written before the stop takes hold would still be answered.
func WaitStopped(t testing.TB, pid int, name string) {
	t.Helper()
	end := time.Now().Add(5 * time.Second)
	for time.Now().Before(end) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err == nil && strings.Contains(string(b), ") T ") {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s (pid %d) was not stopped 5 s after SIGSTOP", name, pid)
}
