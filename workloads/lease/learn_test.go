package lease

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"chunklease/workloads"
)

const msec = time.Millisecond

// scripted is a lease generator with no scheduled ops (rate 0): only what
// the test injects and the renewals that follow from it. Every lease_ms is
// 1000 (MinLeaseMs = LeaseMs), so that values can be written out.
func scripted(t *testing.T) *Lease {
	t.Helper()
	return newLease(LeaseOptions{Servers: 2, Chunks: 1, LeaseMs: 1000, MinLeaseMs: 1000, Rate: 0, Workers: 2}, 1)
}

// grantCompleted injects a grant by cs1 on worker 0 at 0 and completes it
// at 10ms with reply; plan fixes the holding's plan when one starts.
func grantCompleted(t *testing.T, l *Lease, reply string, renewals int, release bool) {
	t.Helper()
	inv := l.emit(0, 0, l.call(FGrant, 0))
	var raw json.RawMessage
	if reply != "" {
		raw = json.RawMessage(reply)
	}
	l.Complete(10*msec, 0, inv, raw)
	if h := l.holdingOf(0); h != nil {
		h.renewalsLeft, h.release = renewals, release
		h.stopped = renewals == 0 && !release
	}
}

func grantOKTo(primary string, expiresMs int) string {
	return fmt.Sprintf(`{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":%q,"expires_in_ms":%d}`, primary, expiresMs)
}

func TestLeaseGeneratorRenewsAtHalfLifeAfterOKGrant(t *testing.T) {
	l := scripted(t)
	grantCompleted(t, l, grantOKTo("cs1", 1000), 2, true)
	halfLife := 10*msec + (1000*msec-10*msec)/2 // reply + (invoke + expires - reply)/2
	if l.Wake() != halfLife {
		t.Fatalf("Wake = %v, want the half-life %v", l.Wake(), halfLife)
	}
	if _, ok := l.Next(halfLife-1, 1); ok {
		t.Fatal("renewed before the half-life")
	}
	inv, ok := l.Next(halfLife, 1)
	if !ok || inv.F != FRenew || string(inv.Value) != `{"chunk":"ch_1","server":"cs1","lease_ms":1000}` {
		t.Fatalf("at the half-life Next = %v %s, want a renew of cs1/ch_1", ok, inv.Value)
	}
	// ok renew through worker 1: end = invoke + 1000ms, next half-life from the reply
	l.Complete(halfLife+20*msec, 1, inv, json.RawMessage(`{"type":"lease_renew_ok","new_expires_in_ms":1000}`))
	want := halfLife + 20*msec + (halfLife+1000*msec-(halfLife+20*msec))/2
	if l.Wake() != want {
		t.Fatalf("after the renew Wake = %v, want %v", l.Wake(), want)
	}
}

func TestLeaseGeneratorLearnsOnlyFromOwnOKReplies(t *testing.T) {
	cases := []struct{ name, reply string }{
		{"answered with another primary", grantOKTo("cs2", 900)},
		{"unknown grant", ""},
		{"failed grant", `{"type":"error","code":11,"text":"no majority"}`},
		{"malformed grant reply", `{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs1","expires_in_ms":1.5}`},
		{"reply after the lease ended", grantOKTo("cs1", 5)},
	}
	for _, c := range cases {
		l := scripted(t)
		grantCompleted(t, l, c.reply, 2, true)
		if l.Wake() != workloads.Never || len(l.holders) != 0 {
			t.Errorf("%s: the server believes it holds the chunk (Wake %v)", c.name, l.Wake())
		}
	}

	l := scripted(t) // a belief the server had is dropped when a grant names another primary
	grantCompleted(t, l, grantOKTo("cs1", 1000), 2, true)
	inv := l.emit(20*msec, 1, l.call(FGrant, 0))
	l.Complete(30*msec, 1, inv, json.RawMessage(grantOKTo("cs2", 500)))
	if l.Wake() != workloads.Never {
		t.Errorf("cs1 still renews after a grant answered that cs2 is primary")
	}
}

func TestLeaseGeneratorStopsAfterFailedRenew(t *testing.T) {
	for _, reply := range []string{`{"type":"error","code":22,"text":"held by cs2"}`, ""} {
		l := scripted(t)
		grantCompleted(t, l, grantOKTo("cs1", 1000), 3, true)
		inv, _ := l.Next(l.Wake(), 0)
		var raw json.RawMessage
		if reply != "" {
			raw = json.RawMessage(reply)
		}
		l.Complete(600*msec, 0, inv, raw)
		if l.Wake() != workloads.Never {
			t.Errorf("renew reply %q: Wake = %v, want Never (no retry)", reply, l.Wake())
		}
		if !l.pairs.is(0, pairHeld) {
			t.Errorf("renew reply %q: belief dropped before its known end", reply)
		}
		if _, ok := l.Next(1000*msec, 0); ok || l.pairs.is(0, pairHeld) {
			t.Errorf("renew reply %q: belief outlived its end", reply)
		}
	}
}

func TestLeaseGeneratorBeliefLapsesWhenNoWorkerWasFree(t *testing.T) {
	l := scripted(t)
	grantCompleted(t, l, grantOKTo("cs1", 1000), 3, true)
	if _, ok := l.Next(1000*msec, 0); ok {
		t.Fatal("renewed a lease that had already ended")
	}
	if l.Wake() != workloads.Never || l.pairs.is(0, pairHeld) {
		t.Errorf("belief survived its end: Wake %v", l.Wake())
	}
}

func TestLeaseGeneratorPlanEnds(t *testing.T) {
	l := scripted(t)
	grantCompleted(t, l, grantOKTo("cs1", 1000), 0, true)
	inv, ok := l.Next(l.Wake(), 1)
	if !ok || inv.F != FRelease || string(inv.Value) != `{"chunk":"ch_1","server":"cs1"}` {
		t.Fatalf("plan end: Next = %v %s %s, want a release", ok, inv.F, inv.Value)
	}
	if l.pairs.is(0, pairHeld) {
		t.Error("the server still believes it holds a chunk it released")
	}

	l = scripted(t)
	grantCompleted(t, l, grantOKTo("cs1", 1000), 0, false)
	if l.Wake() != workloads.Never {
		t.Errorf("an abandoned holding still wakes the generator at %v", l.Wake())
	}
}

func grantOKTok(primary string, expiresMs int, token int64) string {
	return fmt.Sprintf(`{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":%q,"expires_in_ms":%d,"token":%d}`, primary, expiresMs, token)
}

// okReply is the ok reply to a renewal inv (a renew or a re-grant).
func okReply(inv workloads.Invocation, expiresMs int, token int64) json.RawMessage {
	if inv.F == FGrant {
		return json.RawMessage(grantOKTok("cs1", expiresMs, token))
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"lease_renew_ok","new_expires_in_ms":%d,"token":%d}`, expiresMs, token))
}

// TestLeaseGeneratorReleasesWithLastToken: the plan-ending release sends
// the token of the last ok grant or renew; a reply without a token keeps
// the one before.
func TestLeaseGeneratorReleasesWithLastToken(t *testing.T) {
	l := scripted(t)
	grantCompleted(t, l, grantOKTok("cs1", 1000, 41), 2, true)
	at := l.Wake()
	inv, _ := l.Next(at, 0)
	l.Complete(at+10*msec, 0, inv, okReply(inv, 1000, 42))
	at = l.Wake()
	inv, _ = l.Next(at, 0)
	noToken := json.RawMessage(`{"type":"lease_renew_ok","new_expires_in_ms":1000}`)
	if inv.F == FGrant {
		noToken = json.RawMessage(grantOKTo("cs1", 1000))
	}
	l.Complete(at+10*msec, 0, inv, noToken)
	inv, ok := l.Next(l.Wake(), 0)
	if !ok || inv.F != FRelease || string(inv.Value) != `{"chunk":"ch_1","server":"cs1","token":42}` {
		t.Fatalf("plan end: Next = %v %s %s, want a release with token 42", ok, inv.F, inv.Value)
	}
	if got := string(l.Request(inv)); got != `{"type":"lease_release","chunk_handle":"ch_1","server":"cs1","token":42}` {
		t.Errorf("release request %s", got)
	}
}

// regrantingLease returns a scripted generator, holding cs1/ch_1 from a
// grant with token 41 and two renewals planned, whose first renewal is a
// re-grant, and that re-grant's invocation.
func regrantingLease(t *testing.T) (*Lease, workloads.Invocation) {
	t.Helper()
	for seed := range int64(200) {
		l := newLease(LeaseOptions{Servers: 2, Chunks: 1, LeaseMs: 1000, MinLeaseMs: 1000, Rate: 0, Workers: 2}, seed)
		grantCompleted(t, l, grantOKTok("cs1", 1000, 41), 2, true)
		if inv, _ := l.Next(l.Wake(), 1); inv.F == FGrant {
			return l, inv
		}
	}
	t.Fatal("no seed in 200 re-grants at the first half-life (1 in 4 should)")
	return nil, workloads.Invocation{}
}

// TestLeaseGeneratorRegrantCountsAsRenewal: a re-grant by the holder at
// its half-life asks for the same pair; its ok reply continues the plan
// (one renewal used, not a fresh plan) and sets the next half-life.
func TestLeaseGeneratorRegrantCountsAsRenewal(t *testing.T) {
	l, inv := regrantingLease(t)
	halfLife := 10*msec + (1000*msec-10*msec)/2
	if string(inv.Value) != `{"chunk":"ch_1","server":"cs1","lease_ms":1000}` {
		t.Fatalf("re-grant value %s, want a grant of cs1/ch_1", inv.Value)
	}
	l.Complete(halfLife+20*msec, 1, inv, okReply(inv, 1000, 43))
	h := l.holdingOf(0)
	if h == nil || h.renewalsLeft != 1 || l.pairs.lastToken(0) != 43 || !h.release {
		t.Fatalf("after the re-grant: %+v (token %d), want held, 1 renewal left, token 43, the plan kept", h, l.pairs.lastToken(0))
	}
	if want := halfLife + 20*msec + (halfLife+1000*msec-(halfLife+20*msec))/2; l.Wake() != want {
		t.Errorf("after the re-grant Wake = %v, want %v", l.Wake(), want)
	}

	for _, reply := range []string{`{"type":"error","code":11,"text":"no majority"}`, ""} {
		l, inv = regrantingLease(t) // a failed or unknown re-grant stops renewing, as a renew's does
		var raw json.RawMessage
		if reply != "" {
			raw = json.RawMessage(reply)
		}
		l.Complete(600*msec, 1, inv, raw)
		if l.Wake() != workloads.Never || !l.pairs.is(0, pairHeld) {
			t.Errorf("re-grant reply %q: Wake = %v held = %v, want no retry and the belief kept", reply, l.Wake(), l.pairs.is(0, pairHeld))
		}
	}
}

// TestLeaseGeneratorShorterRenewalKeepsBelief: a renewal shorter than the
// lease it extends does not shorten the server's belief (the older lease
// still stands), while the next half-life comes from the renewal.
func TestLeaseGeneratorShorterRenewalKeepsBelief(t *testing.T) {
	l := scripted(t)
	grantCompleted(t, l, grantOKTok("cs1", 1000, 41), 2, true) // believed until 1000 ms
	at := l.Wake()
	inv, _ := l.Next(at, 0)
	l.Complete(at+10*msec, 0, inv, okReply(inv, 100, 42)) // ends at at+100ms
	if h := l.holdingOf(0); h == nil || h.endAt != 1000*msec || h.renewAt != at+10*msec+(90*msec)/2 {
		t.Errorf("after a shorter renewal: %+v, want held until 1s, half-life from the renewal", h)
	}
}

// TestLeaseGeneratorStrayReleaseTokens: a release of a pair not held sends
// the pair's stale token, another server's token for the chunk, or a
// random one in [1, 2^40); a random one when nothing else is known.
func TestLeaseGeneratorStrayReleaseTokens(t *testing.T) {
	l := newLease(LeaseOptions{Servers: 3, Chunks: 2, Rate: 1}, 5)
	if tk := l.strayToken(0); tk < 1 || tk >= strayTokenMax {
		t.Errorf("no token known: got %d, want a random one in [1, 2^40)", tk)
	}
	l.pairs.setLastToken(0, 5) // cs1/ch_1
	l.pairs.setLastToken(2, 7) // cs2/ch_1
	l.pairs.setLastToken(3, 9) // cs2/ch_2: another chunk, never offered for ch_1
	seen := map[string]int{}
	for range 600 {
		switch tk := l.strayToken(0); {
		case tk == 5:
			seen["stale"]++
		case tk == 7:
			seen["other server"]++
		case tk >= 1 && tk < strayTokenMax && tk != 9:
			seen["random"]++
		default:
			t.Fatalf("stray token %d", tk)
		}
	}
	for _, kind := range []string{"stale", "other server", "random"} {
		if seen[kind] < 150 {
			t.Errorf("%s tokens %d of 600 (%v), want about a third", kind, seen[kind], seen)
		}
	}
}
