package peer

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"chunklease/lease"
)

// incoming is the open connection a member uses to send us its frames.
type incoming struct {
	id   string
	conn net.Conn
}

// acceptLoop serves every connection to the peer address.
func (t *Transport) acceptLoop() {
	defer t.wg.Done()
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			t.cfg.Logf("peer listener: %v", err)
			if !t.sleep(minBackoff) {
				return
			}
			continue
		}
		h, evicted, full := t.handshakes.add(conn, time.Now())
		if full {
			// Every slot is taken by a connection that started its
			// handshake less than minEvictAge ago: more would only pile up.
			// Members redial after a backoff.
			t.refused.Add(1)
			t.logLimited("cap", "refused a peer connection from %s: too many peer connections in their handshake (at most %d)",
				conn.RemoteAddr(), t.cfg.MaxHandshakes)
			conn.Close()
			continue
		}
		if evicted != nil {
			// The oldest gives way (handshakes.go): a flood of silent
			// connections cannot keep a member's handshake out.
			t.refused.Add(1)
			t.logLimited("evicted", "closed the peer connection from %s, the oldest in its handshake, to make room: too many peer connections in their handshake (at most %d)",
				evicted.RemoteAddr(), t.cfg.MaxHandshakes)
			evicted.Close()
		}
		t.wg.Add(1)
		go t.serveIncoming(conn, h)
	}
}

// serveIncoming authenticates a connection, checks its hello, and reads
// its frames into the inbox until it ends. A refusal is logged with the
// remote address and the name the peer presented.
func (t *Transport) serveIncoming(raw net.Conn, h *handshake) {
	defer t.wg.Done()
	defer raw.Close()
	conn := tls.Server(raw, serverTLS(&t.cfg, t.memberIDs()))
	id, r, err := t.admit(conn)
	if evicted := t.handshakes.done(h); evicted {
		return // counted and logged when it was evicted
	}
	if err != nil {
		t.refused.Add(1)
		t.logLimited(refusalKind(id, err), "refused a peer connection from %s: %v", raw.RemoteAddr(), err)
		return
	}
	c := &incoming{id: id, conn: conn}
	if !t.register(c) {
		return
	}
	t.comeBack(id)
	defer t.unregister(c)
	err = t.readFrames(c, r)
	if t.ctx.Err() == nil {
		t.cfg.Logf("peer %s: incoming connection from %s ended: %v", id, raw.RemoteAddr(), err)
	}
}

// admit runs the handshake (identity) and reads the hello (settings),
// within handshakeTimeout.
func (t *Transport) admit(conn *tls.Conn) (string, *bufio.Reader, error) {
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := conn.HandshakeContext(t.ctx); err != nil {
		return "", nil, err
	}
	id, err := memberOf(conn.ConnectionState().PeerCertificates[0], t.memberIDs())
	if err != nil {
		return "", nil, err // VerifyConnection refused it already; kept for clarity
	}
	if id == t.cfg.Self {
		return "", nil, fmt.Errorf("the certificate names this node %s itself", id)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	hello, err := readHello(r)
	if err != nil {
		msg := fmt.Sprintf("member %s: %v", id, err)
		conn.Write([]byte(msg + "\n")) // the dialler logs why
		return id, nil, errors.New(msg)
	}
	if hello != t.cfg.Hello {
		msg := fmt.Sprintf("member %s runs with cluster settings %q, this node %s with %q; every member needs the same "+
			"-cluster, -acceptors, -max-lease-ms and -drift-ppm", id, hello, t.cfg.Self, t.cfg.Hello)
		conn.Write([]byte(msg + "\n"))
		return id, nil, errors.New(msg)
	}
	conn.SetDeadline(time.Time{})
	return id, r, nil
}

// register makes c the member's incoming connection, closing an earlier
// one (a restarted member's old connection may linger half-open).
func (t *Transport) register(c *incoming) bool {
	t.inMu.Lock()
	defer t.inMu.Unlock()
	if t.ctx.Err() != nil {
		return false
	}
	if old := t.in[c.id]; old != nil {
		old.conn.Close()
	}
	t.in[c.id] = c
	return true
}

func (t *Transport) unregister(c *incoming) {
	t.inMu.Lock()
	defer t.inMu.Unlock()
	if t.in[c.id] == c {
		delete(t.in, c.id)
	}
}

// readFrames decodes every frame once, straight into a lease.Msg, and
// hands it to the loop. A frame over the limit ends the connection; one
// that does not decode is logged and skipped (its length kept the stream
// in step).
func (t *Transport) readFrames(c *incoming, r *bufio.Reader) error {
	var hdr [frameHeaderLen]byte
	var payload []byte
	var deadlineAt time.Duration
	// m is decoded into and handed on from one place for the
	// connection's life: Route takes a pointer, which made every message
	// a new heap object; what takes the message takes a copy, so the
	// next frame may reuse it.
	m := new(lease.Msg)
	for {
		// A member pings every PingInterval: a connection silent for
		// deadAfter is dead (its member paused, partitioned or gone
		// without a FIN), and is closed rather than kept open forever.
		// The deadline moves at most once a second, not per frame.
		if now := t.since(); now-deadlineAt > time.Second {
			c.conn.SetReadDeadline(time.Now().Add(t.deadAfter()))
			deadlineAt = now
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[:]))
		if n > t.cfg.FrameLimit {
			return fmt.Errorf("a frame of %d bytes is over the limit of %d; closing the connection", n, t.cfg.FrameLimit)
		}
		if cap(payload) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return err
		}
		if isCtl(payload) {
			t.onCtl(c.id, payload)
			continue
		}
		var err error
		*m, err = DecodePayload(payload, c.id, t.cfg.Self)
		if err != nil {
			t.malformed.Add(1)
			t.cfg.Logf("peer %s: skipped a frame that does not decode: %v", c.id, err)
			continue
		}
		if !t.deliver(m) {
			return t.ctx.Err()
		}
		t.linkReceived(c.id)
	}
}

// appendHello is what a dialer writes first: the magic, then its cluster
// settings, length-prefixed.
func appendHello(dst []byte, settings string) []byte {
	dst = append(dst, helloMagic...)
	dst = binary.AppendUvarint(dst, uint64(len(settings)))
	return append(dst, settings...)
}

func readHello(r *bufio.Reader) (string, error) {
	var magic [len(helloMagic)]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return "", fmt.Errorf("reading the hello: %v", err)
	}
	if string(magic[:]) != helloMagic {
		return "", fmt.Errorf("the hello starts %q, not %q: not a lease node of this version", magic[:], helloMagic)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > maxHello {
		return "", fmt.Errorf("the hello's settings length is bad (%d, %v)", n, err)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("reading the hello: %v", err)
	}
	return string(b), nil
}

// refusalKind is what refusals are rate-limited by: a member's refusals
// apart from each other's, the same verdict on a certificate together,
// and every connection that failed or went silent in its handshake
// together (a flood of them: their texts differ only by address).
func refusalKind(id string, err error) string {
	var ne net.Error
	switch {
	case id != "":
		return "member " + id
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return "handshake i/o"
	}
	return err.Error()
}
