package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// inMsg is a message as an in-process fake node receives it.
type inMsg struct {
	ID   int64           `json:"id"`
	Src  string          `json:"src"`
	Dest string          `json:"dest"`
	Body json.RawMessage `json:"body"`
	body struct {
		Type   string          `json:"type"`
		MsgID  int64           `json:"msg_id"`
		Echo   json.RawMessage `json:"echo"`
		NodeID string          `json:"node_id"`
	}
}

// script is an in-process node's behaviour: the lines it prints in
// answer to one message, and whether it then exits on its own.
type script func(self string, m inMsg) (lines []string, exit bool)

// fakeNet records what every fake node received, for assertions.
type fakeNet struct {
	mu       sync.Mutex
	received map[string][]inMsg
}

func (f *fakeNet) add(node string, m inMsg) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.received[node] = append(f.received[node], m)
}

func (f *fakeNet) of(node string) []inMsg {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]inMsg(nil), f.received[node]...)
}

// fakeLauncher starts in-process nodes that follow s. They use pipes and
// goroutines only, so runs work inside a synctest bubble.
func fakeLauncher(s script) (Launcher, *fakeNet) {
	log := &fakeNet{received: map[string][]inMsg{}}
	return func(id string) (Proc, error) {
		p := newFakeProc()
		go p.run(id, s, log)
		return p, nil
	}, log
}

type fakeProc struct {
	inR        *io.PipeReader
	inW        *io.PipeWriter
	outR, errR *io.PipeReader
	outW, errW *io.PipeWriter
	done       chan struct{}
	killOnce   sync.Once
	mu         sync.Mutex
	killed     bool
}

func newFakeProc() *fakeProc {
	p := &fakeProc{done: make(chan struct{})}
	p.inR, p.inW = io.Pipe()
	p.outR, p.outW = io.Pipe()
	p.errR, p.errW = io.Pipe()
	return p
}

func (p *fakeProc) run(self string, s script, log *fakeNet) {
	defer close(p.done)
	defer p.outW.Close()
	defer p.errW.Close()
	fmt.Fprintf(p.errW, "fake %s started\n", self)
	in := bufio.NewScanner(p.inR)
	for in.Scan() {
		var m inMsg
		if json.Unmarshal(in.Bytes(), &m) != nil || json.Unmarshal(m.Body, &m.body) != nil {
			panic("fake node got a bad line: " + in.Text())
		}
		log.add(self, m)
		if m.body.Type == "init" {
			self = m.body.NodeID
		}
		lines, exit := s(self, m)
		for _, l := range lines {
			if _, err := io.WriteString(p.outW, l+"\n"); err != nil {
				return
			}
		}
		if exit {
			p.inR.Close()
			return
		}
	}
}

func (p *fakeProc) Stdin() io.WriteCloser { return p.inW }
func (p *fakeProc) Stdout() io.ReadCloser { return p.outR }
func (p *fakeProc) Stderr() io.ReadCloser { return p.errR }
func (p *fakeProc) PID() int              { return 0 }

func (p *fakeProc) Wait() string {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killed {
		return "signal: killed"
	}
	return "exit status 0"
}

func (p *fakeProc) Kill() {
	p.killOnce.Do(func() {
		p.mu.Lock()
		p.killed = true
		p.mu.Unlock()
		p.inR.CloseWithError(io.ErrClosedPipe)
		p.outW.CloseWithError(io.ErrClosedPipe)
		p.errW.CloseWithError(io.ErrClosedPipe)
	})
}

// reply renders self's answer to m with the given body fields (a JSON
// object without braces, e.g. `"type":"echo_ok","echo":1`).
func reply(self string, m inMsg, fields string) string {
	return fmt.Sprintf(`{"src":%q,"dest":%q,"body":{%s,"in_reply_to":%d}}`, self, m.Src, fields, m.body.MsgID)
}

// echoScript answers init and echo correctly.
func echoScript(self string, m inMsg) ([]string, bool) {
	switch m.body.Type {
	case "init":
		return []string{reply(self, m, `"type":"init_ok"`)}, false
	case "echo":
		return []string{reply(self, m, `"type":"echo_ok","echo":`+string(m.body.Echo))}, false
	}
	return nil, false
}

// withEcho answers init like echoScript and echo with f.
func withEcho(f func(self string, m inMsg) []string) script {
	return func(self string, m inMsg) ([]string, bool) {
		if m.body.Type == "echo" {
			return f(self, m), false
		}
		return echoScript(self, m)
	}
}
