package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"chunklease/fence"
)

// phase is one run: a chunk server, the holders on one chunk, the faults.
type phase struct {
	name               string
	chunk              string
	duration           time.Duration
	doneOnly, unfenced bool
	faults             []faultKind

	dir     string
	store   string // the chunk server's URL
	holders []*holderProc
	counts  map[faultKind]int
	inAct   int // in-act pauses that took effect
	verdict verdict
}

// holderProc is a holder process and its link to the members.
type holderProc struct {
	id      string
	cmd     *exec.Cmd
	gate    *gate
	proxies []*proxy
	paused  chan int64     // the token of each "paused" line it prints
	stdin   io.WriteCloser // a line ends a pause
	log     string
}

// runPhase starts the chunk server and the holders, injects faults for
// the phase's duration, stops everything and judges the logs.
func (r *runner) runPhase(p *phase) error {
	p.dir, p.counts = filepath.Join(r.opts.work, p.name), map[faultKind]int{}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	stopStore, err := r.startStore(p)
	if err != nil {
		return err
	}
	stopHolders := r.startHolders(p)
	r.onCleanup(stopHolders)
	r.onCleanup(stopStore)
	fmt.Printf("fence: %s run: %d holders on %s through %s (%s)\n", p.name, len(p.holders), p.chunk, p.store, p.mode())
	err = r.inject(p)
	stopHolders()
	stopStore()
	if err != nil {
		return fmt.Errorf("%s run: %w (logs in %s)", p.name, err, p.dir)
	}
	logs := make([]string, len(p.holders))
	for i, h := range p.holders {
		logs[i] = h.log
	}
	p.verdict, err = judge(filepath.Join(p.dir, "store.jsonl"), logs)
	return err
}

func (p *phase) mode() string {
	if p.doneOnly {
		return "holders act while Done is open; the store takes every token"
	}
	return "holders act through Session.Act; the store fences"
}

// acceptable: the main run found nothing, and every fault took effect;
// each in-act pause made a late write that the store refused.
func (p *phase) acceptable() error {
	v := p.verdict
	for _, d := range v.details {
		fmt.Println("fence:   ", d)
	}
	switch {
	case v.staleAccepted > 0 || v.overlaps > 0:
		return fmt.Errorf("the main run broke the end-to-end rule: stale-accepted=%d overlaps=%d (logs in %s)", v.staleAccepted, v.overlaps, p.dir)
	case v.writers < 4 || v.sessions < v.holders:
		return fmt.Errorf("the main run did too little to show anything: %d holders wrote (want 4 at least), %d sessions", v.writers, v.sessions)
	case v.refused < p.inAct:
		return fmt.Errorf("%d holders paused between their check and their write, but the store refused only %d writes", p.inAct, v.refused)
	}
	for _, k := range p.faults {
		if p.counts[k] == 0 {
			return fmt.Errorf("fault %s never happened: run longer", k)
		}
	}
	return nil
}

func (p *phase) faultText() string {
	var parts []string
	for _, k := range p.faults {
		parts = append(parts, fmt.Sprintf("%s=%d", k, p.counts[k]))
	}
	return strings.Join(parts, " ")
}

// startStore starts the example chunk server and reads its address.
func (r *runner) startStore(p *phase) (func(), error) {
	args := []string{"-log", filepath.Join(p.dir, "store.jsonl")}
	if p.unfenced {
		args = append(args, "-unfenced")
	}
	cmd := exec.Command(r.opts.chunkserver, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // gone with this process, whatever ends it
	errLog, err := os.Create(filepath.Join(p.dir, "chunkserver.err"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = errLog
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := stopOnce(func() { terminate(cmd, 5*time.Second); errLog.Close() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "chunkserver: listening on ")
	if err != nil || !ok {
		stop()
		return nil, fmt.Errorf("the chunk server did not say where it listens (%q, %v)", line, err)
	}
	p.store = addr
	return stop, nil
}

// startHolders starts the phase's holders, each behind proxies of its
// own; the returned function stops them all.
func (r *runner) startHolders(p *phase) func() {
	for i := range r.opts.holders {
		h := &holderProc{id: fmt.Sprintf("h%d", i+1), gate: newGate(), paused: make(chan int64, 16),
			log: filepath.Join(p.dir, fmt.Sprintf("h%d.jsonl", i+1))}
		p.holders = append(p.holders, h)
		if err := r.startHolder(p, h, i); err != nil {
			fmt.Fprintf(os.Stderr, "fence: holder %s: %v\n", h.id, err)
		}
	}
	return stopOnce(func() {
		for _, h := range p.holders {
			if h.cmd != nil {
				h.cmd.Process.Signal(syscall.SIGCONT)
			}
		}
		for _, h := range p.holders {
			if h.cmd != nil {
				terminate(h.cmd, 5*time.Second)
			}
			h.gate.close()
			for _, px := range h.proxies {
				px.close()
			}
		}
	})
}

func (r *runner) startHolder(p *phase, h *holderProc, i int) error {
	var urls []string
	for _, ep := range r.endpoints {
		u, err := url.Parse(ep)
		if err != nil {
			return err
		}
		px, err := startProxy(u.Host, h.gate)
		if err != nil {
			return err
		}
		h.proxies = append(h.proxies, px)
		urls = append(urls, px.url())
	}
	args := []string{"holder", "-id", h.id, "-endpoints", strings.Join(urls, ","), "-store", p.store, "-chunk", p.chunk,
		"-lease-ms", strconv.FormatInt(r.opts.leaseMs, 10), "-log", h.log, "-seed", strconv.FormatUint(r.opts.seed+uint64(i), 10)}
	if p.doneOnly {
		args = append(args, "-done-only")
	}
	cmd := exec.Command(r.self, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // gone with this process, whatever ends it
	errLog, err := os.Create(filepath.Join(p.dir, h.id+".err"))
	if err != nil {
		return err
	}
	cmd.Stderr = errLog
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	h.cmd = cmd
	go func() {
		defer errLog.Close()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if tok, ok := strings.CutPrefix(sc.Text(), "paused "); ok {
				if t, err := strconv.ParseInt(tok, 10, 64); err == nil {
					select {
					case h.paused <- t:
					default:
					}
				}
			}
		}
	}()
	return nil
}

// terminate stops a child: SIGCONT and SIGTERM, then SIGKILL after
// grace; it waits for the exit.
func terminate(cmd *exec.Cmd, grace time.Duration) {
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		cmd.Process.Kill()
		<-done
	}
}

func stopOnce(f func()) func() {
	done := false
	return func() {
		if !done {
			done = true
			f()
		}
	}
}

// lastWrite asks the chunk server for the chunk's latest write: its
// holder and the highest token accepted.
func lastWrite(store, chunk string) (holder string, token int64, err error) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(store + "/chunks/" + chunk)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("GET %s: %s", chunk, resp.Status)
	}
	var body struct {
		Holder string `json:"holder"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", 0, err
	}
	token, err = strconv.ParseInt(resp.Header.Get(fence.Header), 10, 64)
	return body.Holder, token, err
}
