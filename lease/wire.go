package lease

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Ops maps the client request types to operations.
var Ops = map[string]Op{"lease_grant": OpGrant, "lease_renew": OpRenew, "lease_check": OpCheck, "lease_release": OpRelease,
	"master_start": OpMasterStart, "master_stop": OpMasterStop, "master_status": OpMasterStatus}

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
	if op >= OpMasterStart {
		return r, nil // no fields
	}
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
	if op == OpRelease {
		if r.Token, err = tokenField(typ, fields); err != nil {
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
	if strings.ContainsRune(s, '\uFFFD') {
		return "", malformed("%s: %s must be valid UTF-8 without U+FFFD: invalid bytes and lone surrogates (\\ud800) "+
			"decode to U+FFFD, so two different names would become one", typ, name)
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

// tokenField reads lease_release's token: a whole number in 1..2^53.
func tokenField(typ string, fields map[string]json.RawMessage) (int64, *Error) {
	raw, ok := fields["token"]
	if !ok || string(raw) == "null" {
		return 0, malformed("%s needs token, the integer from the latest lease_grant_ok or lease_renew_ok of this "+
			"server: a release that names only the server could end a newer lease of that server if it arrived late", typ)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f >= maxWire {
		return 0, malformed("%s: token must be a whole number in 1..2^53 (from a lease_grant_ok or lease_renew_ok), got %s", typ, raw)
	}
	return int64(f), nil
}

// wireMsg is every peer message's body on the wire. Fields a type does not
// use are left out.
type wireMsg struct {
	ChunkHandle string  `json:"chunk_handle,omitempty"`
	Master      bool    `json:"master,omitempty"`
	Ballot      *Ballot `json:"ballot,omitempty"`
	Server      string  `json:"server,omitempty"`
	LeaseMs     int64   `json:"lease_ms,omitempty"`
	Fast        bool    `json:"fast,omitempty"`
	Token       int64   `json:"token,omitempty"`
	ReqID       *uint64 `json:"req_id,omitempty"`
	Nonce       uint64  `json:"nonce,omitempty"` // never 0 where a type carries it
	OK          *bool   `json:"ok,omitempty"`
	Promised    *Ballot `json:"promised,omitempty"`
	Lease       *Record `json:"lease,omitempty"`
	Counter     *uint64 `json:"counter,omitempty"`
	Recovering  bool    `json:"recovering,omitempty"`
	BootingMs   *int64  `json:"booting_ms,omitempty"`
	Core        int     `json:"core,omitempty"`
	Cores       int     `json:"cores,omitempty"`
}

// usesBallot reports whether a type carries a ballot; the others carry a
// request id.
func (t MsgType) usesBallot() bool {
	switch t {
	case MsgPrepare, MsgPrepareResp, MsgPropose, MsgProposeResp, MsgCancel, MsgCancelResp:
		return true
	}
	return false
}

// Body returns what the protocol library marshals as the message body
// (without type and msg_id).
func (m Msg) Body() any {
	w := wireMsg{ChunkHandle: m.Chunk, Master: m.Chunk == masterChunk && m.Type != MsgSync && m.Type != MsgSyncResp, Server: m.Server, LeaseMs: m.LeaseMs, Fast: m.Fast, Token: m.Token,
		Lease: m.Lease, Recovering: m.Recovering}
	if m.Type.usesBallot() || m.Type == MsgBooting && !m.Ballot.IsZero() {
		b := m.Ballot
		w.Ballot = &b
	} else {
		id := m.ReqID
		w.ReqID, w.Nonce = &id, m.Nonce
	}
	switch m.Type {
	case MsgPrepareResp, MsgProposeResp, MsgReleaseResp, MsgCancelResp:
		ok, p := m.OK, m.Promised
		w.OK, w.Promised = &ok, &p
	case MsgReadResp:
		p := m.Promised
		w.Promised = &p
	case MsgSyncResp:
		c := m.Counter
		w.Counter, w.Core, w.Cores = &c, m.Core, m.Cores
	case MsgBooting:
		left := m.BootingMs
		w.BootingMs = &left
	}
	return w
}

// DecodeMsg parses a peer message body of type typ sent by from to to. It
// rejects a body missing a field the type needs, or carrying a number
// beyond 2^53 (a ballot counter beyond 2^52), so the core never acts on a
// half-understood message.
func DecodeMsg(typ, from, to string, body []byte) (Msg, error) {
	t := MsgType(typ)
	switch t {
	case MsgPrepare, MsgPrepareResp, MsgPropose, MsgProposeResp, MsgRead, MsgReadResp,
		MsgRelease, MsgReleaseResp, MsgSync, MsgSyncResp, MsgCancel, MsgCancelResp, MsgBooting:
	default:
		return Msg{}, fmt.Errorf("%q is not a peer message type", typ)
	}
	var w wireMsg
	if err := json.Unmarshal(body, &w); err != nil {
		return Msg{}, fmt.Errorf("%s body: %v", typ, err)
	}
	m := Msg{Type: t, From: from, To: to, Chunk: w.ChunkHandle, Server: w.Server, LeaseMs: w.LeaseMs,
		Fast: w.Fast, Token: w.Token, Lease: w.Lease, Recovering: w.Recovering, Core: w.Core, Cores: w.Cores}
	if w.Ballot != nil {
		m.Ballot = *w.Ballot
	}
	if w.ReqID != nil {
		m.ReqID, m.Nonce = *w.ReqID, w.Nonce
	}
	if w.OK != nil {
		m.OK = *w.OK
	}
	if w.Promised != nil {
		m.Promised = *w.Promised
	}
	if w.Counter != nil {
		m.Counter = *w.Counter
	}
	if w.BootingMs != nil {
		m.BootingMs = *w.BootingMs
	}
	return m, checkMsg(m, w)
}

func checkMsg(m Msg, w wireMsg) error {
	switch {
	case m.Chunk == "" && !w.Master && m.Type != MsgSync && m.Type != MsgSyncResp:
		return fmt.Errorf("%s needs chunk_handle (or master: true)", m.Type)
	case m.Type == MsgBooting && (w.BootingMs == nil || m.BootingMs < 0 || (w.Ballot == nil) == (w.ReqID == nil)):
		return fmt.Errorf("booting needs booting_ms >= 0 and either ballot or req_id")
	case m.Type != MsgBooting && m.Type.usesBallot() && w.Ballot == nil:
		return fmt.Errorf("%s needs ballot", m.Type)
	case m.Type != MsgBooting && !m.Type.usesBallot() && w.ReqID == nil:
		return fmt.Errorf("%s needs req_id", m.Type)
	case w.ReqID != nil && m.Nonce == 0:
		return fmt.Errorf("%s needs nonce (the asking incarnation's, echoed) with its req_id", m.Type)
	case (m.Type == MsgPrepare || m.Type == MsgPropose || m.Type == MsgRelease) && m.Server == "":
		return fmt.Errorf("%s needs server", m.Type)
	case len(m.Chunk) > MaxChunkHandleBytes || len(m.Server) > MaxServerBytes || m.Lease != nil && len(m.Lease.Server) > MaxServerBytes:
		return fmt.Errorf("%s names a chunk_handle over %d bytes or a server over %d bytes, which no node sends",
			m.Type, MaxChunkHandleBytes, MaxServerBytes)
	case m.Type == MsgPropose && m.LeaseMs <= 0:
		return fmt.Errorf("propose needs lease_ms > 0")
	case m.Type == MsgRelease && m.Token <= 0:
		return fmt.Errorf("release needs token > 0")
	case (m.Type == MsgPrepareResp || m.Type == MsgProposeResp || m.Type == MsgReleaseResp || m.Type == MsgCancelResp) && w.OK == nil:
		return fmt.Errorf("%s needs ok", m.Type)
	case m.Type == MsgSyncResp && w.Counter == nil:
		return fmt.Errorf("sync_ok needs counter")
	case (m.Core != 0 || m.Cores != 0) && (m.Type != MsgSyncResp || m.Cores < 2 || m.Cores > MaxCores || m.Core < 0 || m.Core >= m.Cores):
		return fmt.Errorf("%s names core %d of %d; only sync_ok names a core, of 2..%d", m.Type, m.Core, m.Cores, MaxCores)
	}
	return checkWireNumbers(m)
}

// checkWireNumbers refuses numbers a JSON reader that uses doubles could
// not read exactly; the core never sends them, so they mark a broken peer.
func checkWireNumbers(m Msg) error {
	big := func(v uint64) bool { return v >= maxWire }
	switch {
	case big(m.ReqID), big(m.Nonce), m.Ballot.Incarnation < 0 || m.Ballot.Incarnation >= maxWire, m.Token < 0 || m.Token >= maxWire,
		m.BootingMs >= maxWire:
		return fmt.Errorf("%s carries a number beyond 2^53", m.Type)
	case m.Ballot.Counter >= maxCounter || m.Promised.Counter >= maxCounter || m.Counter >= maxCounter:
		return fmt.Errorf("%s carries a ballot counter of 2^52 or more, which no node issues before 2131 (counters follow the wall clock "+
			"in 100 µs units since 2020); refused so that it cannot leave no ballot above it", m.Type)
	}
	return nil
}
