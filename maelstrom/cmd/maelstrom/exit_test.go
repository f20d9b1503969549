package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBuilt runs the built maelstrom binary in a fresh directory (so its
// default store lands there) and returns its exit status and output.
func runBuilt(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(cli, args...)
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// TestExitStatusesOfTheBuiltCLI pins every exit status of the binary to
// the cases real Maelstrom (0.2.x) was seen to exit with: 0 valid, 1
// invalid, 2 unknown, 254 bad arguments, 255 the run failed.
func TestExitStatusesOfTheBuiltCLI(t *testing.T) {
	short := []string{"--time-limit", "1", "--rate", "50", "--seed", testSeed(t)}
	lease := append([]string{"-w", "lease", "--nodes", "n1", "--lease-ms", "300", "--recovery-time", "0.6"}, short...)
	cases := []struct {
		name string
		args []string
		exit int
		want string // in stdout or stderr
	}{
		{"bare command", nil, 254, "Usage: maelstrom COMMAND"},
		{"unknown command", []string{"serve"}, 254, `unknown command "serve"`},
		{"top-level help", []string{"--help"}, 0, "Commands: test"},
		{"no --bin", []string{"test", "-w", "echo"}, 254, "Expected a --bin PATH_TO_BINARY to test"},
		{"unknown flag", []string{"test", "--bin", fakeNode, "--bogus"}, 254, `Unknown option: "--bogus"`},
		{"flag without its value", []string{"test", "--bin"}, 254, `Missing required argument for "--bin"`},
		{"node count 0", []string{"test", "--bin", fakeNode, "--node-count", "0"}, 254, "Must be positive"},
		{"fractional time limit", []string{"test", "--bin", fakeNode, "--time-limit", "2.5"}, 254, `"--time-limit 2.5"`},
		{"echo valid", append([]string{"test", "-w", "echo", "--bin", fakeNode, "--node-count", "2", "echo"}, short...), 0, "Everything looks good"},
		{"partition listed twice", append([]string{"test", "-w", "echo", "--bin", fakeNode, "--node-count", "2",
			"--nemesis", "partition,partition", "--nemesis-interval", "0.3", "echo"}, short...), 0, "Everything looks good"},
		{"echo invalid", append([]string{"test", "-w", "echo", "--bin", fakeNode, "--node-count", "2", "wrong-echo"}, short...), 1, "Analysis invalid"},
		// The main phase ends at about 1 s, the final reads come at about
		// 1.6 s, and the node refuses every lease request from 1.1 s on.
		{"final reads never succeed", append([]string{"test", "--bin", fakeNode, "lease-unavailable-after=1100"}, lease...), 2, "Validity unknown"},
		{"node is /bin/false", append([]string{"test", "-w", "echo", "--bin", "/bin/false", "--node-count", "1"}, short...), 255, "exited early"},
		{"init answered with an error", append([]string{"test", "-w", "echo", "--bin", fakeNode, "--node-count", "1", "init-error"}, short...), 255, "answered init with an error"},
		// The node exits at its first echo: whatever the first kill (at
		// t=0) hits, a live or restarted node soon gets an echo from one
		// of the many idle workers.
		{"node dies outside the kill nemesis", []string{"test", "-w", "echo", "--bin", fakeNode, "--node-count", "2",
			"--nemesis", "kill", "--nemesis-interval", "0.2", "--concurrency", "20", "--rate", "20", "--time-limit", "3",
			"--seed", testSeed(t), "exit-after-init=0"}, 255, "exited early"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runBuilt(t, c.args...)
			if code != c.exit || !strings.Contains(stdout+stderr, c.want) {
				t.Errorf("maelstrom %s: exit %d, want %d and %q in the output\nstdout:\n%s\nstderr:\n%s",
					strings.Join(c.args, " "), code, c.exit, c.want, stdout, stderr)
			}
		})
	}
}

// TestCommandUsageOfTheBuiltCLI: the usage goes where the exit status
// says it belongs: a bare maelstrom or an unknown command is a mistake
// (stderr, 254, nothing on stdout), --help or -h a request (stdout, 0,
// nothing on stderr).
func TestCommandUsageOfTheBuiltCLI(t *testing.T) {
	cases := []struct {
		args       []string
		exit       int
		onStdout   bool
		alsoStderr string
	}{
		{nil, 254, false, ""},
		{[]string{"serve"}, 254, false, `maelstrom: unknown command "serve"`},
		{[]string{"--bogus"}, 254, false, `maelstrom: unknown command "--bogus"`},
		{[]string{"--help"}, 0, true, ""},
		{[]string{"-h"}, 0, true, ""},
	}
	for _, c := range cases {
		code, stdout, stderr := runBuilt(t, c.args...)
		usage, other := stderr, stdout
		if c.onStdout {
			usage, other = stdout, stderr
		}
		if code != c.exit || strings.Count(usage, "Usage: maelstrom COMMAND") != 1 || other != "" || !strings.Contains(stderr, c.alsoStderr) {
			t.Errorf("maelstrom %v: exit %d, want %d and the usage once on %s only\nstdout:\n%s\nstderr:\n%s",
				c.args, code, c.exit, map[bool]string{true: "stdout", false: "stderr"}[c.onStdout], stdout, stderr)
		}
	}
}

// TestHelpOfTheBuiltCLI: test --help prints the help once, on stdout,
// and exits 0, even beside other flags.
func TestHelpOfTheBuiltCLI(t *testing.T) {
	for _, args := range [][]string{{"test", "--help"}, {"test", "-h"}, {"test", "--bin", "x", "--help"}, {"test", "--bogus", "--help"}} {
		code, stdout, stderr := runBuilt(t, args...)
		if code != 0 || strings.Count(stdout, "Usage: maelstrom test") != 1 || stderr != "" {
			t.Errorf("%v: exit %d, stdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
		for _, flag := range []string{"--nemesis-interval", "--recovery-time", "--kill-without-boot-wait", "--log-net-send", "255"} {
			if !strings.Contains(stdout, flag) {
				t.Errorf("help lacks %s", flag)
			}
		}
		if strings.Contains(stdout, "--ssh-private-key") {
			t.Error("help lists the SSH options that have no effect")
		}
	}
}

// TestBuiltCLIFlagsAfterWords: flags after a positional word still count
// (the run is the echo workload for 1 s, not the lease default for 60 s),
// the word goes to the node, and --nodes "n1, n2" trims the spaces.
func TestBuiltCLIFlagsAfterWords(t *testing.T) {
	code, stdout, stderr := runBuilt(t, "test", "--bin", fakeNode, "echo", "-w", "echo", "--nodes", "n1, n2",
		"--time-limit", "1", "--rate", "20", "--seed", testSeed(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "echo workload, nodes [n1 n2]") {
		t.Errorf("stdout lacks the echo workload on n1 and n2:\n%s", stdout)
	}
}

// TestLogNetOfTheBuiltCLI: --log-net-send and --log-net-recv log every
// message sent and delivered, as Maelstrom's :send and :recv lines.
func TestLogNetOfTheBuiltCLI(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(cli, "test", "-w", "echo", "--bin", fakeNode, "--node-count", "1", "--time-limit", "1",
		"--rate", "10", "--log-net-send", "--log-net-recv", "--seed", testSeed(t), "echo")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "store", "latest", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Net struct {
			All struct {
				SendCount int `json:"send_count"`
				RecvCount int `json:"recv_count"`
			} `json:"all"`
		} `json:"net"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	sends, recvs := strings.Count(string(out), "\n:send {"), strings.Count(string(out), "\n:recv {")
	if sends != res.Net.All.SendCount || recvs != res.Net.All.RecvCount || sends < 4 {
		t.Errorf("%d :send and %d :recv lines, want %d and %d", sends, recvs, res.Net.All.SendCount, res.Net.All.RecvCount)
	}
	if !strings.Contains(string(out), `:send {"id":0,"src":"c0","dest":"n0","body":{"type":"init"`) {
		t.Errorf("the first send is not init as the node gets it:\n%s", out)
	}
}
