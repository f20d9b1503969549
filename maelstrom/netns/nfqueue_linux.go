package netns

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// A small nfnetlink_queue client: the protocol of
// linux/netfilter/nfnetlink_queue.h, spoken over a netlink socket opened
// in a node's namespace (queue numbers are per namespace; one socket may
// bind many).
const (
	nfqMsgPacket       = 0 // NFQNL_MSG_PACKET: the kernel queued a packet
	nfqMsgVerdict      = 1 // NFQNL_MSG_VERDICT: our verdict on one packet
	nfqMsgConfig       = 2 // NFQNL_MSG_CONFIG
	nfqMsgVerdictBatch = 3 // NFQNL_MSG_VERDICT_BATCH: one verdict on every id up to one

	nfqaPacketHdr  = 1 // NFQA_PACKET_HDR {be32 packet_id; be16 hw_protocol; u8 hook}
	nfqaVerdictHdr = 2 // NFQA_VERDICT_HDR {be32 verdict; be32 id}
	nfqaTimestamp  = 4 // NFQA_TIMESTAMP {be64 sec; be64 usec}: when the packet arrived

	nfqaCfgCmd         = 1 // NFQA_CFG_CMD {u8 command; u8 pad; be16 pf}
	nfqaCfgParams      = 2 // NFQA_CFG_PARAMS {be32 copy_range; u8 copy_mode}
	nfqaCfgQueueMaxlen = 3 // NFQA_CFG_QUEUE_MAXLEN be32
	nfqaCfgMask        = 4 // NFQA_CFG_MASK be32
	nfqaCfgFlags       = 5 // NFQA_CFG_FLAGS be32

	nfqCmdBind  = 1 // NFQNL_CFG_CMD_BIND
	nfqCopyMeta = 1 // NFQNL_COPY_META: the header only, never the payload
	nfqFlagGSO  = 4 // NFQA_CFG_F_GSO: we never read payloads, so big GSO packets need not be split

	nfAccept = 1 // NF_ACCEPT
)

// queueMaxLen is how many packets the kernel holds for one node before it
// drops new ones (netem's default limit is 1000): 2000 packets/s held
// for 5 s fit.
const queueMaxLen = 10_000

// nfqConn is one netlink socket bound to several queues.
type nfqConn struct {
	c *netlink.Conn
}

// queued is one packet the kernel queued: its queue and its id there,
// and when it arrived (Unix microseconds; 0 when the kernel did not say).
type queued struct {
	queue       uint16
	id          uint32
	arrivedUnix int64
}

// dialQueue opens a netlink socket in the namespace nsFd and binds each
// queue in nums to it, asking for metadata only.
func dialQueue(nsFd int, nums []uint16) (*nfqConn, error) {
	c, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: nsFd})
	if err != nil {
		return nil, fmt.Errorf("nfnetlink socket: %w", err)
	}
	q := &nfqConn{c: c}
	for _, num := range nums {
		if err := q.bind(num); err != nil {
			c.Close()
			return nil, fmt.Errorf("bind nfqueue %d (CONFIG_NETFILTER_NETLINK_QUEUE): %w", num, err)
		}
	}
	// A burst larger than the socket buffer must not stop the reader:
	// the kernel drops what does not fit (it never queues a packet it
	// could not report) and counts it.
	if err := c.SetOption(netlink.NoENOBUFS, true); err != nil {
		c.Close()
		return nil, err
	}
	if err := q.forceReadBuffer(4 << 20); err != nil {
		c.Close()
		return nil, err
	}
	if err := q.askTimestamps(); err != nil {
		c.Close()
		return nil, err
	}
	return q, nil
}

func (q *nfqConn) bind(num uint16) error {
	bind := []byte{nfqCmdBind, 0, 0, 0}
	binary.BigEndian.PutUint16(bind[2:], unix.AF_INET)
	params := binary.BigEndian.AppendUint32(nil, 0)
	params = append(params, nfqCopyMeta)
	steps := [][]netlink.Attribute{
		{{Type: nfqaCfgCmd, Data: bind}},
		{
			{Type: nfqaCfgParams, Data: params},
			{Type: nfqaCfgQueueMaxlen, Data: binary.BigEndian.AppendUint32(nil, queueMaxLen)},
			{Type: nfqaCfgMask, Data: binary.BigEndian.AppendUint32(nil, nfqFlagGSO)},
			{Type: nfqaCfgFlags, Data: binary.BigEndian.AppendUint32(nil, nfqFlagGSO)},
		},
	}
	for _, attrs := range steps {
		if _, err := q.c.Execute(message(nfqMsgConfig, num, netlink.Request|netlink.Acknowledge, attrs)); err != nil {
			return err
		}
	}
	return nil
}

// forceReadBuffer sets SO_RCVBUFFORCE (root may pass rmem_max).
func (q *nfqConn) forceReadBuffer(bytes int) error {
	return q.setsockopt(unix.SO_RCVBUFFORCE, bytes)
}

// askTimestamps turns on the kernel's receive timestamps (SO_TIMESTAMP on
// any socket but a unix one does, for the whole system, as tcpdump
// does), so each queued packet says when it arrived (NFQA_TIMESTAMP) and
// its delay counts from then, not from when this process got to read it.
func (q *nfqConn) askTimestamps() error {
	return q.setsockopt(unix.SO_TIMESTAMP, 1)
}

func (q *nfqConn) setsockopt(opt, value int) error {
	rc, err := q.c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, value)
	}); err != nil {
		return err
	}
	return serr
}

// message builds an nfnetlink queue message for queue num: nfgenmsg
// {AF_UNSPEC, NFNETLINK_V0, be16 queue number}, then attrs.
func message(typ, num uint16, flags netlink.HeaderFlags, attrs []netlink.Attribute) netlink.Message {
	data := []byte{unix.AF_UNSPEC, unix.NFNETLINK_V0, 0, 0}
	binary.BigEndian.PutUint16(data[2:], num)
	enc, err := netlink.MarshalAttributes(attrs)
	if err != nil {
		panic(err) // only fixed, well-formed attributes are passed
	}
	return netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_QUEUE<<8 | typ), Flags: flags},
		Data:   append(data, enc...),
	}
}

// receive blocks for the next packets the kernel queued. An error ends
// the reader (the socket was closed).
func (q *nfqConn) receive(out []queued) ([]queued, error) {
	msgs, err := q.c.Receive()
	if err != nil {
		return out, err
	}
	for _, m := range msgs {
		if m.Header.Type != netlink.HeaderType(unix.NFNL_SUBSYS_QUEUE<<8|nfqMsgPacket) || len(m.Data) < 4 {
			continue
		}
		if p, ok := parsePacket(m.Data[4:]); ok {
			p.queue = binary.BigEndian.Uint16(m.Data[2:4])
			out = append(out, p)
		}
	}
	return out, nil
}

// parsePacket reads a packet message's id and arrival time.
func parsePacket(attrs []byte) (p queued, ok bool) {
	ad, err := netlink.NewAttributeDecoder(attrs)
	if err != nil {
		return p, false
	}
	for ad.Next() {
		b := ad.Bytes()
		switch {
		case ad.Type() == nfqaPacketHdr && len(b) >= 4:
			p.id, ok = binary.BigEndian.Uint32(b), true
		case ad.Type() == nfqaTimestamp && len(b) >= 16:
			p.arrivedUnix = int64(binary.BigEndian.Uint64(b))*1e6 + int64(binary.BigEndian.Uint64(b[8:]))
		}
	}
	return p, ok
}

// accept lets packet p go on. No acknowledgement is asked for: a verdict
// costs one sendmsg.
func (q *nfqConn) accept(p queued) error {
	return q.verdict(nfqMsgVerdict, p.queue, p.id)
}

// acceptUpTo lets every packet still in queue num with an id up to maxID
// go on (the kernel compares ids modulo 2^32).
func (q *nfqConn) acceptUpTo(num uint16, maxID uint32) error {
	return q.verdict(nfqMsgVerdictBatch, num, maxID)
}

func (q *nfqConn) verdict(typ, num uint16, id uint32) error {
	hdr := binary.BigEndian.AppendUint32(nil, nfAccept)
	hdr = binary.BigEndian.AppendUint32(hdr, id)
	_, err := q.c.Send(message(typ, num, netlink.Request, []netlink.Attribute{{Type: nfqaVerdictHdr, Data: hdr}}))
	return err
}

// close unbinds the queue: the kernel drops whatever is still queued, so
// callers accept everything first.
func (q *nfqConn) close() error { return q.c.Close() }
