package workloadtest

import (
	"cmp"
	"encoding/json"
	"slices"
	"testing"

	"chunklease/history"
	"chunklease/workloads"
)

// The lease workload's history value shapes, as structs: the builder
// writes hand-made histories with them, and they are the oracle for the
// workload's own appending encoders.
type (
	LeaseAsk struct { // grant and renew invokes
		Chunk   string `json:"chunk"`
		Server  string `json:"server"`
		LeaseMs int64  `json:"lease_ms"`
	}
	GrantOK struct {
		LeaseAsk
		Primary     string `json:"primary"`
		ExpiresInMs int64  `json:"expires_in_ms"`
		Token       *int64 `json:"token,omitempty"` // written only when the reply carried one
	}
	RenewOK struct {
		LeaseAsk
		NewExpiresInMs int64  `json:"new_expires_in_ms"`
		Token          *int64 `json:"token,omitempty"`
	}
	CheckAsk struct {
		Chunk string `json:"chunk"`
	}
	CheckOK struct {
		Chunk       string  `json:"chunk"`
		Primary     *string `json:"primary"`
		RemainingMs int64   `json:"remaining_ms"`
		Expired     bool    `json:"expired"`
	}
	ReleaseAsk struct { // release invokes and ok completions
		Chunk  string `json:"chunk"`
		Server string `json:"server"`
		Token  *int64 `json:"token,omitempty"` // absent only when the server never got one
	}
)

// Tok is a token as the value types hold it.
func Tok(t int64) *int64 { return &t }

// LeaseHistory builds hand-made lease histories with times in
// milliseconds. Ops are sorted by time (stably, so an invoke added before
// its completion stays first) and indexed when Ops is called. Grant and
// Renew hand out tokens 1, 2, 3, ... in the order they are called (valid
// fencing when called in invoke order); GrantTok and RenewTok set one
// (nil: none). Release sends the last token of its server and chunk, as
// the generator does; ReleaseTok sends any.
type LeaseHistory struct {
	t         testing.TB
	ops       []history.Op
	lastToken int64
	tokens    map[string]int64 // chunk/server -> the last token it got
}

// NewLeaseHistory starts an empty history; t fails on a value that does
// not marshal.
func NewLeaseHistory(t testing.TB) *LeaseHistory {
	return &LeaseHistory{t: t, tokens: map[string]int64{}}
}

// Ms is v milliseconds in nanoseconds.
func Ms(v float64) int64 { return int64(v * 1e6) }

func (b *LeaseHistory) raw(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		b.t.Fatal(err)
	}
	return raw
}

// Pair adds an invoke at inv and a completion of type typ at done; typ ""
// leaves the op open.
func (b *LeaseHistory) Pair(proc int, f string, inv, done float64, typ string, invValue, doneValue any, node string) {
	p := history.Process{ID: proc}
	b.ops = append(b.ops, history.Op{Time: Ms(inv), Process: p, Type: history.Invoke, F: f, Node: node, Value: b.raw(invValue)})
	if typ == "" {
		return
	}
	op := history.Op{Time: Ms(done), Process: p, Type: typ, F: f, Node: node, Value: b.raw(doneValue)}
	if typ != history.OK {
		op.Value, op.Error = b.raw(invValue), "temporarily-unavailable: test"
	}
	b.ops = append(b.ops, op)
}

// Ask is a grant or renew of chunk by server for 1000 ms.
func Ask(chunk, server string) LeaseAsk { return LeaseAsk{Chunk: chunk, Server: server, LeaseMs: 1000} }

// AskFor is Ask for a lease of at least toldMs, so a holding told toldMs
// asked for no less (expires-out-of-range).
func AskFor(chunk, server string, toldMs int64) LeaseAsk {
	return LeaseAsk{Chunk: chunk, Server: server, LeaseMs: max(1000, toldMs)}
}

// Grant adds an ok grant answered with primary and expires_in_ms; when
// primary is server it carries the next token, which it returns.
func (b *LeaseHistory) Grant(proc int, inv, done float64, chunk, server, primary string, expiresMs int64) int64 {
	if primary != server {
		b.Pair(proc, "grant", inv, done, history.OK, Ask(chunk, server), GrantOK{LeaseAsk: Ask(chunk, server), Primary: primary, ExpiresInMs: expiresMs}, "n1")
		return 0
	}
	b.lastToken++
	b.GrantTok(proc, inv, done, chunk, server, expiresMs, Tok(b.lastToken))
	return b.lastToken
}

// GrantTok adds an ok grant naming server primary, carrying token (nil: none).
func (b *LeaseHistory) GrantTok(proc int, inv, done float64, chunk, server string, expiresMs int64, token *int64) {
	b.got(chunk, server, token)
	a := AskFor(chunk, server, expiresMs)
	b.Pair(proc, "grant", inv, done, history.OK, a, GrantOK{LeaseAsk: a, Primary: server, ExpiresInMs: expiresMs, Token: token}, "n1")
}

// GrantOutcome adds a grant that failed or is unknown (typ fail/info/"").
func (b *LeaseHistory) GrantOutcome(proc int, inv, done float64, chunk, server, typ string) {
	b.Pair(proc, "grant", inv, done, typ, Ask(chunk, server), nil, "n1")
}

// Renew adds an ok renew through node carrying the next token, which it
// returns.
func (b *LeaseHistory) Renew(proc int, inv, done float64, chunk, server string, newExpiresMs int64, node string) int64 {
	b.lastToken++
	b.RenewTok(proc, inv, done, chunk, server, newExpiresMs, node, Tok(b.lastToken))
	return b.lastToken
}

// RenewTok adds an ok renew through node carrying token (nil: none).
func (b *LeaseHistory) RenewTok(proc int, inv, done float64, chunk, server string, newExpiresMs int64, node string, token *int64) {
	b.got(chunk, server, token)
	a := AskFor(chunk, server, newExpiresMs)
	b.Pair(proc, "renew", inv, done, history.OK, a, RenewOK{LeaseAsk: a, NewExpiresInMs: newExpiresMs, Token: token}, node)
}

// RenewOutcome adds a renew that failed or is unknown (typ fail/info/"").
func (b *LeaseHistory) RenewOutcome(proc int, inv, done float64, chunk, server, typ string) {
	b.Pair(proc, "renew", inv, done, typ, Ask(chunk, server), nil, "n2")
}

// Check adds an ok check; primary "" is written as null.
func (b *LeaseHistory) Check(proc int, inv, done float64, chunk, primary string, expired bool) {
	var p *string
	if primary != "" {
		p = &primary
	}
	b.Pair(proc, "check", inv, done, history.OK, CheckAsk{Chunk: chunk}, CheckOK{Chunk: chunk, Primary: p, Expired: expired}, "n3")
}

// got remembers the last token a server got for a chunk.
func (b *LeaseHistory) got(chunk, server string, token *int64) {
	if token != nil {
		b.tokens[chunk+"/"+server] = *token
	}
}

// Release adds a release sending the last token server got for chunk
// (none if it got none yet) with completion typ (ok, fail, info or "" for
// none).
func (b *LeaseHistory) Release(proc int, inv, done float64, chunk, server, typ string) {
	b.ReleaseTok(proc, inv, done, chunk, server, b.tokens[chunk+"/"+server], typ)
}

// ReleaseTok adds a release sending token (0: none).
func (b *LeaseHistory) ReleaseTok(proc int, inv, done float64, chunk, server string, token int64, typ string) {
	v := ReleaseAsk{Chunk: chunk, Server: server}
	if token != 0 {
		v.Token = Tok(token)
	}
	b.Pair(proc, "release", inv, done, typ, v, v, "n1")
}

// Add appends ops as they are (their times in nanoseconds).
func (b *LeaseHistory) Add(ops ...history.Op) { b.ops = append(b.ops, ops...) }

// Nemesis adds a nemesis op pair (invoke, then completion) at times.
func (b *LeaseHistory) Nemesis(f string, inv, done float64) {
	b.ops = append(b.ops,
		history.Op{Time: Ms(inv), Process: history.NemesisProcess, Type: history.Invoke, F: f, Value: json.RawMessage(`"majority"`)},
		history.Op{Time: Ms(done), Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(`null`)})
}

// Ops is the history: in time order, indexed.
func (b *LeaseHistory) Ops() []history.Op {
	return InTimeOrder(slices.Clone(b.ops))
}

// InTimeOrder sorts ops moved to nanosecond times back into time order
// (stably) and indexes them again, as a recorded history would be.
func InTimeOrder(h []history.Op) []history.Op {
	slices.SortStableFunc(h, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) })
	for i := range h {
		h[i].Index = i
	}
	return h
}

// NemesisStep adds one nemesis step as the harness writes it: an invoke
// with the target and a completion with the affected nodes, both info.
func (b *LeaseHistory) NemesisStep(f string, inv, done float64, target, nodes string) {
	b.ops = append(b.ops,
		history.Op{Time: Ms(inv), Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(target)},
		history.Op{Time: Ms(done), Process: history.NemesisProcess, Type: history.Info, F: f, Value: json.RawMessage(nodes)})
}

// AddFaults adds a partition [100, 300), a kill of n1 [250, 600) (the
// start completes after n1's init), a kill that hit nobody (no fault), and
// a pause of n2 [900, 1000); the run ends with n3 paused from 1200 on.
func AddFaults(b *LeaseHistory) {
	b.NemesisStep(workloads.StartPartition, 99, 100, `"majority"`, `["isolated",{"n1":["n2"],"n2":["n1"]}]`)
	b.NemesisStep(workloads.NemesisKill, 249, 250, `"one"`, `["n1"]`)
	b.NemesisStep(workloads.StopPartition, 300, 300, `null`, `"network-healed"`)
	b.NemesisStep(workloads.NemesisStart, 500, 600, `"all"`, `["n1"]`)
	b.NemesisStep(workloads.NemesisKill, 700, 700, `"minority-third"`, `[]`)
	b.NemesisStep(workloads.NemesisStart, 800, 800, `"all"`, `[]`)
	b.NemesisStep(workloads.NemesisPause, 899, 900, `null`, `["n2"]`)
	b.NemesisStep(workloads.NemesisResume, 1000, 1000, `"all"`, `["n2"]`)
	b.NemesisStep(workloads.NemesisPause, 1200, 1200, `"one"`, `["n3"]`)
}
