package workloads

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

const msec = time.Millisecond

// scripted is a lease generator with no scheduled ops (rate 0): only what
// the test injects and the renewals that follow from it.
func scripted(t *testing.T) *Lease {
	t.Helper()
	return newLease(LeaseOptions{Servers: 2, Chunks: 1, LeaseMs: 1000, Rate: 0, Workers: 2}, 1)
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
	if l.pairs[0].held {
		l.pairs[0].renewalsLeft, l.pairs[0].release = renewals, release
		l.pairs[0].stopped = renewals == 0 && !release
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
		if l.Wake() != Never || len(l.holders) != 0 {
			t.Errorf("%s: the server believes it holds the chunk (Wake %v)", c.name, l.Wake())
		}
	}

	l := scripted(t) // a belief the server had is dropped when a grant names another primary
	grantCompleted(t, l, grantOKTo("cs1", 1000), 2, true)
	inv := l.emit(20*msec, 1, l.call(FGrant, 0))
	l.Complete(30*msec, 1, inv, json.RawMessage(grantOKTo("cs2", 500)))
	if l.Wake() != Never {
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
		if l.Wake() != Never {
			t.Errorf("renew reply %q: Wake = %v, want Never (no retry)", reply, l.Wake())
		}
		if !l.pairs[0].held {
			t.Errorf("renew reply %q: belief dropped before its known end", reply)
		}
		if _, ok := l.Next(1000*msec, 0); ok || l.pairs[0].held {
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
	if l.Wake() != Never || l.pairs[0].held {
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
	if l.pairs[0].held {
		t.Error("the server still believes it holds a chunk it released")
	}

	l = scripted(t)
	grantCompleted(t, l, grantOKTo("cs1", 1000), 0, false)
	if l.Wake() != Never {
		t.Errorf("an abandoned holding still wakes the generator at %v", l.Wake())
	}
}
