package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var nodeBin string

// TestMain builds the node binary once; the transcript tests run the real
// binary, as Maelstrom and the course grader do.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lease-node-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nodeBin = filepath.Join(dir, "lease-node")
	if out, err := exec.Command("go", "build", "-o", nodeBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the node: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestNodeTranscripts runs every testdata/node/*.txt script against the
// binary. A script is a list of directives:
//
//	env K=V          environment for the node (before the first send)
//	args -f v ...    command-line arguments (before the first send)
//	send LINE        write LINE and a newline to stdin ($name is replaced
//	                 by a captured value)
//	send-big N       write an echo request whose payload is N bytes
//	expect JSON      the next stdout line must contain JSON: every expected
//	                 key present with an equal value, in the same relative
//	                 order; "*" matches any value, "$name" captures a value
//	                 the first time and must equal it afterwards
//	skip-until JSON  skip lines until one matches JSON (retries whose
//	                 number depends on timing)
//	close            close stdin, as a grader does at the end of its input
//	exit N           the node exits with status N and wrote no other line
//	stderr TEXT      stderr contains TEXT (after exit)
func TestNodeTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/node/*.txt")
	if len(files) == 0 {
		t.Fatal("no node transcripts")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			runNodeScript(t, f)
		})
	}
}

// session is one running node and the values captured from its output.
type session struct {
	t      *testing.T
	env    []string
	args   []string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr bytes.Buffer
	vars   map[string]json.RawMessage
}

func runNodeScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, vars: map[string]json.RawMessage{}}
	defer s.kill()
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		s.step(fmt.Sprintf("%s:%d", path, i+1), verb, rest)
	}
}

func (s *session) step(where, verb, rest string) {
	switch verb {
	case "env":
		s.env = append(s.env, rest)
	case "args":
		s.args = strings.Fields(rest)
	case "send":
		s.write(where, s.substitute(rest))
	case "send-big":
		n, _ := strconv.Atoi(rest)
		s.write(where, fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":99,"echo":"%s"}}`, strings.Repeat("x", n)))
	case "expect":
		s.expect(where, rest)
	case "skip-until":
		s.skipUntil(where, rest)
	case "close":
		s.start()
		s.stdin.Close()
	case "exit":
		s.exit(where, rest)
	case "stderr":
		if !strings.Contains(s.stderr.String(), rest) {
			s.t.Fatalf("%s: stderr lacks %q:\n%s", where, rest, s.stderr.String())
		}
	default:
		s.t.Fatalf("%s: unknown directive %q", where, verb)
	}
}

func (s *session) start() {
	if s.cmd != nil {
		return
	}
	s.cmd = exec.Command(nodeBin, s.args...)
	s.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, s.env...)
	s.cmd.Stderr = &s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		s.t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.lines = make(chan string, 64)
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
}

func (s *session) write(where, line string) {
	s.start()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("%s: writing to the node: %v", where, err)
	}
}

// next returns the next stdout line. The failsafe only keeps a broken node
// from hanging the suite; nothing is timed.
func (s *session) next(where string) (string, bool) {
	select {
	case line, ok := <-s.lines:
		return line, ok
	case <-time.After(20 * time.Second):
		s.t.Fatalf("%s: no output from the node after 20 s (it hangs)", where)
		return "", false
	}
}

func (s *session) expect(where, want string) {
	s.start()
	got, ok := s.next(where)
	if !ok {
		s.t.Fatalf("%s: the node closed stdout; expected %s\nstderr:\n%s", where, want, s.stderr.String())
	}
	if !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
		s.t.Fatalf("%s: output is not exactly one line: %q", where, got)
	}
	if err := s.match(json.RawMessage(want), json.RawMessage(got)); err != nil {
		s.t.Fatalf("%s: %v\n got: %s want: %s", where, err, strings.TrimSpace(got), want)
	}
}

func (s *session) skipUntil(where, want string) {
	s.start()
	for {
		got, ok := s.next(where)
		if !ok {
			s.t.Fatalf("%s: the node closed stdout before printing %s\nstderr:\n%s", where, want, s.stderr.String())
		}
		if s.match(json.RawMessage(want), json.RawMessage(got)) == nil {
			return
		}
	}
}

func (s *session) exit(where, code string) {
	s.start()
	for line := range s.lines {
		s.t.Fatalf("%s: unexpected output before exit: %s", where, line)
	}
	err := s.cmd.Wait()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	}
	if strconv.Itoa(got) != code {
		s.t.Fatalf("%s: exit status %d, want %s\nstderr:\n%s", where, got, code, s.stderr.String())
	}
	s.cmd = nil
}

// kill stops a node the script left running (a failed test), by PID.
func (s *session) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// substitute replaces $name by its captured value, longest names first so
// that $b2 is not read as $b followed by 2.
func (s *session) substitute(line string) string {
	names := make([]string, 0, len(s.vars))
	for name := range s.vars {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, name := range names {
		line = strings.ReplaceAll(line, "$"+name, string(s.vars[name]))
	}
	return line
}
