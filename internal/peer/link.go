package peer

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/lease"
)

// link is the outgoing side towards one member: a bounded queue of
// encoded frames that the loop appends to, and a writer that sends
// whatever has queued in one write (batching: at high load many frames
// leave in one TLS record and one system call).
type link struct {
	id, addr string
	rng      *rand.Rand // reconnect jitter; only the dial loop uses it

	mu     sync.Mutex
	buf    []byte // encoded frames waiting for the writer
	limit  int
	conn   net.Conn // the established connection, nil while down
	signal chan struct{}
	// back is poked when the member's own connection to us is admitted:
	// it is up again, so a dial loop waiting out its backoff dials now.
	back  chan struct{}
	dirty atomic.Bool // frames were queued since the last flush
	up    atomic.Bool
	// answered is the send time (Transport.since) of the latest ping the
	// member answered; 0 before the first answer.
	answered atomic.Int64
	// booting: the latest answer said the member is in its boot wait.
	booting atomic.Bool

	sent, received, writes, droppedFull, droppedDown, droppedBig atomic.Int64
}

func newLink(m Member, limit int, seed uint64) *link {
	return &link{id: m.ID, addr: m.Addr, limit: limit, signal: make(chan struct{}, 1),
		back: make(chan struct{}, 1), rng: rand.New(rand.NewPCG(seed, 0x6c6e70))}
}

// push encodes m at the end of the queue, or drops it when the link is
// down, the queue is full or the frame is over the limit. The writer
// sends it at the next flush.
func (l *link) push(m *lease.Msg, frameLimit int) {
	l.mu.Lock()
	if l.conn == nil {
		l.mu.Unlock()
		l.droppedDown.Add(1)
		return
	}
	start := len(l.buf)
	l.buf = AppendFrame(l.buf, m)
	n := len(l.buf) - start
	switch {
	case n-frameHeaderLen > frameLimit:
		l.buf = l.buf[:start]
		l.mu.Unlock()
		l.droppedBig.Add(1)
		return
	case len(l.buf) > l.limit && start > 0:
		l.buf = l.buf[:start]
		l.mu.Unlock()
		l.droppedFull.Add(1)
		return
	}
	l.mu.Unlock()
	l.sent.Add(1)
	l.dirty.Store(true)
}

// pushCtl queues a ping or pong; like a message, it is dropped when the
// link is down or its queue is full.
func (l *link) pushCtl(code byte, stamp time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil || len(l.buf)+ctlFrameSize > l.limit && len(l.buf) > 0 {
		return
	}
	l.buf = appendCtl(l.buf, code, stamp)
	l.dirty.Store(true)
}

// flush wakes the writer if frames were queued since the last flush.
func (l *link) flush() {
	// Load before Swap: every loop of the member flushes every link
	// after each event, and a Swap writes the line even when nothing was
	// queued, which would bounce it between the loops' cores.
	if l.dirty.Load() && l.dirty.Swap(false) {
		select {
		case l.signal <- struct{}{}:
		default:
		}
	}
}

// setConn makes c the link's connection (nil: down); frames queued for an
// earlier connection are dropped with it.
func (l *link) setConn(c net.Conn) {
	l.mu.Lock()
	if c == nil && len(l.buf) > 0 {
		l.droppedDown.Add(int64(countFrames(l.buf)))
		l.buf = l.buf[:0]
	}
	l.conn = c
	l.mu.Unlock()
	l.up.Store(c != nil)
}

func (l *link) closeConn() {
	l.mu.Lock()
	if l.conn != nil {
		l.conn.Close()
	}
	l.mu.Unlock()
}

func countFrames(b []byte) int {
	n := 0
	for len(b) >= frameHeaderLen {
		b = b[frameHeaderLen+int(binary.BigEndian.Uint32(b)):]
		n++
	}
	return n
}

// dialLoop keeps one connection to the member open until the transport
// closes: dial, send the hello, write frames until the connection fails,
// then dial again after a capped exponential backoff with jitter. The
// backoff starts again from its minimum only once the member has accepted
// a connection (answered a ping on it): a member that refuses us after the
// TLS handshake (other cluster settings, another protocol version) is
// redialled at the pace of a failed dial, not at once, and the same
// refusal is logged once, with a count when it changes. A member that
// dials us meanwhile is up again (it restarted), so the wait ends at once
// (comeBack): otherwise the backoff, grown to its cap while the member
// was down, kept this direction closed for up to maxBackoff after it was
// back, beyond the boot wait of a short lease. A restarted member is ready
// once it and one other member answer each other; in a rolling restart
// the operator then stops that other one, and the survivors, unable to
// reach each other one way, could renew nothing until the backoff ran
// out (TestServeRollingRestartAfterADowntime).
func (t *Transport) dialLoop(l *link) {
	defer t.wg.Done()
	first, most := t.cfg.backoffBounds()
	backoff := first
	var r redialLog
	for t.ctx.Err() == nil {
		conn, err := t.dial(l)
		if err != nil {
			if t.ctx.Err() == nil {
				r.note(t, l, "cannot connect: "+err.Error())
			}
		} else {
			select {
			case <-l.back: // a poke from before this connection: spent
			default:
			}
			if !r.repeating {
				t.cfg.Logf("peer %s at %s: connected", l.id, l.addr)
			}
			upAt := t.since()
			err = t.run(l, conn)
			if t.ctx.Err() != nil {
				return
			}
			if l.answered.Load() >= int64(upAt) {
				r.reset(t, l)
				t.cfg.Logf("peer %s at %s: connection lost: %v", l.id, l.addr, err)
				backoff = first
			} else {
				r.note(t, l, "refused before it answered a ping: "+refusalText(err))
			}
		}
		if !t.waitRedial(l, l.jitter(backoff)) {
			return
		}
		backoff = min(2*backoff, most)
	}
}

// comeBack tells member id's dial loop that the member dialled us: if it
// is waiting out a backoff, it dials now.
func (t *Transport) comeBack(id string) {
	if l := t.members.Load().links[id]; l != nil {
		select {
		case l.back <- struct{}{}:
		default: // a poke is pending already
		}
	}
}

// waitRedial waits d before the next dial, or less if the member dialled
// us meanwhile (comeBack); false when the transport closes.
func (t *Transport) waitRedial(l *link, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-l.back:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// redialLog logs a failed attempt once and counts its repeats, so a member
// that keeps refusing us costs one log line per change, not one per dial.
type redialLog struct {
	last      string
	repeats   int
	repeating bool // the last attempt failed as the one before it
}

func (r *redialLog) note(t *Transport, l *link, what string) {
	if what == r.last {
		r.repeats++
		r.repeating = true
		return
	}
	r.flush(t, l)
	t.cfg.Logf("peer %s at %s: %s (retrying with backoff up to %v; repeats are counted, not logged)", l.id, l.addr, what, maxBackoff)
	r.last, r.repeating = what, false
}

// reset ends a run of failures: the member accepted a connection.
func (r *redialLog) reset(t *Transport, l *link) {
	r.flush(t, l)
	r.last, r.repeating = "", false
}

func (r *redialLog) flush(t *Transport, l *link) {
	if r.repeats > 0 {
		t.cfg.Logf("peer %s at %s: the previous failure repeated %d more times", l.id, l.addr, r.repeats)
	}
	r.repeats = 0
}

// refusalText says what a connection that ended before the member
// answered a ping tells: the member's reason when it wrote one, else a
// guess at the causes a bare close has.
func refusalText(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Sprintf("%v (the member closed it without a reason: it may speak another version of the peer protocol than %s, or have been stopping)", err, helloMagic)
	}
	return err.Error()
}

// jitter spreads d over [d/2, d), so members that lost each other at the
// same instant do not redial in step.
func (l *link) jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(l.rng.Int64N(int64(d/2)+1))
}

// sleep waits d unless the transport closes first (false).
func (t *Transport) sleep(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// dial connects, authenticates the member and sends the hello.
func (t *Transport) dial(l *link) (*tls.Conn, error) {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: dialTimeout}, Config: clientTLS(&t.cfg, l.id, t.memberIDs())}
	ctx, cancel := context.WithTimeout(t.ctx, handshakeTimeout)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", l.addr)
	if err != nil {
		return nil, err
	}
	conn := c.(*tls.Conn)
	hello := appendHello(nil, t.cfg.Hello)
	conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := conn.Write(hello); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// run writes the queue to conn until it fails. A reader on the same
// connection notices at once when the member closes it (the member never
// writes on it, except a line saying why it refused us).
func (t *Transport) run(l *link, conn *tls.Conn) error {
	l.setConn(conn)
	defer l.setConn(nil)
	defer conn.Close()
	closed := make(chan error, 1)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		closed <- t.watch(conn)
	}()
	var spare []byte
	upAt := t.since()
	ping := time.NewTicker(t.cfg.PingInterval)
	defer ping.Stop()
	if err := t.pingDue(l, upAt); err != nil {
		return failed(conn, closed, err)
	}
	for {
		select {
		case <-l.signal:
		case <-ping.C:
			if err := t.pingDue(l, upAt); err != nil {
				return failed(conn, closed, err)
			}
			continue
		case err := <-closed:
			return err
		case <-t.ctx.Done():
			return t.ctx.Err()
		}
		// Let the loop queue what it is about to: the frames of requests
		// that arrived meanwhile then leave in this write instead of the
		// next. One yield, no timer: an idle loop costs no latency, and at
		// 16 clients and more it cut the servers' CPU per renew by about a
		// tenth (scripts/bench_net.sh), system calls being most of it.
		runtime.Gosched()
		l.mu.Lock()
		batch := l.buf
		l.buf = spare[:0]
		l.mu.Unlock()
		if len(batch) > 0 {
			conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := conn.Write(batch); err != nil {
				return failed(conn, closed, err)
			}
			l.writes.Add(1)
		}
		spare = batch
	}
}

// watch reads the outgoing connection until it ends; what the member
// wrote before closing (its reason for refusing us) is the error.
func (t *Transport) watch(conn *tls.Conn) error {
	buf := make([]byte, 512)
	n, err := io.ReadFull(conn, buf)
	conn.Close()
	if n > 0 {
		return &refusal{fmt.Sprintf("the member closed it: %s", bytes.TrimSpace(buf[:n]))}
	}
	return err
}

// refusal is the reason a member wrote before closing our connection.
type refusal struct{ text string }

func (r *refusal) Error() string { return r.text }

// failed is the error that ends run after err on a write: the member's
// reason if it wrote one (its close is what failed the write), else err.
func failed(conn net.Conn, closed <-chan error, err error) error {
	conn.Close() // the watcher returns at once
	var r *refusal
	if e := <-closed; errors.As(e, &r) {
		return e
	}
	return err
}
