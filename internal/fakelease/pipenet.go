package fakelease

import (
	"context"
	"net"
	"sync"
	"syscall"
)

// pipeNet is an in-memory network: a dial makes a net.Pipe and hands one
// end to the listener at the address. Everything blocks on channels made
// inside the caller's synctest bubble, so the bubble's clock advances.
type pipeNet struct {
	mu        sync.Mutex
	listeners map[string]*pipeListener
}

func (p *pipeNet) listen(addr string) *pipeListener {
	l := &pipeListener{net: p, addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	p.mu.Lock()
	p.listeners[addr] = l
	p.mu.Unlock()
	return l
}

// dial connects to addr, or is refused as TCP is when nothing listens.
func (p *pipeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	p.mu.Lock()
	l := p.listeners[addr]
	p.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: network, Addr: pipeAddr(addr), Err: syscall.ECONNREFUSED}
	if l == nil {
		return nil, refused
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, refused
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeListener struct {
	net   *pipeNet
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.mu.Lock()
		if l.net.listeners[l.addr] == l {
			delete(l.net.listeners, l.addr)
		}
		l.net.mu.Unlock()
	})
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.addr) }

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }
