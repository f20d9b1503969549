package main

import (
	"net"
	"sync"
	"time"
)

// gate is a holder's link to the members: open, cut, or closed for good.
// While cut, no byte passes and no new connection reaches a member; what
// was held goes on when it heals (a partition whose packets TCP resends).
type gate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	cut    bool
	closed bool
}

func newGate() *gate {
	g := &gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// wait blocks while the gate is cut; false once it is closed.
func (g *gate) wait() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.cut && !g.closed {
		g.cond.Wait()
	}
	return !g.closed
}

func (g *gate) set(cut bool) {
	g.mu.Lock()
	g.cut = cut
	g.mu.Unlock()
	g.cond.Broadcast()
}

func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cond.Broadcast()
}

// proxy forwards one loopback listener to one member through a gate.
type proxy struct {
	ln     net.Listener
	target string
	g      *gate
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func startProxy(target string, g *gate) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, g: g, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *proxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve connects c to the member once the gate is open, and copies both
// ways through the gate.
func (p *proxy) serve(c net.Conn) {
	defer p.wg.Done()
	if !p.track(c) {
		return
	}
	defer p.untrack(c)
	if !p.g.wait() {
		return
	}
	m, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		return
	}
	if !p.track(m) {
		m.Close()
		return
	}
	defer p.untrack(m)
	done := make(chan struct{}, 2)
	go func() { p.copy(m, c); done <- struct{}{} }()
	go func() { p.copy(c, m); done <- struct{}{} }()
	<-done // one side ended: end both
	c.Close()
	m.Close()
	<-done
}

// copy moves bytes from src to dst, holding each read while the gate is cut.
func (p *proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.g.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// track registers a connection for close; false when the proxy closed.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
