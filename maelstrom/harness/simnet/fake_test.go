package simnet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"chunklease/internal/clock"
	"chunklease/maelstrom/harness/nodeproc"
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

// fakeNet records what every fake node received and the extra
// environment of every launch, for assertions.
type fakeNet struct {
	mu       sync.Mutex
	received map[string][]inMsg
	launches map[string][][]string // node -> env of each launch
}

func (f *fakeNet) launched(node string, env []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.launches[node] = append(f.launches[node], env)
}

func (f *fakeNet) envs(node string) [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.launches[node]...)
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
func fakeLauncher(s script) (nodeproc.Launcher, *fakeNet) {
	return fakeLauncherEnv(func([]string) script { return s })
}

// fakeLauncherEnv starts in-process nodes with a fresh script per launch,
// made from the launch's extra environment: a script with state (a lease
// table) forgets it when its node is killed and started again. Like a
// clockfault build, a node whose environment names a clock file logs
// that it follows it.
func fakeLauncherEnv(newScript func(env []string) script) (nodeproc.Launcher, *fakeNet) {
	log := &fakeNet{received: map[string][]inMsg{}, launches: map[string][][]string{}}
	return func(id string, env []string) (nodeproc.Proc, error) {
		log.launched(id, env)
		p := newFakeProc()
		for _, kv := range env {
			if path, ok := strings.CutPrefix(kv, clock.EnvFile+"="); ok {
				p.notes = append(p.notes, clock.FollowingNote(path))
			}
		}
		go p.run(id, newScript(env), log)
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
	gate       chan struct{} // non-nil while paused; closed by Resume and Kill
	notes      []string      // stderr lines after the start line
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
	for _, note := range p.notes {
		fmt.Fprintln(p.errW, note)
	}
	in := bufio.NewScanner(p.inR)
	for in.Scan() {
		p.waitWhilePaused()
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

// waitWhilePaused blocks while the fake is paused: like a stopped
// process it handles nothing, and its stdin pipe (synchronous) holds the
// next message back.
func (p *fakeProc) waitWhilePaused() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	if g != nil {
		<-g
	}
}

func (p *fakeProc) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate == nil && !p.killed {
		p.gate = make(chan struct{})
	}
}

func (p *fakeProc) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

func (p *fakeProc) Kill() {
	p.Resume()
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
