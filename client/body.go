package client

import (
	"io"
	"sync"
	"sync/atomic"
)

// body is a request body in a pooled buffer. The transport reads it and
// closes it, possibly in its own goroutine after RoundTrip returned, and
// possibly more than once, so the buffer goes back to the pool on the
// first Close, not when the call ends; the small body value itself is
// not reused, so a late second Close cannot touch another call's bytes.
// The transport may close the body while its writer still reads it (a
// cancelled request), hence the lock.
//
// The body also tells whether the request went out: with ContentLength
// set, the transport reads the body only after it has written the
// request's headers (it probes a body only when the length is unknown),
// and it flushes nothing to the connection before that. So a body never
// read is a request the member cannot have received (a dial error, a
// refused TLS handshake, a deadline while waiting for a connection); a
// body read is one it may have. Were a future transport to read earlier,
// the error would be on the safe side: "unknown" for a request never sent.
type body struct {
	mu     sync.Mutex
	buf    *[]byte // nil once closed
	off    int
	length int
	read   atomic.Bool
}

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func newBody(r *request) *body {
	buf := bodyPool.Get().(*[]byte)
	*buf = r.appendBody((*buf)[:0])
	return &body{buf: buf, length: len(*buf)}
}

func (b *body) len() int { return b.length }

// wasRead reports whether the transport started reading the body.
func (b *body) wasRead() bool { return b.read.Load() }

func (b *body) Read(p []byte) (int, error) {
	b.read.Store(true)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf == nil {
		return 0, io.ErrClosedPipe
	}
	rest := (*b.buf)[b.off:]
	if len(rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, rest)
	b.off += n
	return n, nil
}

// Close returns the buffer to the pool, once.
func (b *body) Close() error {
	b.mu.Lock()
	buf := b.buf
	b.buf = nil
	b.mu.Unlock()
	if buf != nil && cap(*buf) <= 4096 {
		bodyPool.Put(buf)
	}
	return nil
}
