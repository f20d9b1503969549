package lease

import (
	"testing"

	"chunklease/history"
	"chunklease/workloads/workloadtest"
)

// The lease tests build their histories with workloadtest.LeaseHistory,
// under the short names they were written with.

type hb struct{ *workloadtest.LeaseHistory }

func newHB(t *testing.T) *hb { return &hb{workloadtest.NewLeaseHistory(t)} }

type (
	leaseAskValue = workloadtest.LeaseAsk
	grantOKValue  = workloadtest.GrantOK
	renewOKValue  = workloadtest.RenewOK
	checkOKValue  = workloadtest.CheckOK
	releaseValue  = workloadtest.ReleaseAsk
)

var (
	ms          = workloadtest.Ms
	tok         = workloadtest.Tok
	ask         = workloadtest.Ask
	inTimeOrder = workloadtest.InTimeOrder
)

func (b *hb) pair(proc int, f string, inv, done float64, typ string, invValue, doneValue any, node string) {
	b.Pair(proc, f, inv, done, typ, invValue, doneValue, node)
}

func (b *hb) grant(proc int, inv, done float64, chunk, server, primary string, expiresMs int64) int64 {
	return b.Grant(proc, inv, done, chunk, server, primary, expiresMs)
}

func (b *hb) grantTok(proc int, inv, done float64, chunk, server string, expiresMs int64, token *int64) {
	b.GrantTok(proc, inv, done, chunk, server, expiresMs, token)
}

func (b *hb) grantOutcome(proc int, inv, done float64, chunk, server, typ string) {
	b.GrantOutcome(proc, inv, done, chunk, server, typ)
}

func (b *hb) renew(proc int, inv, done float64, chunk, server string, newExpiresMs int64, node string) int64 {
	return b.Renew(proc, inv, done, chunk, server, newExpiresMs, node)
}

func (b *hb) renewTok(proc int, inv, done float64, chunk, server string, newExpiresMs int64, node string, token *int64) {
	b.RenewTok(proc, inv, done, chunk, server, newExpiresMs, node, token)
}

func (b *hb) renewOutcome(proc int, inv, done float64, chunk, server, typ string) {
	b.RenewOutcome(proc, inv, done, chunk, server, typ)
}

func (b *hb) check(proc int, inv, done float64, chunk, primary string, expired bool) {
	b.Check(proc, inv, done, chunk, primary, expired)
}

func (b *hb) release(proc int, inv, done float64, chunk, server, typ string) {
	b.Release(proc, inv, done, chunk, server, typ)
}

func (b *hb) releaseTok(proc int, inv, done float64, chunk, server string, token int64, typ string) {
	b.ReleaseTok(proc, inv, done, chunk, server, token, typ)
}

func (b *hb) nemesis(f string, inv, done float64) { b.Nemesis(f, inv, done) }

func (b *hb) history() []history.Op { return b.Ops() }
