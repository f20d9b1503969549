package server

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"time"

	"chunklease/internal/jsonstr"
)

// answerOverloaded answers a connection the limits had no room for:
// it reads the request head (within overloadHeadTimeout; a client that
// sends nothing gets the answer at that deadline), writes 503 with
// Retry-After: 1 and Connection: close and the error body of code 11,
// then closes the connection after a lingering read, so that the client
// reads the answer rather than a reset caused by its unread request.
func (l *connLimiter) answerOverloaded(c net.Conn, s *source) {
	defer func() {
		l.mu.Lock()
		l.over--
		s.over--
		l.forget(s)
		l.mu.Unlock()
	}()
	defer c.Close()
	raw := c
	if l.tls != nil {
		c = tls.Server(c, l.tls)
	}
	c.SetDeadline(time.Now().Add(overloadHeadTimeout))
	readHead(c)
	c.SetWriteDeadline(time.Now().Add(overloadLinger))
	if _, err := c.Write(l.answer); err != nil {
		return
	}
	if tc, ok := c.(*tls.Conn); ok {
		tc.CloseWrite()
	} else if tc, ok := raw.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(overloadLinger))
	io.Copy(io.Discard, io.LimitReader(c, maxBodyBytes+16<<10))
}

// readHead reads until the end of a request head (an empty line), 16
// KiB, an error or the deadline.
func readHead(c net.Conn) {
	buf := make([]byte, 0, 1024)
	for len(buf) < 16<<10 {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if bytes.Contains(buf, []byte("\r\n\r\n")) || err != nil {
			return
		}
	}
}

// overloadAnswer is the whole HTTP answer to an overloaded connection,
// with the error text.
func overloadAnswer(text string) []byte {
	body := append([]byte(`{"type":"error","code":11,"text":`), jsonstr.Append(nil, text)...)
	body = append(body, '}')
	b := []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: ")
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}
