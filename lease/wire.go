package lease

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Ops maps the client request types to operations.
var Ops = map[string]Op{"lease_grant": OpGrant, "lease_renew": OpRenew, "lease_check": OpCheck, "lease_release": OpRelease,
	"master_start": OpMasterStart, "master_stop": OpMasterStop, "master_status": OpMasterStatus,
	"member_add": OpMemberAdd, "member_remove": OpMemberRemove, "member_replace": OpMemberReplace, "member_list": OpMemberList}

// DecodeRequest parses the body of a client request of type typ. A body
// the core cannot serve is refused with error 12 and a text that names the
// field and says what was wrong; an unknown type is error 10.
func DecodeRequest(typ string, body []byte) (Request, *Error) {
	op, ok := Ops[typ]
	if !ok {
		return Request{}, &Error{Code: CodeNotSupported, Text: fmt.Sprintf("%q is not a lease request type", typ)}
	}
	if op <= OpRelease {
		if r, ok := decodeFlat(op, body); ok {
			return r, nil
		}
	}
	return decodeFields(typ, op, body)
}

// decodeFields is DecodeRequest through encoding/json: every body, the
// refusals' texts included.
func decodeFields(typ string, op Op, body []byte) (Request, *Error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return Request{}, malformed("%s: the body must be a JSON object", typ)
	}
	r := Request{Op: op}
	if op >= OpMemberAdd {
		return decodeMember(typ, fields, r)
	}
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

// decodeMember reads a membership request: node (the member to add or
// remove; replace: to remove), replacement (replace: the member to add),
// addr (add: the new member's peer address, for shells that need one)
// and force; member_list has no fields.
func decodeMember(typ string, fields map[string]json.RawMessage, r Request) (Request, *Error) {
	if r.Op == OpMemberList {
		return r, nil
	}
	var err *Error
	if r.Member, err = stringField(typ, fields, "node", true); err != nil {
		return r, err
	}
	if r.Op == OpMemberReplace {
		if r.Replacement, err = stringField(typ, fields, "replacement", true); err != nil {
			return r, err
		}
	}
	if r.Addr, err = stringField(typ, fields, "addr", false); err != nil {
		return r, err
	}
	if raw, ok := fields["force"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &r.Force) != nil {
			return r, malformed("%s: force must be true or false, got %s", typ, raw)
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
	// Membership (member.go); left off while the epoch is 0 and nothing
	// changes, so a cluster without membership sends what it always did.
	Epoch    uint64      `json:"epoch,omitempty"`
	Config   *Membership `json:"config,omitempty"`
	Value    *Membership `json:"value,omitempty"`
	Accepted *Ballot     `json:"accepted,omitempty"`
	WaitMs   int64       `json:"wait_ms,omitempty"`
	Learner  bool        `json:"learner,omitempty"`
	Active   bool        `json:"active,omitempty"`
}

// usesBallot reports whether a type carries a ballot; the others carry a
// request id.
func (t MsgType) usesBallot() bool {
	switch t {
	case MsgPrepare, MsgPrepareResp, MsgPropose, MsgProposeResp, MsgCancel, MsgCancelResp,
		MsgChangePrepare, MsgChangePrepareResp, MsgChangePropose, MsgChangeProposeResp:
		return true
	}
	return false
}

// chunkless reports whether a type names no chunk (nor the master lease).
func (t MsgType) chunkless() bool {
	switch t {
	case MsgSync, MsgSyncResp, MsgChangePrepare, MsgChangePrepareResp, MsgChangePropose, MsgChangeProposeResp, MsgConfig, MsgConfigResp:
		return true
	}
	return false
}

// unnumbered reports whether a type carries neither a ballot nor a
// request id: a configuration push and its answer match by epoch.
func (t MsgType) unnumbered() bool { return t == MsgConfig || t == MsgConfigResp }

// Body returns what the protocol library marshals as the message body
// (without type and msg_id).
func (m Msg) Body() any {
	w := wireMsg{ChunkHandle: m.Chunk, Master: m.Chunk == masterChunk && !m.Type.chunkless(), Server: m.Server, LeaseMs: m.LeaseMs, Fast: m.Fast, Token: m.Token,
		Lease: m.Lease, Recovering: m.Recovering,
		Epoch: m.Epoch, Config: m.Conf, Value: m.Value, WaitMs: m.WaitMs, Learner: m.Learner, Active: m.Active}
	if !m.Accepted.IsZero() {
		a := m.Accepted
		w.Accepted = &a
	}
	switch {
	case m.Type.unnumbered():
	case m.Type.usesBallot() || m.Type == MsgBooting && !m.Ballot.IsZero():
		b := m.Ballot
		w.Ballot = &b
	default:
		id := m.ReqID
		w.ReqID, w.Nonce = &id, m.Nonce
	}
	switch m.Type {
	case MsgPrepareResp, MsgProposeResp, MsgReleaseResp, MsgCancelResp, MsgChangePrepareResp, MsgChangeProposeResp:
		ok, p := m.OK, m.Promised
		w.OK, w.Promised = &ok, &p
		if m.Type == MsgChangePrepareResp {
			if m.Counter != 0 {
				c := m.Counter // the high-water mark the next configuration's floor is built from
				w.Counter = &c
			}
			w.Core, w.Cores = m.Core, m.Cores
		}
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
	if !t.known() {
		return Msg{}, fmt.Errorf("%q is not a peer message type", typ)
	}
	var w wireMsg
	if err := json.Unmarshal(body, &w); err != nil {
		return Msg{}, fmt.Errorf("%s body: %v", typ, err)
	}
	m := Msg{Type: t, From: from, To: to, Chunk: w.ChunkHandle, Server: w.Server, LeaseMs: w.LeaseMs,
		Fast: w.Fast, Token: w.Token, Lease: w.Lease, Recovering: w.Recovering, Core: w.Core, Cores: w.Cores,
		Epoch: w.Epoch, Conf: w.Config, Value: w.Value, WaitMs: w.WaitMs, Learner: w.Learner, Active: w.Active}
	if w.Accepted != nil {
		m.Accepted = *w.Accepted
	}
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

// known reports whether t is a peer message type.
func (t MsgType) known() bool {
	switch t {
	case MsgPrepare, MsgPrepareResp, MsgPropose, MsgProposeResp, MsgRead, MsgReadResp,
		MsgRelease, MsgReleaseResp, MsgSync, MsgSyncResp, MsgCancel, MsgCancelResp, MsgBooting,
		MsgChangePrepare, MsgChangePrepareResp, MsgChangePropose, MsgChangeProposeResp, MsgConfig, MsgConfigResp:
		return true
	}
	return false
}

func checkMsg(m Msg, w wireMsg) error {
	if err := checkMembershipFields(m); err != nil {
		return err
	}
	switch {
	case m.Type.unnumbered():
		return checkWireNumbers(m)
	case m.Chunk == "" && !w.Master && !m.Type.chunkless():
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
	case (m.Type == MsgPrepareResp || m.Type == MsgProposeResp || m.Type == MsgReleaseResp || m.Type == MsgCancelResp ||
		m.Type == MsgChangePrepareResp || m.Type == MsgChangeProposeResp) && w.OK == nil:
		return fmt.Errorf("%s needs ok", m.Type)
	case m.Type == MsgSyncResp && w.Counter == nil:
		return fmt.Errorf("sync_ok needs counter")
	case (m.Core != 0 || m.Cores != 0) && (!m.Type.namesCore() || m.Cores < 2 || m.Cores > MaxCores || m.Core < 0 || m.Core >= m.Cores):
		return fmt.Errorf("%s names core %d of %d; only sync_ok and member_prepare_ok name a core, of 2..%d", m.Type, m.Core, m.Cores, MaxCores)
	}
	return checkWireNumbers(m)
}

// checkWireNumbers refuses numbers a JSON reader that uses doubles could
// not read exactly; the core never sends them, so they mark a broken peer.
func checkWireNumbers(m Msg) error {
	big := func(v uint64) bool { return v >= maxWire }
	switch {
	case big(m.ReqID), big(m.Nonce), m.Ballot.Incarnation < 0 || m.Ballot.Incarnation >= maxWire, m.Token < 0 || m.Token >= maxWire,
		m.BootingMs >= maxWire, big(m.Epoch), m.WaitMs < 0 || m.WaitMs >= maxWire,
		m.Accepted.Incarnation < 0 || m.Accepted.Incarnation >= maxWire:
		return fmt.Errorf("%s carries a number beyond 2^53", m.Type)
	case m.Ballot.Counter >= maxCounter || m.Promised.Counter >= maxCounter || m.Counter >= maxCounter || m.Accepted.Counter >= maxCounter:
		return fmt.Errorf("%s carries a ballot counter of 2^52 or more, which no node issues before 2131 (counters follow the wall clock "+
			"in 100 µs units since 2020); refused so that it cannot leave no ballot above it", m.Type)
	}
	return nil
}

// checkMembershipFields refuses a membership message missing what its
// type needs, or a configuration no node sends: too many members, an
// empty or overlong id, a number beyond the wire's range.
func checkMembershipFields(m Msg) error {
	switch {
	case m.Type == MsgConfig && m.Conf == nil:
		return fmt.Errorf("member_config needs config")
	case m.Type == MsgChangePropose && m.Value == nil:
		return fmt.Errorf("member_propose needs value")
	}
	for _, c := range []*Membership{m.Conf, m.Value} {
		if c == nil {
			continue
		}
		if err := checkMembership(*c); err != nil {
			return fmt.Errorf("%s: %v", m.Type, err)
		}
	}
	return nil
}

// checkMembership refuses a configuration no node sends.
func checkMembership(c Membership) error {
	switch {
	case len(c.Members) == 0 || len(c.Members) > maxAcceptors || len(c.Prev) > maxAcceptors:
		return fmt.Errorf("a configuration has 1..%d members, this one %d", maxAcceptors, len(c.Members))
	case c.Epoch >= maxWire || c.Floor >= maxCounter:
		return fmt.Errorf("a configuration's epoch and floor stay below 2^53 and 2^52")
	case len(c.Addrs) > maxAcceptors:
		return fmt.Errorf("a configuration names at most %d addresses", maxAcceptors)
	}
	for _, ids := range [][]string{c.Members, c.Prev} {
		for i, id := range ids {
			if id == "" || len(id) > MaxServerBytes || slices.Contains(ids[:i], id) {
				return fmt.Errorf("a configuration's members are distinct non-empty ids of at most %d bytes", MaxServerBytes)
			}
		}
	}
	for id, addr := range c.Addrs {
		if len(id) > MaxServerBytes || len(addr) > MaxServerBytes {
			return fmt.Errorf("a configuration's addresses are at most %d bytes", MaxServerBytes)
		}
	}
	return nil
}
