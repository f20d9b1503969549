package maelstrom

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"chunklease/internal/proctest"
)

// testNode drives a Node through pipes inside a synctest bubble: the test
// writes stdin lines, reads stdout lines, and inspects stderr. Time is
// virtual, so timeouts and drains run instantly and exactly.
type testNode struct {
	t      *testing.T
	node   *Node
	stdin  *io.PipeWriter
	out    chan string
	stderr *proctest.Output
	done   chan error
	// finished is set once Run has returned (finish was called).
	finished bool
}

// startNode must be called inside synctest.Test. setup registers handlers.
func startNode(t *testing.T, setup func(n *Node), opts ...Option) *testNode {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tn := &testNode{t: t, stdin: inW, out: make(chan string, 1<<16), stderr: &proctest.Output{}, done: make(chan error, 1)}
	tn.node = New(inR, outW, tn.stderr, opts...)
	if setup != nil {
		setup(tn.node)
	}
	go func() {
		err := tn.node.Run()
		outW.Close()
		tn.done <- err
	}()
	go collectLines(outR, tn.out)
	// On a failed assertion, stop the node inside the bubble, so the failure
	// is reported as itself and not as goroutines left blocked.
	t.Cleanup(func() {
		if !tn.finished {
			tn.finish()
		}
	})
	return tn
}

func collectLines(r io.Reader, out chan<- string) {
	defer close(out)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		out <- line
	}
}

// send writes one raw input line.
func (tn *testNode) send(line string) {
	tn.t.Helper()
	if _, err := io.WriteString(tn.stdin, line+"\n"); err != nil {
		tn.t.Fatalf("writing stdin: %v", err)
	}
}

// next returns the next stdout line once the bubble is quiet, without its
// '\n' (and checks that the '\n' is there).
func (tn *testNode) next() string {
	tn.t.Helper()
	synctest.Wait()
	select {
	case line, ok := <-tn.out:
		if !ok {
			tn.t.Fatal("stdout closed, expected a line")
		}
		if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
			tn.t.Fatalf("output %q is not one line ending in a newline", line)
		}
		return strings.TrimSuffix(line, "\n")
	default:
		tn.t.Fatalf("no output; stderr:\n%s", tn.stderr)
		return ""
	}
}

// expect checks the next stdout lines byte for byte.
func (tn *testNode) expect(lines ...string) {
	tn.t.Helper()
	for _, want := range lines {
		if got := tn.next(); got != want {
			tn.t.Fatalf("stdout\n got %s\nwant %s\nstderr:\n%s", got, want, tn.stderr)
		}
	}
}

// quiet checks that nothing more is written for now.
func (tn *testNode) quiet() {
	tn.t.Helper()
	synctest.Wait()
	select {
	case line, ok := <-tn.out:
		if ok {
			tn.t.Fatalf("unexpected output %q", line)
		}
	default:
	}
}

// logged checks that stderr mentions every text.
func (tn *testNode) logged(texts ...string) {
	tn.t.Helper()
	synctest.Wait()
	for _, text := range texts {
		if !strings.Contains(tn.stderr.String(), text) {
			tn.t.Fatalf("stderr does not mention %q:\n%s", text, tn.stderr)
		}
	}
}

// finish closes stdin and returns Run's result once it has returned.
func (tn *testNode) finish() error {
	tn.t.Helper()
	tn.stdin.Close()
	tn.finished = true
	return <-tn.done
}

// initNode sends Maelstrom's init for n1 of n1,n2,n3 and expects init_ok as
// the first line, msg_id 0.
func (tn *testNode) initNode() {
	tn.t.Helper()
	tn.send(`{"id":0,"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1","n2","n3"],"msg_id":1}}`)
	tn.expect(`{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":0}}`)
}

// echoNode registers echo, which answers echo_ok with the same value.
func echoNode(n *Node) {
	n.Handle("echo", func(req Message) error {
		var b struct {
			Echo json.RawMessage `json:"echo"`
		}
		if err := req.DecodeBody(&b); err != nil {
			return err
		}
		return n.Reply(req, "echo_ok", b)
	})
}

// bodyOf parses an output line's body for tests that need a value from it.
func bodyOf(t *testing.T, line string) map[string]any {
	t.Helper()
	var env struct {
		Body map[string]any `json:"body"`
	}
	if err := json.Unmarshal([]byte(line), &env); err != nil {
		t.Fatalf("output %q: %v", line, err)
	}
	return env.Body
}
