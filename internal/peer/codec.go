package peer

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"chunklease/lease"
)

// The frame: a 4-byte big-endian length n, then n bytes of payload. The
// payload is one lease.Msg in a fixed binary layout, every field present
// whatever the type (a zero costs one byte), so that decoding needs no
// schema per type and no reflection:
//
//	type        1 byte   index in msgTypes, from 1
//	flags       1 byte   fast, ok, recovering, lease present, lease expired
//	chunk       uvarint length, bytes
//	server      uvarint length, bytes
//	ballot      uvarint counter, varint incarnation
//	lease_ms    varint
//	token       varint
//	req_id      uvarint
//	nonce       uvarint
//	promised    uvarint counter, varint incarnation
//	counter     uvarint
//	booting_ms  varint
//	core        uvarint, then cores uvarint (a sync answer's core among its member's; 0, 0 otherwise)
//	lease       (if present) uvarint length + server bytes, varint token, varint remaining_ms
//	epoch       uvarint
//	accepted    uvarint counter, varint incarnation
//	wait_ms     varint
//	config      uvarint length, JSON of a lease.Membership (length 0: none)
//	value       uvarint length, JSON of a lease.Membership (length 0: none)
//
// The membership fields (lease/doc.go "Membership") cost 6 bytes when
// empty; configurations are rare, so they travel as JSON.
//
// From and To are not in the frame: the receiver takes From from the
// connection's TLS identity and To is itself.

// frameHeaderLen is the length prefix.
const frameHeaderLen = 4

// msgTypes numbers the peer message types on the wire (index + 1).
var msgTypes = [...]lease.MsgType{
	lease.MsgPrepare, lease.MsgPrepareResp, lease.MsgPropose, lease.MsgProposeResp,
	lease.MsgRead, lease.MsgReadResp, lease.MsgRelease, lease.MsgReleaseResp,
	lease.MsgSync, lease.MsgSyncResp, lease.MsgCancel, lease.MsgCancelResp,
	lease.MsgBooting,
	lease.MsgChangePrepare, lease.MsgChangePrepareResp, lease.MsgChangePropose, lease.MsgChangeProposeResp,
	lease.MsgConfig, lease.MsgConfigResp,
}

const (
	flagFast = 1 << iota
	flagOK
	flagRecovering
	flagLease
	flagLeaseExpired
	flagLearner
	flagActive
	flagsKnown = flagFast | flagOK | flagRecovering | flagLease | flagLeaseExpired | flagLearner | flagActive
)

func typeCode(t lease.MsgType) byte {
	for i, mt := range msgTypes {
		if mt == t {
			return byte(i + 1)
		}
	}
	return 0
}

// AppendFrame appends m as one frame (length prefix and payload) to dst.
// It allocates only when dst must grow.
func AppendFrame(dst []byte, m *lease.Msg) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = append(dst, typeCode(m.Type), flagsOf(m))
	dst = appendString(dst, m.Chunk)
	dst = appendString(dst, m.Server)
	dst = binary.AppendUvarint(dst, m.Ballot.Counter)
	dst = binary.AppendVarint(dst, m.Ballot.Incarnation)
	dst = binary.AppendVarint(dst, m.LeaseMs)
	dst = binary.AppendVarint(dst, m.Token)
	dst = binary.AppendUvarint(dst, m.ReqID)
	dst = binary.AppendUvarint(dst, m.Nonce)
	dst = binary.AppendUvarint(dst, m.Promised.Counter)
	dst = binary.AppendVarint(dst, m.Promised.Incarnation)
	dst = binary.AppendUvarint(dst, m.Counter)
	dst = binary.AppendVarint(dst, m.BootingMs)
	dst = binary.AppendUvarint(dst, uint64(m.Core))
	dst = binary.AppendUvarint(dst, uint64(m.Cores))
	if r := m.Lease; r != nil {
		dst = appendString(dst, r.Server)
		dst = binary.AppendVarint(dst, r.Token)
		dst = binary.AppendVarint(dst, r.RemainingMs)
	}
	dst = binary.AppendUvarint(dst, m.Epoch)
	dst = binary.AppendUvarint(dst, m.Accepted.Counter)
	dst = binary.AppendVarint(dst, m.Accepted.Incarnation)
	dst = binary.AppendVarint(dst, m.WaitMs)
	dst = appendConf(dst, m.Conf)
	dst = appendConf(dst, m.Value)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-frameHeaderLen))
	return dst
}

func flagsOf(m *lease.Msg) byte {
	var f byte
	if m.Fast {
		f |= flagFast
	}
	if m.OK {
		f |= flagOK
	}
	if m.Recovering {
		f |= flagRecovering
	}
	if m.Lease != nil {
		f |= flagLease
		if m.Lease.Expired {
			f |= flagLeaseExpired
		}
	}
	if m.Learner {
		f |= flagLearner
	}
	if m.Active {
		f |= flagActive
	}
	return f
}

// appendConf appends a configuration as length-prefixed JSON (length 0
// for none).
func appendConf(dst []byte, c *lease.Membership) []byte {
	if c == nil {
		return binary.AppendUvarint(dst, 0)
	}
	raw, _ := json.Marshal(c) // a Membership always marshals
	dst = binary.AppendUvarint(dst, uint64(len(raw)))
	return append(dst, raw...)
}

// conf reads what appendConf wrote.
func (d *decoder) conf() *lease.Membership {
	raw := d.str()
	if d.err != nil || raw == "" {
		return nil
	}
	var c lease.Membership
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		d.err = fmt.Errorf("a configuration that does not decode: %v", err)
		return nil
	}
	return &c
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// errShort is a payload that ends inside a field.
var errShort = errors.New("payload ends inside a field")

// decoder reads a payload field by field; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads binary.AppendVarint's zig-zag encoding.
func (d *decoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// DecodePayload reads one frame's payload (without its length prefix) as
// a message from `from` to `to`, and refuses what lease.CheckMsg refuses,
// so the core never acts on a half-understood message. Strings are
// copied: the payload's buffer may be reused at once.
func DecodePayload(p []byte, from, to string) (lease.Msg, error) {
	if len(p) < 2 {
		return lease.Msg{}, errShort
	}
	code, flags := p[0], p[1]
	if code == 0 || int(code) > len(msgTypes) {
		return lease.Msg{}, fmt.Errorf("unknown message type %d", code)
	}
	if flags&^flagsKnown != 0 {
		return lease.Msg{}, fmt.Errorf("unknown flags %#x", flags)
	}
	d := decoder{b: p[2:]}
	m := lease.Msg{Type: msgTypes[code-1], From: from, To: to,
		Fast: flags&flagFast != 0, OK: flags&flagOK != 0, Recovering: flags&flagRecovering != 0,
		Learner: flags&flagLearner != 0, Active: flags&flagActive != 0}
	m.Chunk = d.str()
	m.Server = d.str()
	m.Ballot = lease.Ballot{Counter: d.uvarint(), Incarnation: d.varint()}
	m.LeaseMs = d.varint()
	m.Token = d.varint()
	m.ReqID = d.uvarint()
	m.Nonce = d.uvarint()
	m.Promised = lease.Ballot{Counter: d.uvarint(), Incarnation: d.varint()}
	m.Counter = d.uvarint()
	m.BootingMs = d.varint()
	core, cores := d.uvarint(), d.uvarint()
	if core > lease.MaxCores || cores > lease.MaxCores {
		return lease.Msg{}, fmt.Errorf("%s names core %d of %d; a member runs at most %d", m.Type, core, cores, lease.MaxCores)
	}
	m.Core, m.Cores = int(core), int(cores)
	if flags&flagLease != 0 {
		m.Lease = &lease.Record{Server: d.str(), Token: d.varint(), RemainingMs: d.varint(), Expired: flags&flagLeaseExpired != 0}
	} else if flags&flagLeaseExpired != 0 {
		return lease.Msg{}, errors.New("lease-expired flag without a lease")
	}
	m.Epoch = d.uvarint()
	m.Accepted = lease.Ballot{Counter: d.uvarint(), Incarnation: d.varint()}
	m.WaitMs = d.varint()
	m.Conf, m.Value = d.conf(), d.conf()
	switch {
	case d.err != nil:
		return lease.Msg{}, d.err
	case len(d.b) != 0:
		return lease.Msg{}, fmt.Errorf("%d bytes after the last field", len(d.b))
	case m.Lease != nil && (m.Lease.Token < 0 || m.Lease.Token >= 1<<53 || m.Lease.RemainingMs < 0):
		return lease.Msg{}, fmt.Errorf("%s carries a lease record with token %d, remaining %d ms", m.Type, m.Lease.Token, m.Lease.RemainingMs)
	}
	return m, lease.CheckMsg(m)
}
