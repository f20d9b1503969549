package lease

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Ops maps the client request types to operations.
var Ops = map[string]Op{"lease_grant": OpGrant, "lease_renew": OpRenew, "lease_check": OpCheck, "lease_release": OpRelease}

// DecodeRequest parses the body of a client request of type typ. A body
// the core cannot serve is refused with error 12 and a text that names the
// field and says what was wrong; an unknown type is error 10.
func DecodeRequest(typ string, body []byte) (Request, *Error) {
	op, ok := Ops[typ]
	if !ok {
		return Request{}, &Error{Code: CodeNotSupported, Text: fmt.Sprintf("%q is not a lease request type", typ)}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return Request{}, malformed("%s: the body must be a JSON object", typ)
	}
	r := Request{Op: op}
	var err *Error
	if r.Chunk, err = stringField(typ, fields, "chunk_handle", true); err != nil {
		return r, err
	}
	if op != OpCheck {
		if r.Server, err = stringField(typ, fields, "server", true); err != nil {
			return r, err
		}
	}
	if op == OpGrant || op == OpRenew {
		if r.LeaseMs, err = leaseMsField(typ, fields); err != nil {
			return r, err
		}
	}
	return r, nil
}

func stringField(typ string, fields map[string]json.RawMessage, name string, required bool) (string, *Error) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		if required {
			return "", malformed("%s needs %s, a non-empty string", typ, name)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", malformed("%s: %s must be a string, got %s", typ, name, raw)
	}
	if s == "" && required {
		return "", malformed("%s: %s must not be empty", typ, name)
	}
	return s, nil
}

// leaseMsField reads the optional lease_ms: absent means the node's
// default; present, it must be a whole number of milliseconds > 0
// (Maelstrom may re-print 1000 as 1000.0, which is accepted).
func leaseMsField(typ string, fields map[string]json.RawMessage) (int64, *Error) {
	raw, ok := fields["lease_ms"]
	if !ok || string(raw) == "null" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, malformed("%s: lease_ms must be a whole number of milliseconds, got %s", typ, raw)
	}
	if f <= 0 {
		return 0, malformed("%s: lease_ms must be > 0, got %s (leave it out for the node's default)", typ, raw)
	}
	return int64(f), nil
}

// wireMsg is every peer message's body on the wire. Fields a type does not
// use are left out.
type wireMsg struct {
	ChunkHandle string  `json:"chunk_handle"`
	Ballot      *Ballot `json:"ballot,omitempty"`
	Server      string  `json:"server,omitempty"`
	LeaseMs     int64   `json:"lease_ms,omitempty"`
	ReadID      *uint64 `json:"read_id,omitempty"`
	OK          *bool   `json:"ok,omitempty"`
	Promised    *Ballot `json:"promised,omitempty"`
	Lease       *Record `json:"lease,omitempty"`
}

// Body returns what the protocol library marshals as the message body
// (without type and msg_id).
func (m Msg) Body() any {
	w := wireMsg{ChunkHandle: m.Chunk, Server: m.Server, LeaseMs: m.LeaseMs, Lease: m.Lease}
	if m.Type != MsgRead && m.Type != MsgReadResp {
		b := m.Ballot
		w.Ballot = &b
	} else {
		id := m.ReadID
		w.ReadID = &id
	}
	if !m.Type.isRequest() {
		ok, p := m.OK, m.Promised
		w.Promised = &p
		if m.Type != MsgReadResp {
			w.OK = &ok
		}
	}
	return w
}

// DecodeMsg parses a peer message body of type typ sent by from to to. It
// rejects a body missing a field the type needs, so the core never acts
// on a half-understood message.
func DecodeMsg(typ, from, to string, body []byte) (Msg, error) {
	t := MsgType(typ)
	switch t {
	case MsgPrepare, MsgPrepareResp, MsgPropose, MsgProposeResp, MsgRead, MsgReadResp, MsgRelease, MsgReleaseResp:
	default:
		return Msg{}, fmt.Errorf("%q is not a peer message type", typ)
	}
	var w wireMsg
	if err := json.Unmarshal(body, &w); err != nil {
		return Msg{}, fmt.Errorf("%s body: %v", typ, err)
	}
	m := Msg{Type: t, From: from, To: to, Chunk: w.ChunkHandle, Server: w.Server, LeaseMs: w.LeaseMs, Lease: w.Lease}
	if w.Ballot != nil {
		m.Ballot = *w.Ballot
	}
	if w.ReadID != nil {
		m.ReadID = *w.ReadID
	}
	if w.OK != nil {
		m.OK = *w.OK
	}
	if w.Promised != nil {
		m.Promised = *w.Promised
	}
	return m, checkMsg(m, w)
}

func checkMsg(m Msg, w wireMsg) error {
	isRead := m.Type == MsgRead || m.Type == MsgReadResp
	switch {
	case m.Chunk == "":
		return fmt.Errorf("%s needs chunk_handle", m.Type)
	case isRead && w.ReadID == nil:
		return fmt.Errorf("%s needs read_id", m.Type)
	case !isRead && w.Ballot == nil:
		return fmt.Errorf("%s needs ballot", m.Type)
	case m.Type == MsgPropose && (m.Server == "" || m.LeaseMs <= 0):
		return fmt.Errorf("propose needs server and lease_ms > 0")
	case m.Type == MsgRelease && m.Server == "":
		return fmt.Errorf("release needs server")
	case !m.Type.isRequest() && m.Type != MsgReadResp && w.OK == nil:
		return fmt.Errorf("%s needs ok", m.Type)
	}
	return nil
}
