package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodeBin is lease-node, built once from the module root: the cluster
// tests run real `lease-node serve` processes, as operators do.
var nodeBin string

func TestMain(m *testing.M) {
	if os.Getenv(panicChildEnv) != "" { // a child of TestAPanicInTheCoreEndsTheProcess
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "lease-node-serve-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nodeBin = filepath.Join(dir, "lease-node")
	if out, err := exec.Command("go", "build", "-o", nodeBin, "chunklease").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the node: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	stopBenchMembers()
	os.RemoveAll(dir)
	os.Exit(code)
}
