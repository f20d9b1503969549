package client

import (
	"bytes"
	"io"
)

// body is a request body, and tells whether the request went out.
//
// It is a *bytes.Reader inside io.NopCloser on purpose: net/http knows
// that type holds its bytes in memory, so the transport writes the
// request's headers and body into its buffer and sends both in one
// write. A body of any other type makes it flush the headers first (in
// case the body blocks): two writes and two TCP segments a call, and
// often two reads on the member, which cost more CPU than the rest of
// the call on loopback (scripts/bench_net.sh measured it).
//
// Whether the request went out: with ContentLength set and an in-memory
// body, the transport reads the body only after it has written the
// headers into its buffer, and flushes that buffer to the connection
// only after the body was read (requests are far below the buffer's 4
// KiB). So a body never read is a request the member cannot have
// received (a dial error, a refused TLS handshake, a deadline while
// waiting for a connection); a body read is one it may have. Were a
// future transport to read earlier, the error would be on the safe side:
// "unknown" for a request never sent.
//
// The buffer is not pooled: the transport may still be writing it after
// RoundTrip returned an answer (a member that answers before reading the
// whole request, such as a 413), so only the collector knows when it is
// free.
type body struct {
	r      *bytes.Reader
	length int
}

func newBody(r *request) body {
	b := r.appendBody(make([]byte, 0, 128))
	return body{r: bytes.NewReader(b), length: len(b)}
}

func (b body) len() int { return b.length }

// reader is the request's Body.
func (b body) reader() io.ReadCloser { return io.NopCloser(b.r) }

// wasRead reports whether the transport started reading the body. Call
// it only after RoundTrip returned an error: net/http then has waited for
// its writer to finish with the request ("to avoid data races on callers
// who mutate the request on failure", persistConn.mapRoundTripError), so
// the reader is no longer in use.
func (b body) wasRead() bool { return b.r.Len() < b.length }
