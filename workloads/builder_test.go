package workloads

import (
	"encoding/json"
	"slices"
	"testing"

	"chunklease/history"
)

// The history value shapes, as structs: the builder writes hand-made
// histories with them, and they are the oracle for the workload's own
// appending encoders.
type (
	leaseAskValue struct { // grant and renew invokes
		Chunk   string `json:"chunk"`
		Server  string `json:"server"`
		LeaseMs int64  `json:"lease_ms"`
	}
	grantOKValue struct {
		leaseAskValue
		Primary     string `json:"primary"`
		ExpiresInMs int64  `json:"expires_in_ms"`
		Token       *int64 `json:"token,omitempty"` // written only when the reply carried one
	}
	renewOKValue struct {
		leaseAskValue
		NewExpiresInMs int64  `json:"new_expires_in_ms"`
		Token          *int64 `json:"token,omitempty"`
	}
	checkValue struct {
		Chunk string `json:"chunk"`
	}
	checkOKValue struct {
		Chunk       string  `json:"chunk"`
		Primary     *string `json:"primary"`
		RemainingMs int64   `json:"remaining_ms"`
		Expired     bool    `json:"expired"`
	}
	releaseValue struct { // release invokes and ok completions
		Chunk  string `json:"chunk"`
		Server string `json:"server"`
		Token  *int64 `json:"token,omitempty"` // absent only when the server never got one
	}
)

// tok is a token as the value types hold it.
func tok(t int64) *int64 { return &t }

// hb builds hand-made histories with times in milliseconds. Ops are
// sorted by time (stably, so an invoke added before its completion stays
// first) and indexed when history() is called. grant and renew hand out
// tokens 1, 2, 3, ... in the order they are called (valid fencing when
// called in invoke order); grantTok and renewTok set one (nil: none).
// release sends the last token of its server and chunk, as the generator
// does; releaseTok sends any.
type hb struct {
	t         *testing.T
	ops       []history.Op
	lastToken int64
	tokens    map[string]int64 // chunk/server -> the last token it got
}

func newHB(t *testing.T) *hb { return &hb{t: t, tokens: map[string]int64{}} }

func ms(v float64) int64 { return int64(v * 1e6) }

func (b *hb) raw(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		b.t.Fatal(err)
	}
	return raw
}

// pair adds an invoke at inv and a completion of type typ at done; typ ""
// leaves the op open.
func (b *hb) pair(proc int, f string, inv, done float64, typ string, invValue, doneValue any, node string) {
	p := history.Process{ID: proc}
	b.ops = append(b.ops, history.Op{Time: ms(inv), Process: p, Type: history.Invoke, F: f, Node: node, Value: b.raw(invValue)})
	if typ == "" {
		return
	}
	op := history.Op{Time: ms(done), Process: p, Type: typ, F: f, Node: node, Value: b.raw(doneValue)}
	if typ != history.OK {
		op.Value, op.Error = b.raw(invValue), "temporarily-unavailable: test"
	}
	b.ops = append(b.ops, op)
}

func ask(chunk, server string) leaseAskValue { return leaseAskValue{chunk, server, 1000} }

// askFor is ask for a lease of at least toldMs, so a holding told toldMs
// asked for no less (expires-out-of-range).
func askFor(chunk, server string, toldMs int64) leaseAskValue {
	return leaseAskValue{chunk, server, max(1000, toldMs)}
}

// grant adds an ok grant answered with primary and expires_in_ms; when
// primary is server it carries the next token, which it returns.
func (b *hb) grant(proc int, inv, done float64, chunk, server, primary string, expiresMs int64) int64 {
	if primary != server {
		b.pair(proc, FGrant, inv, done, history.OK, ask(chunk, server), grantOKValue{ask(chunk, server), primary, expiresMs, nil}, "n1")
		return 0
	}
	b.lastToken++
	b.grantTok(proc, inv, done, chunk, server, expiresMs, tok(b.lastToken))
	return b.lastToken
}

// grantTok adds an ok grant naming server primary, carrying token (nil: none).
func (b *hb) grantTok(proc int, inv, done float64, chunk, server string, expiresMs int64, token *int64) {
	b.got(chunk, server, token)
	a := askFor(chunk, server, expiresMs)
	b.pair(proc, FGrant, inv, done, history.OK, a, grantOKValue{a, server, expiresMs, token}, "n1")
}

// grantOutcome adds a grant that failed or is unknown (typ fail/info/"").
func (b *hb) grantOutcome(proc int, inv, done float64, chunk, server, typ string) {
	b.pair(proc, FGrant, inv, done, typ, ask(chunk, server), nil, "n1")
}

// renew adds an ok renew through node carrying the next token, which it
// returns.
func (b *hb) renew(proc int, inv, done float64, chunk, server string, newExpiresMs int64, node string) int64 {
	b.lastToken++
	b.renewTok(proc, inv, done, chunk, server, newExpiresMs, node, tok(b.lastToken))
	return b.lastToken
}

// renewTok adds an ok renew through node carrying token (nil: none).
func (b *hb) renewTok(proc int, inv, done float64, chunk, server string, newExpiresMs int64, node string, token *int64) {
	b.got(chunk, server, token)
	a := askFor(chunk, server, newExpiresMs)
	b.pair(proc, FRenew, inv, done, history.OK, a, renewOKValue{a, newExpiresMs, token}, node)
}

func (b *hb) renewOutcome(proc int, inv, done float64, chunk, server, typ string) {
	b.pair(proc, FRenew, inv, done, typ, ask(chunk, server), nil, "n2")
}

// check adds an ok check; primary "" is written as null.
func (b *hb) check(proc int, inv, done float64, chunk, primary string, expired bool) {
	var p *string
	if primary != "" {
		p = &primary
	}
	b.pair(proc, FCheck, inv, done, history.OK, checkValue{chunk}, checkOKValue{chunk, p, 0, expired}, "n3")
}

// got remembers the last token a server got for a chunk.
func (b *hb) got(chunk, server string, token *int64) {
	if token != nil {
		b.tokens[chunk+"/"+server] = *token
	}
}

// release adds a release sending the last token server got for chunk
// (none if it got none yet) with completion typ (ok, fail, info or "" for
// none).
func (b *hb) release(proc int, inv, done float64, chunk, server, typ string) {
	b.releaseTok(proc, inv, done, chunk, server, b.tokens[chunk+"/"+server], typ)
}

// releaseTok adds a release sending token (0: none).
func (b *hb) releaseTok(proc int, inv, done float64, chunk, server string, token int64, typ string) {
	v := releaseValue{chunk, server, nil}
	if token != 0 {
		v.Token = tok(token)
	}
	b.pair(proc, FRelease, inv, done, typ, v, v, "n1")
}

// nemesis adds a nemesis op pair (invoke, then completion) at times.
func (b *hb) nemesis(f string, inv, done float64) {
	b.ops = append(b.ops,
		history.Op{Time: ms(inv), Process: history.NemesisProcess, Type: history.Invoke, F: f, Value: json.RawMessage(`"majority"`)},
		history.Op{Time: ms(done), Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(`null`)})
}

func (b *hb) history() []history.Op {
	return inTimeOrder(slices.Clone(b.ops))
}
