package netns

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// UDP measurement helpers: a datagram carries its sequence number and its
// send time (nanoseconds on this process's monotonic clock), so one-way
// delay, loss, duplicates and order can be read off at the receiver.

var clockOrigin = time.Now()

func monoNs() int64 { return time.Since(clockOrigin).Nanoseconds() }

// udpSocket opens a UDP socket in ns on its address and port, with a
// large receive buffer so a burst is never dropped by the socket.
func udpSocket(t testing.TB, ns *Namespace, port int) *net.UDPConn {
	t.Helper()
	pc, err := ns.ListenPacket("udp4", net.JoinHostPort(ns.Addr().String(), strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	c := pc.(*net.UDPConn)
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
	})
	if serr != nil {
		t.Fatal(serr)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sendSeq sends datagrams first..first+n-1 from c to dst, each stamped.
func sendSeq(t testing.TB, c *net.UDPConn, dst *net.UDPConn, first, n int) {
	t.Helper()
	to := dst.LocalAddr()
	buf := make([]byte, 16)
	for i := first; i < first+n; i++ {
		binary.BigEndian.PutUint64(buf[0:], uint64(i))
		binary.BigEndian.PutUint64(buf[8:], uint64(monoNs()))
		if _, err := c.WriteTo(buf, to); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
}

// received is one datagram as the receiver saw it.
type received struct {
	seq      int
	delayNs  int64
	fromAddr string
}

// recvUntil reads datagrams from c until stop says the set is complete,
// or until idle passes with nothing new, or until the hard limit; it
// returns what arrived, in arrival order.
func recvUntil(t testing.TB, c *net.UDPConn, idle, limit time.Duration, stop func([]received) bool) []received {
	t.Helper()
	var got []received
	buf := make([]byte, 64)
	hard := time.Now().Add(limit)
	for !stop(got) {
		deadline := time.Now().Add(idle)
		if deadline.After(hard) {
			deadline = hard
		}
		c.SetReadDeadline(deadline)
		n, from, err := c.ReadFrom(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Error(err) // not Fatal: a benchmark receives on its own goroutine
			break
		}
		if n < 16 {
			continue
		}
		sent := int64(binary.BigEndian.Uint64(buf[8:]))
		got = append(got, received{
			seq:      int(binary.BigEndian.Uint64(buf[0:])),
			delayNs:  monoNs() - sent,
			fromAddr: from.String(),
		})
	}
	return got
}

// countDistinct says how many distinct sequence numbers arrived.
func countDistinct(got []received) int {
	seen := map[int]bool{}
	for _, r := range got {
		seen[r.seq] = true
	}
	return len(seen)
}

// haveAll stops a receive once every one of n distinct datagrams is in.
func haveAll(n int) func([]received) bool {
	return func(got []received) bool { return countDistinct(got) >= n }
}

// seen stops a receive once datagram seq is in.
func seen(seq int) func([]received) bool {
	return func(got []received) bool {
		return slices.ContainsFunc(got, func(r received) bool { return r.seq == seq })
	}
}

// outOfOrder counts arrivals whose sequence number is below one that
// arrived before them.
func outOfOrder(got []received) int {
	late, maxSeq := 0, -1
	for _, r := range got {
		if r.seq < maxSeq {
			late++
		}
		maxSeq = max(maxSeq, r.seq)
	}
	return late
}

// delaysMs are the one-way delays in ms, sorted.
func delaysMs(got []received) []float64 {
	var d []float64
	for _, r := range got {
		d = append(d, float64(r.delayNs)/1e6)
	}
	slices.Sort(d)
	return d
}

// quantile of sorted xs by nearest rank.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[max(0, min(len(xs)-1, i))]
}
