package lease

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

func leaseOpts() LeaseOptions {
	return LeaseOptions{Servers: 3, Chunks: 4, LeaseMs: 400, Rate: 50, Workers: 10}
}

func simCfg(workers int, duration time.Duration) workloadtest.Config {
	return workloadtest.Config{Workers: workers, Nodes: 5, Duration: duration, Timeout: 100 * time.Millisecond}
}

// runIdeal simulates the lease workload against a correct service with
// delays, lost replies and definite failures.
func runIdeal(tb testing.TB, opts LeaseOptions, seed int64, duration time.Duration) []history.Op {
	svc := workloadtest.NewIdealLeases(seed)
	svc.LossRate, svc.FailRate = 0.03, 0.05
	return workloadtest.Simulate(tb, NewLease(opts, seed), svc, simCfg(opts.Workers, duration))
}

func TestLeaseGeneratorIsDeterministic(t *testing.T) {
	seed := int64(testseed.Get(t))
	a := workloadtest.HistoryBytes(t, runIdeal(t, leaseOpts(), seed, 5*time.Second))
	b := workloadtest.HistoryBytes(t, runIdeal(t, leaseOpts(), seed, 5*time.Second))
	if a != b {
		t.Fatal("the same seed gave two different histories")
	}
	if c := workloadtest.HistoryBytes(t, runIdeal(t, leaseOpts(), seed+1, 5*time.Second)); c == a {
		t.Error("a different seed gave the same history")
	}
}

// pairKey names the (server, chunk) pair of a grant, renew or release.
func pairKey(t *testing.T, op history.Op) (string, bool) {
	var v LeaseValue
	if err := json.Unmarshal(op.Value, &v); err != nil {
		t.Fatalf("op %d value %s: %v", op.Index, op.Value, err)
	}
	return v.Server + "/" + v.Chunk, op.F != FCheck
}

func TestLeaseGeneratorOneOpInFlightPerPair(t *testing.T) {
	seed := int64(testseed.Get(t))
	ops := runIdeal(t, leaseOpts(), seed, 20*time.Second)
	open := map[string]int{} // pair -> invoke index of its open op
	byProcess := map[history.Process]string{}
	for _, op := range ops {
		key, paired := pairKey(t, op)
		if !paired {
			continue
		}
		if op.Type == history.Invoke {
			if prev, busy := open[key]; busy {
				t.Fatalf("op %d (%s %s) invoked while op %d on the same pair is in flight", op.Index, op.F, key, prev)
			}
			open[key], byProcess[op.Process] = op.Index, key
			continue
		}
		delete(open, byProcess[op.Process])
	}
}

// halfLife is the renewal time the generator must use after an ok grant
// to itself or an ok renew: reply + (invoke + expires - reply)/2.
func halfLife(inv, done history.Op, expiresMs int64) time.Duration {
	end := time.Duration(inv.Time) + time.Duration(expiresMs)*time.Millisecond
	return time.Duration(done.Time) + (end-time.Duration(done.Time))/2
}

func TestLeaseGeneratorRenewsAtHalfLife(t *testing.T) {
	seed := int64(testseed.Get(t))
	opts := leaseOpts()
	opts.Workers, opts.Rate = 64, 20 // a worker is always free, so renewals go out exactly on time
	ops := runIdeal(t, opts, seed, 30*time.Second)
	pairs, _ := history.PairOps(ops)
	type last struct {
		renewAt  time.Duration // half-life of the last ok holding op; -1 if none
		freedAt  time.Duration // completion of the last op on the pair
		believes bool
	}
	state := map[string]*last{}
	var renews, regrants, endReleases int
	for _, p := range pairs { // in invoke order; one op per pair at a time (tested above)
		key, paired := pairKey(t, p.Invoke)
		if !paired || p.Completion == nil {
			continue
		}
		st := state[key]
		if st == nil {
			st = &last{renewAt: -1}
			state[key] = st
		}
		at := time.Duration(p.Invoke.Time)
		want := max(st.renewAt, st.freedAt)
		switch {
		case p.Invoke.F == FRenew:
			renews++
			if !st.believes || at != want {
				t.Fatalf("renew op %d at %v, want at %v (half-life %v, pair free at %v, believes %v)",
					p.Invoke.Index, at, want, st.renewAt, st.freedAt, st.believes)
			}
		case p.Invoke.F == FRelease && st.believes && at == want:
			endReleases++
		case p.Invoke.F == FGrant && st.believes && at == want:
			regrants++ // a re-grant by the holder in place of a renew
		}
		st.freedAt = time.Duration(p.Completion.Time)
		var v LeaseValue
		_ = json.Unmarshal(p.Completion.Value, &v)
		ok := p.Completion.Type == history.OK
		switch {
		case ok && p.Invoke.F == FRenew:
			st.renewAt, st.believes = halfLife(p.Invoke, *p.Completion, *v.NewExpiresInMs), true
		case ok && p.Invoke.F == FGrant && *v.Primary == v.Server:
			st.renewAt, st.believes = halfLife(p.Invoke, *p.Completion, *v.ExpiresInMs), true
		case p.Invoke.F == FGrant && !ok:
			// a failed or unknown grant changes no belief
		default:
			st.believes = false // released, renew failed, or another server is primary
		}
	}
	if renews < 20 || regrants < 5 || endReleases < 5 {
		t.Errorf("only %d renewals, %d re-grants and %d plan-ending releases in 30s", renews, regrants, endReleases)
	}
}

func TestLeaseGeneratorStaysWithinRateInFailStorm(t *testing.T) {
	for _, loss := range []bool{false, true} {
		t.Run(map[bool]string{false: "errors", true: "timeouts"}[loss], func(t *testing.T) {
			seed := int64(testseed.Get(t))
			opts := leaseOpts()
			opts.Workers = 64
			svc := workloadtest.NewIdealLeases(seed)
			svc.StormFrom, svc.StormLoss = 3*time.Second, loss
			ops := workloadtest.Simulate(t, NewLease(opts, seed), svc, simCfg(opts.Workers, 13*time.Second))
			lease := time.Duration(opts.LeaseMs) * time.Millisecond
			invoked, okBefore := 0, 0
			renewsInStorm := map[string]int{} // pair -> renews invoked during the storm
			for _, op := range ops {
				at := time.Duration(op.Time)
				if op.Type == history.OK && at < svc.StormFrom {
					okBefore++
				}
				if op.Type != history.Invoke || at < svc.StormFrom {
					continue
				}
				invoked++
				if op.F != FRenew {
					continue
				}
				key, _ := pairKey(t, op)
				if renewsInStorm[key]++; renewsInStorm[key] > 1 {
					t.Errorf("renew op %d: %s renewed again after a failed renew", op.Index, key)
				}
				if at >= svc.StormFrom+lease {
					t.Errorf("renew op %d at %v: no lease can be believed past %v", op.Index, at, svc.StormFrom+lease)
				}
			}
			// Scheduled ops follow the rate; on top, each pair believed held
			// when the storm began may try one renewal or release.
			stormS := 10.0
			limit := int(1.2*opts.Rate*stormS) + opts.Servers*opts.Chunks
			if invoked > limit || invoked < int(0.8*opts.Rate*stormS) || okBefore == 0 {
				t.Errorf("%d ops invoked in a %.0fs storm at rate %.0f (limit %d); %d ok before it",
					invoked, stormS, opts.Rate, limit, okBefore)
			}
		})
	}
}

func TestLeaseSimulationAgainstIdealServiceIsValid(t *testing.T) {
	seed := int64(testseed.Get(t))
	ops := runIdeal(t, leaseOpts(), seed, 60*time.Second)
	res := CheckLease(ops)
	if !res.Valid {
		t.Fatalf("a correct service was judged invalid: %d violations, first %+v; problems %+v",
			len(res.Violations), res.Violations[:min(len(res.Violations), 3)], res.Problems)
	}
	fo := Failover(res.Holdings)
	var grantsAnsweredOther, releasesOK, renewsOK, infos int
	for _, op := range ops {
		var v LeaseValue
		_ = json.Unmarshal(op.Value, &v)
		if op.F == FRelease && (v.Token == nil || !validToken(*v.Token)) {
			t.Errorf("release op %d value %s carries no token", op.Index, op.Value)
		}
		switch {
		case op.Type == history.Info:
			infos++
		case op.Type != history.OK:
		case op.F == FGrant && *v.Primary != v.Server:
			grantsAnsweredOther++
		case op.F == FRelease:
			releasesOK++
		case op.F == FRenew:
			renewsOK++
		}
	}
	servers := map[string]bool{}
	for _, h := range res.Holdings {
		servers[h.Server] = true
	}
	if fo.Count == 0 || grantsAnsweredOther == 0 || releasesOK == 0 || renewsOK == 0 || infos == 0 || len(servers) < 3 {
		t.Errorf("the run did not exercise the protocol: failovers %d, contended grants %d, releases %d, renews %d, info %d, holders %d",
			fo.Count, grantsAnsweredOther, releasesOK, renewsOK, infos, len(servers))
	}
}

// TestLeaseSimulationAgainstBrokenServiceIsInvalid: each way of breaking
// the ideal service is caught by the violation kinds it must produce. Each
// runs 240 s of virtual time: a shrinking renewal shows only while no
// release with the holder's latest token (which ends its older leases
// too) follows it, and 60 s missed it in about one seed in six; 240 s
// missed it in none of 260 seeds.
func TestLeaseSimulationAgainstBrokenServiceIsInvalid(t *testing.T) {
	// A second holder shows as an overlap, or only as a read that saw the
	// wrong holder or none when the second holder's grant answered late.
	split := []string{TwoPrimaries, ReadWrongHolder, ReadNoHolder}
	cases := []struct {
		name  string
		brk   func(*workloadtest.IdealLeases)
		kinds [][]string // from each group at least one kind must be reported
	}{
		{"grant blindly", func(s *workloadtest.IdealLeases) { s.GrantBlindly = true }, [][]string{{TwoPrimaries}}},
		// The first split-brain hole: a shorter renewal or re-grant
		// shrinks the protection the holder was told about.
		{"shrink on renewal", func(s *workloadtest.IdealLeases) { s.Shrink = true }, [][]string{split}},
		// A release by any server ends the holder's leases.
		{"release ignores the server", func(s *workloadtest.IdealLeases) { s.ReleaseAnyone = true }, [][]string{split}},
		{"tokens counted per server", func(s *workloadtest.IdealLeases) { s.TokenPerServer = true }, [][]string{{TokenTwoServers}, {TokenOrder}}},
		{"no tokens", func(s *workloadtest.IdealLeases) { s.NoTokens = true }, [][]string{{TokenMissing}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seed := int64(testseed.Get(t))
			svc := workloadtest.NewIdealLeases(seed)
			c.brk(svc)
			ops := workloadtest.Simulate(t, NewLease(leaseOpts(), seed), svc, simCfg(10, 240*time.Second))
			res := CheckLease(ops)
			found := map[string]int{}
			for _, v := range res.Violations {
				found[v.Kind]++
			}
			for _, group := range c.kinds {
				if res.Valid || !slices.ContainsFunc(group, func(k string) bool { return found[k] > 0 }) {
					t.Errorf("not caught: valid=%v, want one of %v among the violations %v", res.Valid, group, found)
				}
			}
		})
	}
}

// TestLeaseGeneratorVariesLeaseMs: every grant and renew asks for a
// lease_ms in [MinLeaseMs, LeaseMs], reaching both ends, and renewals come
// both shorter and longer than the lease they extend.
func TestLeaseGeneratorVariesLeaseMs(t *testing.T) {
	seed := int64(testseed.Get(t))
	opts := leaseOpts()
	opts.MinLeaseMs = 150
	ops := runIdeal(t, opts, seed, 30*time.Second)
	pairs, _ := history.PairOps(ops)
	lo, hi := opts.LeaseMs, opts.MinLeaseMs
	last := map[string]int64{} // pair -> lease_ms of its last ok grant or renew
	var shorter, longer int
	for _, p := range pairs {
		if p.Invoke.F != FGrant && p.Invoke.F != FRenew {
			continue
		}
		var v LeaseValue
		if err := json.Unmarshal(p.Invoke.Value, &v); err != nil || v.LeaseMs == nil {
			t.Fatalf("op %d value %s has no lease_ms", p.Invoke.Index, p.Invoke.Value)
		}
		leaseMs := *v.LeaseMs
		if leaseMs < opts.MinLeaseMs || leaseMs > opts.LeaseMs {
			t.Fatalf("op %d asks for lease_ms %d, outside [%d, %d]", p.Invoke.Index, leaseMs, opts.MinLeaseMs, opts.LeaseMs)
		}
		lo, hi = min(lo, leaseMs), max(hi, leaseMs)
		key := v.Server + "/" + v.Chunk
		if prev, ok := last[key]; ok && p.Invoke.F == FRenew {
			shorter += b2i(leaseMs < prev)
			longer += b2i(leaseMs > prev)
		}
		if p.Completion != nil && p.Completion.Type == history.OK {
			last[key] = leaseMs
		}
	}
	if lo > opts.MinLeaseMs+10 || hi < opts.LeaseMs-10 || shorter < 10 || longer < 10 {
		t.Errorf("lease_ms spans [%d, %d] of [%d, %d]; %d renewals shorter, %d longer than the last lease",
			lo, hi, opts.MinLeaseMs, opts.LeaseMs, shorter, longer)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestLeaseOptions(t *testing.T) {
	if err := (LeaseOptions{Rate: 1}).Validate(); err != nil {
		t.Errorf("zero options with defaults: %v", err)
	}
	err := LeaseOptions{Servers: -1, Chunks: -2, LeaseMs: -3, Rate: -4, Workers: -5, MaxRenewals: -6}.Validate()
	for _, want := range []string{"servers", "chunks", "lease_ms", "rate", "workers", "max renewals"} {
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("Validate error %v does not mention %s", err, want)
		}
	}
	for _, o := range []LeaseOptions{{LeaseMs: 100, MinLeaseMs: 101}, {MinLeaseMs: -1}, {MinLeaseMs: 1001}} {
		if err := o.Validate(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("min lease_ms")) {
			t.Errorf("%+v: Validate error %v does not mention min lease_ms", o, err)
		}
	}
	for leaseMs, wantMin := range map[int64]int64{1000: 250, 3: 1, 1: 1, 0: 250} {
		if o := (LeaseOptions{LeaseMs: leaseMs}).withDefaults(); o.MinLeaseMs != wantMin || o.Validate() != nil {
			t.Errorf("lease_ms %d: default min lease_ms %d (%v), want %d", leaseMs, o.MinLeaseMs, o.Validate(), wantMin)
		}
	}
	w := NewLease(LeaseOptions{Rate: 0}, 1)
	if w.Wake() != workloads.Never {
		t.Errorf("rate 0: Wake = %v, want Never", w.Wake())
	}
	if _, ok := w.Next(time.Hour, 0); ok {
		t.Error("rate 0 produced an op")
	}
}

// replyCase is a reply to an invocation and the completion it must give:
// type, value (when not "") and an error containing errSubstring.
type replyCase struct {
	inv          workloads.Invocation
	reply        string
	typ, value   string
	errSubstring string
}

// testReplies completes each case's invocation with its reply on l.
func testReplies(t *testing.T, l *Lease, cases []replyCase) {
	t.Helper()
	for _, c := range cases {
		var reply json.RawMessage
		if c.reply != "" {
			reply = json.RawMessage(c.reply)
		}
		got := l.Complete(time.Second, 0, c.inv, reply)
		if got.Type != c.typ || (c.value != "" && string(got.Value) != c.value) || !bytes.Contains([]byte(got.Error), []byte(c.errSubstring)) {
			t.Errorf("%s reply %s: got %s %s %q, want %s %s ~%q", c.inv.F, c.reply, got.Type, got.Value, got.Error, c.typ, c.value, c.errSubstring)
		}
		if c.typ != history.OK && string(got.Value) != string(c.inv.Value) {
			t.Errorf("%s %s completion value %s, want the invoke value", c.inv.F, c.typ, got.Value)
		}
	}
}

// The invocations the reply tables answer.
var (
	grantInv   = leaseCall{f: FGrant, chunk: "ch_2", server: "cs3", leaseMs: 1000}.invocation()
	renewInv   = leaseCall{f: FRenew, chunk: "ch_1", server: "cs1", leaseMs: 1000}.invocation()
	checkInv   = leaseCall{f: FCheck, chunk: "ch_1"}.invocation()
	releaseInv = leaseCall{f: FRelease, chunk: "ch_1", server: "cs1", token: 12}.invocation()
)

func TestLeaseRequestsAndReplies(t *testing.T) {
	l := newLease(LeaseOptions{Servers: 3, Chunks: 2, LeaseMs: 1000, Rate: 1}, 1)
	grant, renew, check, release := grantInv, renewInv, checkInv, releaseInv
	if got, want := string(grant.Value), `{"chunk":"ch_2","server":"cs3","lease_ms":1000}`; got != want {
		t.Errorf("grant value %s, want %s", got, want)
	}
	if got, want := string(l.Request(grant)), `{"type":"lease_grant","chunk_handle":"ch_2","server":"cs3","lease_ms":1000}`; got != want {
		t.Errorf("grant request %s, want %s", got, want)
	}
	if got, want := string(l.Request(release)), `{"type":"lease_release","chunk_handle":"ch_1","server":"cs1","token":12}`; got != want {
		t.Errorf("release request %s, want %s", got, want)
	}
	testReplies(t, l, []replyCase{
		{grant, `{"type":"lease_grant_ok","chunk_handle":"ch_2","primary":"cs3","expires_in_ms":998,"token":4,"in_reply_to":1}`, history.OK,
			`{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs3","expires_in_ms":998,"token":4}`, ""},
		{renew, `{"type":"lease_renew_ok","new_expires_in_ms":999,"token":5}`, history.OK,
			`{"chunk":"ch_1","server":"cs1","lease_ms":1000,"new_expires_in_ms":999,"token":5}`, ""},
		{check, `{"type":"lease_check_ok","primary":null,"remaining_ms":0,"expired":true}`, history.OK,
			`{"chunk":"ch_1","primary":null,"remaining_ms":0,"expired":true}`, ""},
		{check, `{"type":"lease_check_ok","primary":"cs2","remaining_ms":40,"expired":false}`, history.OK,
			`{"chunk":"ch_1","primary":"cs2","remaining_ms":40,"expired":false}`, ""},
		{release, `{"type":"lease_release_ok","chunk_handle":"ch_1"}`, history.OK, `{"chunk":"ch_1","server":"cs1","token":12}`, ""},
		{release, `{"type":"error","code":12,"text":"no token"}`, history.Fail, "", "malformed-request: no token"},
		{grant, `{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs3","expires_in_ms":998}`, history.Info, "", `chunk_handle is "ch_1"`},
		{grant, `{"type":"lease_grant_ok","chunk_handle":"ch_2","primary":"cs3","expires_in_ms":998.0}`, history.Info, "", "expires_in_ms is 998.0"},
		{grant, `{"type":"lease_grant_ok","chunk_handle":"ch_2","expires_in_ms":998}`, history.Info, "", "primary is missing"},
		{renew, `{"type":"lease_renew_ok","new_expires_in_ms":-1}`, history.Info, "", "new_expires_in_ms is -1"},
		{check, `{"type":"lease_check_ok","remaining_ms":0,"expired":true}`, history.Info, "", "missing primary"},
		{check, `{"type":"lease_check_ok","primary":null,"remaining_ms":0,"expired":"no"}`, history.Info, "", `expired is "no"`},
		{release, `{"type":"lease_grant_ok","chunk_handle":"ch_1"}`, history.Info, "", `want "lease_release_ok"`},
		{renew, `{"type":"error","code":22,"text":"held by cs2"}`, history.Fail, "", "precondition-failed: held by cs2"},
		{grant, `{"type":"error","code":13,"text":"crash"}`, history.Info, "", "crash: crash"},
		{grant, ``, history.Info, "", "net-timeout"},
		{check, ``, history.Fail, "", "net-timeout"},
		{check, `{"type":"error","code":13}`, history.Fail, "", "crash"},
	})
}

// TestLeaseTokenReplies: a token in an ok grant to the requester or an ok
// renew is recorded; a missing one is recorded as missing (the checker
// judges it); an ill-typed or out-of-range one is a malformed reply; a
// grant naming another primary may carry the holder's token, which is not
// this op's and is ignored.
func TestLeaseTokenReplies(t *testing.T) {
	l := newLease(LeaseOptions{Servers: 3, Chunks: 2, LeaseMs: 1000, Rate: 1}, 1)
	grant, renew := grantInv, renewInv
	grantWith := func(token string) string {
		return `{"type":"lease_grant_ok","chunk_handle":"ch_2","primary":"cs3","expires_in_ms":998,"token":` + token + `}`
	}
	renewWith := func(token string) string {
		return `{"type":"lease_renew_ok","new_expires_in_ms":999,"token":` + token + `}`
	}
	testReplies(t, l, []replyCase{
		{grant, grantWith("1"), history.OK, `{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs3","expires_in_ms":998,"token":1}`, ""},
		{renew, renewWith("9007199254740991"), history.OK,
			`{"chunk":"ch_1","server":"cs1","lease_ms":1000,"new_expires_in_ms":999,"token":9007199254740991}`, ""},
		{grant, `{"type":"lease_grant_ok","chunk_handle":"ch_2","primary":"cs3","expires_in_ms":998}`, history.OK,
			`{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs3","expires_in_ms":998}`, ""},
		{renew, `{"type":"lease_renew_ok","new_expires_in_ms":999}`, history.OK,
			`{"chunk":"ch_1","server":"cs1","lease_ms":1000,"new_expires_in_ms":999}`, ""},
		{grant, `{"type":"lease_grant_ok","chunk_handle":"ch_2","primary":"cs1","expires_in_ms":50,"token":"x"}`, history.OK,
			`{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs1","expires_in_ms":50}`, ""},
		{grant, grantWith("0"), history.Info, "", "token is 0"},
		{grant, grantWith("-4"), history.Info, "", "token is -4"},
		{grant, grantWith("4.0"), history.Info, "", "token is 4.0"},
		{grant, grantWith(`"4"`), history.Info, "", `token is "4"`},
		{renew, renewWith("9007199254740992"), history.Info, "", "token is 9007199254740992"},
		{renew, renewWith("null"), history.Info, "", "token is null"},
		{renew, renewWith("1e3"), history.Info, "", "token is 1e3"},
		{renew, renewWith("[1]"), history.Info, "", "token is [1]"},
	})
}

func TestLeaseEncodersMatchEncodingJSON(t *testing.T) {
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, name := range []string{"ch_1", "cs12", `we"ird\name`, "tab\there", "<&>", "ünï", ""} {
		ask := leaseAskValue{Chunk: name, Server: name + "s", LeaseMs: 1234}
		grant := leaseCall{f: FGrant, chunk: name, server: name + "s", leaseMs: 1234}
		if got, want := string(grant.invocation().Value), marshal(ask); got != want {
			t.Errorf("grant value %s, want %s", got, want)
		}
		var req map[string]any
		if err := json.Unmarshal(grant.request(), &req); err != nil || req["chunk_handle"] != name || req["server"] != name+"s" {
			t.Errorf("grant request %s does not decode to the names (%v)", grant.request(), err)
		}
		r := leaseReply{ChunkHandle: json.RawMessage(marshal(name)), Primary: json.RawMessage(marshal(name + "s")),
			ExpiresInMs: json.RawMessage("7"), RemainingMs: json.RawMessage("3"), Expired: json.RawMessage("false"),
			NewExpiresInMs: json.RawMessage("8"), Token: json.RawMessage("9007199254740991")}
		want := marshal(grantOKValue{LeaseAsk: ask, Primary: name + "s", ExpiresInMs: 7, Token: tok(1<<53 - 1)})
		if out, p := grantOK(grant, r); p != "" || string(out.c.Value) != want {
			t.Errorf("grant ok value %s (%s), want %s", out.c.Value, p, want)
		}
		r.Primary = json.RawMessage(marshal(name)) // another primary: its token is not this op's
		if out, p := grantOK(grant, r); name != "" && (p != "" || string(out.c.Value) != marshal(grantOKValue{LeaseAsk: ask, Primary: name, ExpiresInMs: 7, Token: nil})) {
			t.Errorf("grant ok value naming another primary %s (%s)", out.c.Value, p)
		}
		renew := leaseCall{f: FRenew, chunk: name, server: name + "s", leaseMs: 1234}
		if out, p := renewOK(renew, r); p != "" || string(out.c.Value) != marshal(renewOKValue{LeaseAsk: ask, NewExpiresInMs: 8, Token: tok(1<<53 - 1)}) {
			t.Errorf("renew ok value %s (%s)", out.c.Value, p)
		}
		check := leaseCall{f: FCheck, chunk: name}
		if out, p := checkOK(check, r); p != "" || string(out.c.Value) != marshal(checkOKValue{Chunk: name, Primary: &name, RemainingMs: 3, Expired: false}) {
			t.Errorf("check ok value %s (%s)", out.c.Value, p)
		}
		for _, token := range []int64{0, 1, 1<<53 - 1} {
			release := leaseCall{f: FRelease, chunk: name, server: name, token: token}
			v := releaseValue{Chunk: name, Server: name, Token: nil}
			if token != 0 {
				v.Token = tok(token)
			}
			if got, want := string(release.invocation().Value), marshal(v); got != want {
				t.Errorf("release value %s, want %s", got, want)
			}
			var req map[string]any
			if err := json.Unmarshal(release.request(), &req); err != nil || req["type"] != "lease_release" ||
				(token != 0 && req["token"] != float64(token)) || (token == 0 && req["token"] != nil) {
				t.Errorf("release request %s does not carry token %d (%v)", release.request(), token, err)
			}
		}
	}
}

// TestGrantsSkipHeldPairs: at a rate far above what renewals need, the
// generator never schedules a grant of a chunk to a server that believes
// it holds it, so renewals still come due (a scheduled re-grant would push
// the half-life forward). The holder's own re-grant at the half-life is a
// renewal and ends the test as a renew does.
func TestGrantsSkipHeldPairs(t *testing.T) {
	l := newLease(LeaseOptions{Servers: 2, Chunks: 1, LeaseMs: 1000, Rate: 10000, Workers: 1}, 7)
	l.acquire(0, 0, time.Second) // cs1 holds ch_1 until 1 s
	l.holdingOf(0).renewalsLeft = 1
	for i := range 600 {
		now := time.Duration(i) * time.Millisecond
		inv, ok := l.Next(now, 0)
		if !ok {
			continue
		}
		c, _ := l.inflightCall(0, inv)
		l.forget(0)
		if c.f == FRenew || c.renewal {
			if now != 500*time.Millisecond {
				t.Fatalf("renewal at %v, want the half-life 500ms", now)
			}
			return
		}
		if c.f == FGrant && c.server == "cs1" {
			t.Fatalf("at %v the generator granted ch_1 to cs1, which holds it", now)
		}
	}
	t.Fatal("no renewal came due by 600 ms for a 1 s lease held from 0 (half-life 500 ms)")
}
