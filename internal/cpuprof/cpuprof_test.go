package cpuprof

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStartWritesAProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := Start(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	stop() // idempotent
	if info, err := os.Stat(path); err != nil || info.Size() == 0 {
		t.Fatalf("no profile written: %v", err)
	}
}

func TestEmptyPathProfilesNothing(t *testing.T) {
	stop, err := Start("", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	stop()
}

func TestLimit(t *testing.T) {
	t.Setenv("CPUPROF_TEST_S", "7")
	if got := Limit("CPUPROF_TEST_S", time.Second); got != 7*time.Second {
		t.Errorf("Limit = %v, want 7s", got)
	}
	t.Setenv("CPUPROF_TEST_S", "-1")
	if got := Limit("CPUPROF_TEST_S", time.Second); got != time.Second {
		t.Errorf("Limit of -1 = %v, want the default 1s", got)
	}
}
