package lease

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"chunklease/history"
	"chunklease/internal/jsonstr"
	"chunklease/workloads"
)

// LeaseValue is the value of a lease op in the history, decoded: the
// request's fields (chunk, server, lease_ms, a release's token) and, on an
// ok completion, the reply's. A nil pointer is a field the op does not
// carry; Primary is also nil for a check that answered primary null.
type LeaseValue struct {
	Chunk          string  `json:"chunk"`
	Server         string  `json:"server"`
	LeaseMs        *int64  `json:"lease_ms"`
	Primary        *string `json:"primary"`
	ExpiresInMs    *int64  `json:"expires_in_ms"`
	NewExpiresInMs *int64  `json:"new_expires_in_ms"`
	RemainingMs    *int64  `json:"remaining_ms"`
	Expired        *bool   `json:"expired"`
	// Token is the fencing token: on an ok grant naming its own server and
	// an ok renew, the one the reply carried (nil when it carried none: the
	// checker judges that); on a release, the one the release sent.
	Token *int64 `json:"token"`
}

// maxToken bounds tokens: 0 < token < 2^53, so that clients that parse JSON
// numbers as doubles read them exactly (the contract).
const maxToken = 1 << 53

// validToken reports whether t is a token the contract allows.
func validToken(t int64) bool { return t > 0 && t < maxToken }

// leaseCall is one lease op in the generator's terms.
type leaseCall struct {
	f       string
	chunk   string
	server  string // "" for check
	leaseMs int64  // grant and renew only
	token   int64  // release only; 0 sends none (the server never got one)
	// renewal marks a grant the holder sends at its half-life in place of a
	// renew: its ok reply extends the holding instead of starting one.
	renewal bool
}

// invocation renders the call as the history's invoke.
func (c leaseCall) invocation() workloads.Invocation {
	return workloads.Invocation{F: c.f, Value: c.appendValue(make([]byte, 0, 64), true)}
}

// appendValue appends the invoke value: {"chunk":..,"server":..,"lease_ms":..}
// with the fields the op carries, closed with '}' when closed is true (an
// ok completion appends the reply's fields before closing it).
func (c leaseCall) appendValue(b []byte, closed bool) []byte {
	b = append(b, `{"chunk":`...)
	b = jsonstr.Append(b, c.chunk)
	b = c.appendOpFields(b)
	if closed {
		b = append(b, '}')
	}
	return b
}

// appendOpFields appends the fields after the chunk that the op carries:
// server (all but check), lease_ms (grant and renew) and token (a release
// that has one), the same in the history value and on the wire.
func (c leaseCall) appendOpFields(b []byte) []byte {
	if c.f != FCheck {
		b = append(b, `,"server":`...)
		b = jsonstr.Append(b, c.server)
	}
	if c.f == FGrant || c.f == FRenew {
		b = append(b, `,"lease_ms":`...)
		b = strconv.AppendInt(b, c.leaseMs, 10)
	}
	if c.f == FRelease && c.token != 0 {
		b = appendToken(b, c.token)
	}
	return b
}

// appendToken appends the field ,"token":t.
func appendToken(b []byte, t int64) []byte {
	return strconv.AppendInt(append(b, `,"token":`...), t, 10)
}

// request renders the Maelstrom request body of the call.
func (c leaseCall) request() json.RawMessage {
	b := make([]byte, 0, 96)
	b = append(b, `{"type":"lease_`...)
	b = append(b, c.f...)
	b = append(b, `","chunk_handle":`...)
	b = jsonstr.Append(b, c.chunk)
	b = c.appendOpFields(b)
	return append(b, '}')
}

// decodeCall reads an invocation back into a call.
func decodeCall(inv workloads.Invocation) (leaseCall, error) {
	v, err := decodeLeaseValue(inv.Value)
	if err != nil {
		return leaseCall{}, fmt.Errorf("lease %s invocation value %s: %w", inv.F, inv.Value, err)
	}
	c := leaseCall{f: inv.F, chunk: v.Chunk, server: v.Server}
	if v.LeaseMs != nil {
		c.leaseMs = *v.LeaseMs
	}
	if v.Token != nil && inv.F == FRelease {
		c.token = *v.Token
	}
	switch inv.F {
	case FGrant, FRenew, FRelease, FCheck:
	default:
		return c, fmt.Errorf("lease workload has no f %q", inv.F)
	}
	if c.chunk == "" || (inv.F != FCheck && c.server == "") {
		return c, fmt.Errorf("lease %s invocation value %s lacks chunk or server", inv.F, inv.Value)
	}
	return c, nil
}

// Request renders an invocation as its Maelstrom request body. It is
// normally called right after Next, so the call is looked up among the
// ops in flight before the value is decoded. An invocation this workload
// did not produce renders as a body the node answers with an error.
func (l *Lease) Request(inv workloads.Invocation) json.RawMessage {
	if c, ok := l.inflightCall(l.lastWorker, inv); ok {
		return c.request()
	}
	for w := range l.inflight {
		if c, ok := l.inflightCall(w, inv); ok {
			return c.request()
		}
	}
	c, err := decodeCall(inv)
	if err != nil {
		b := append([]byte(`{"type":`), jsonstr.Append(nil, "lease_"+inv.F)...)
		return append(b, '}')
	}
	return c.request()
}

// inflightCall returns worker's in-flight call when inv is that call.
func (l *Lease) inflightCall(worker int, inv workloads.Invocation) (leaseCall, bool) {
	if worker < 0 || worker >= len(l.inflight) {
		return leaseCall{}, false
	}
	w := &l.inflight[worker]
	if !w.active || w.call.f != inv.F || !bytes.Equal(w.value, inv.Value) {
		return leaseCall{}, false
	}
	return w.call, true
}

// leaseReply holds a reply's fields raw, so that types can be checked
// exactly (an integer field must be a JSON integer). Extra keys are allowed.
type leaseReply struct {
	Type           json.RawMessage `json:"type"`
	ChunkHandle    json.RawMessage `json:"chunk_handle"`
	Primary        json.RawMessage `json:"primary"`
	ExpiresInMs    json.RawMessage `json:"expires_in_ms"`
	NewExpiresInMs json.RawMessage `json:"new_expires_in_ms"`
	RemainingMs    json.RawMessage `json:"remaining_ms"`
	Expired        json.RawMessage `json:"expired"`
	Token          json.RawMessage `json:"token"`
}

// leaseOutcome is a completion plus what the generator learns from it.
type leaseOutcome struct {
	c           workloads.Completion
	primary     string // grant ok
	expiresInMs int64  // grant ok: expires_in_ms; renew ok: new_expires_in_ms
	token       int64  // grant ok naming the requester, renew ok: the token; 0 when none came
}

// Complete validates the node's reply and lets the generator learn from
// it. A timeout is info, except for check (a read: idempotent), which
// fails; error replies map by code (check errors always fail); a reply
// that breaks its schema is info naming the problem. The worker is free
// afterwards whatever the reply.
func (l *Lease) Complete(now time.Duration, worker int, inv workloads.Invocation, reply json.RawMessage) workloads.Completion {
	c, own := l.inflightCall(worker, inv)
	rec, _ := l.forget(worker)
	if !own {
		var err error
		if c, err = decodeCall(inv); err != nil {
			return workloads.Completion{Type: history.Info, Value: inv.Value, Error: "workload: " + err.Error()}
		}
	}
	out := completeLease(inv, c, reply)
	if own {
		l.learn(now, rec, out)
	}
	return out.c
}

// completeLease maps a reply to the completion of call c.
func completeLease(inv workloads.Invocation, c leaseCall, reply json.RawMessage) leaseOutcome {
	if reply == nil {
		typ, text := workloads.ClassifyTimeout(c.f == FCheck)
		return leaseOutcome{c: workloads.Completion{Type: typ, Value: inv.Value, Error: text}}
	}
	r, err := decodeLeaseReply(reply)
	if err != nil {
		return leaseOutcome{c: workloads.MalformedReply(inv, fmt.Sprintf("lease_%s_ok: %v", c.f, err))}
	}
	typ, isString := workloads.RawString(r.Type)
	if !isString {
		return leaseOutcome{c: workloads.MalformedReply(inv, fmt.Sprintf("type is %s, want a string", workloads.OrMissing(r.Type)))}
	}
	if typ == "error" {
		t, text := workloads.ClassifyError(reply, c.f == FCheck)
		return leaseOutcome{c: workloads.Completion{Type: t, Value: inv.Value, Error: text}}
	}
	if want := "lease_" + c.f + "_ok"; typ != want {
		return leaseOutcome{c: workloads.MalformedReply(inv, fmt.Sprintf("type is %q, want %q", typ, want))}
	}
	var out leaseOutcome
	var problem string
	switch c.f {
	case FGrant:
		out, problem = grantOK(c, r)
	case FRenew:
		out, problem = renewOK(c, r)
	case FCheck:
		out, problem = checkOK(c, r)
	default:
		out, problem = releaseOK(c, r)
	}
	if problem != "" {
		return leaseOutcome{c: workloads.MalformedReply(inv, "lease_"+c.f+"_ok: "+problem)}
	}
	out.c.Type = history.OK
	return out
}

func grantOK(c leaseCall, r leaseReply) (leaseOutcome, string) {
	if p := sameChunk(c, r.ChunkHandle); p != "" {
		return leaseOutcome{}, p
	}
	primary, p := wantString("primary", r.Primary)
	if p == "" && primary == "" {
		p = "primary is empty"
	}
	expires, p2 := wantMs("expires_in_ms", r.ExpiresInMs)
	var token int64
	if p == "" && primary == c.server {
		// The token names the lease just granted; a grant that names another
		// primary may carry the holder's token, which is not this op's.
		token, p2 = firstToken(p2, r.Token)
	}
	if p = firstProblem(p, p2); p != "" {
		return leaseOutcome{}, p
	}
	b := append(c.appendValue(make([]byte, 0, 128), false), `,"primary":`...)
	b = jsonstr.Append(b, primary)
	b = strconv.AppendInt(append(b, `,"expires_in_ms":`...), expires, 10)
	if token != 0 {
		b = appendToken(b, token)
	}
	return leaseOutcome{c: workloads.Completion{Value: append(b, '}')}, primary: primary, expiresInMs: expires, token: token}, ""
}

func renewOK(c leaseCall, r leaseReply) (leaseOutcome, string) {
	expires, p := wantMs("new_expires_in_ms", r.NewExpiresInMs)
	token, p := firstToken(p, r.Token)
	if p != "" {
		return leaseOutcome{}, p
	}
	b := append(c.appendValue(make([]byte, 0, 128), false), `,"new_expires_in_ms":`...)
	b = strconv.AppendInt(b, expires, 10)
	if token != 0 {
		b = appendToken(b, token)
	}
	return leaseOutcome{c: workloads.Completion{Value: append(b, '}')}, expiresInMs: expires, token: token}, ""
}

// firstToken reads an optional token unless an earlier problem stands. A
// missing token is recorded as missing (0), not refused here: the checker
// judges it (token-missing), so the history shows what the node sent. A
// token of the wrong type or outside 0 < token < 2^53 breaks the schema.
func firstToken(problem string, raw json.RawMessage) (int64, string) {
	if problem != "" || raw == nil {
		return 0, problem
	}
	t, ok := workloads.JSONInt(raw)
	if !ok || !validToken(t) {
		return 0, fmt.Sprintf("token is %s, want an integer, 0 < token < 2^53", raw)
	}
	return t, ""
}

func checkOK(c leaseCall, r leaseReply) (leaseOutcome, string) {
	var primary *string
	var p string
	if r.Primary == nil {
		p = "missing primary (a string, or null when no lease was ever seen)"
	} else if string(r.Primary) != "null" {
		s, sp := wantString("primary", r.Primary)
		primary, p = &s, sp
	}
	var remaining int64
	var ok bool
	if remaining, ok = workloads.JSONInt(r.RemainingMs); !ok {
		p = firstProblem(p, fmt.Sprintf("remaining_ms is %s, want an integer", workloads.OrMissing(r.RemainingMs)))
	}
	var expired bool
	if err := json.Unmarshal(r.Expired, &expired); err != nil || r.Expired == nil || string(r.Expired) == "null" {
		p = firstProblem(p, fmt.Sprintf("expired is %s, want true or false", workloads.OrMissing(r.Expired)))
	}
	if p != "" {
		return leaseOutcome{}, p
	}
	b := append(c.appendValue(make([]byte, 0, 96), false), `,"primary":`...)
	if primary == nil {
		b = append(b, "null"...)
	} else {
		b = jsonstr.Append(b, *primary)
	}
	b = strconv.AppendInt(append(b, `,"remaining_ms":`...), remaining, 10)
	b = append(strconv.AppendBool(append(b, `,"expired":`...), expired), '}')
	return leaseOutcome{c: workloads.Completion{Value: b}}, ""
}

func releaseOK(c leaseCall, r leaseReply) (leaseOutcome, string) {
	if p := sameChunk(c, r.ChunkHandle); p != "" {
		return leaseOutcome{}, p
	}
	return leaseOutcome{c: workloads.Completion{Value: c.appendValue(make([]byte, 0, 64), true)}}, ""
}

// sameChunk checks that a reply's chunk_handle is the requested one.
func sameChunk(c leaseCall, raw json.RawMessage) string {
	got, p := wantString("chunk_handle", raw)
	if p == "" && got != c.chunk {
		p = fmt.Sprintf("chunk_handle is %q, want %q", got, c.chunk)
	}
	return p
}

func wantString(name string, raw json.RawMessage) (string, string) {
	s, ok := workloads.RawString(raw)
	if !ok {
		return "", fmt.Sprintf("%s is %s, want a string", name, workloads.OrMissing(raw))
	}
	return s, ""
}

// wantMs reads a duration in whole milliseconds: a JSON integer >= 0.
func wantMs(name string, raw json.RawMessage) (int64, string) {
	n, ok := workloads.JSONInt(raw)
	if !ok || n < 0 {
		return 0, fmt.Sprintf("%s is %s, want an integer >= 0", name, workloads.OrMissing(raw))
	}
	return n, ""
}

func firstProblem(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
