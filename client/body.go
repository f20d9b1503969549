package client

import (
	"io"
	"sync"
)

// body is a request body in a pooled buffer. The transport reads it and
// closes it, possibly in its own goroutine after RoundTrip returned, and
// possibly more than once, so the buffer goes back to the pool on the
// first Close, not when the call ends; the small body value itself is
// not reused, so a late second Close cannot touch another call's bytes.
// The transport may close the body while its writer still reads it (a
// cancelled request), hence the lock.
type body struct {
	mu     sync.Mutex
	buf    *[]byte // nil once closed
	off    int
	length int
}

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func newBody(r *request) *body {
	buf := bodyPool.Get().(*[]byte)
	*buf = r.appendBody((*buf)[:0])
	return &body{buf: buf, length: len(*buf)}
}

func (b *body) len() int { return b.length }

func (b *body) Read(p []byte) (int, error) {
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
