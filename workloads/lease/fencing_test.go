package lease

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"chunklease/history"
	"chunklease/internal/testseed"
)

// TestCheckLeaseValidIncreasingTokens: handovers, renewals through other
// nodes, re-grants, concurrent requests of two servers and reads, with
// tokens that grow across servers, pass.
func TestCheckLeaseValidIncreasingTokens(t *testing.T) {
	b := newHB(t)
	b.grantTok(0, 0, 10, "ch_1", "cs1", 500, tok(100))
	b.renewTok(0, 200, 210, "ch_1", "cs1", 500, "n2", tok(101))
	b.grantTok(0, 400, 410, "ch_1", "cs1", 500, tok(105)) // a re-grant by the holder: gaps are fine
	b.grant(1, 450, 460, "ch_1", "cs2", "cs1", 400)       // answered with the holder: no token needed
	b.check(2, 500, 510, "ch_1", "cs1", false)
	b.grantTok(1, 1000, 1010, "ch_1", "cs2", 500, tok(200)) // after cs1's last lease ended
	b.renewTok(1, 1200, 1210, "ch_1", "cs2", 500, "n3", tok(210))
	// cs3 asks while cs2's renew is in flight, so its token need not
	// exceed 210; it only has to exceed what completed before it was invoked.
	b.grantTok(2, 1205, 1800, "ch_1", "cs3", 100, tok(205)) // [1800, 1305): empty
	b.grantTok(0, 3000, 3010, "ch_2", "cs1", 500, tok(1))   // chunks are fenced independently
	r := mustValid(t, "increasing tokens", b.history())
	if len(r.Holdings) != 6 || r.Holdings[0].Token != 100 || r.Holdings[5].Token != 1 {
		t.Errorf("holdings %+v, want 6 with their tokens", r.Holdings)
	}
}

func TestCheckLeaseNegativeTokenMissing(t *testing.T) {
	for _, token := range []*int64{nil, tok(0), tok(-3), tok(maxToken)} {
		b := newHB(t)
		b.grantTok(0, 0, 10, "ch_1", "cs1", 500, token)
		r := mustViolate(t, fmt.Sprintf("grant with token %v", token), b.history(), TokenMissing)
		v := r.Violations[0]
		if !slices.Equal(v.Servers, []string{"cs1"}) || !slices.Equal(v.Ops, []int{0, 1}) || !slices.Equal(v.Nodes, []string{"n1"}) || !strings.Contains(v.Text, "cs1 grant (ops 0-1 via n1) of ch_1") {
			t.Errorf("violation %+v", v)
		}
		if token != nil && !strings.Contains(v.Text, fmt.Sprintf("token %d", *token)) {
			t.Errorf("text %q does not show the token", v.Text)
		}
		if h := r.Holdings[0]; h.Token != 0 {
			t.Errorf("holding %+v keeps a token no lease may carry", h)
		}
	}
	b := newHB(t)
	b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 500)
	b.renewTok(0, 200, 210, "ch_1", "cs1", 500, "n2", nil)
	mustViolate(t, "renew without a token", b.history(), TokenMissing)
}

func TestCheckLeaseNegativeTokenTwoServers(t *testing.T) {
	b := newHB(t)
	b.grantTok(0, 0, 10, "ch_1", "cs1", 100, tok(5))  // [10, 100)
	b.grantTok(1, 5, 300, "ch_1", "cs2", 100, tok(5)) // concurrent with cs1's; [300, 105): empty
	b.renewTok(1, 5000, 5010, "ch_1", "cs2", 100, "n2", tok(10))
	b.renewTok(2, 5005, 5060, "ch_1", "cs2", 100, "n2", tok(10)) // the same server twice, concurrently: not this rule
	r := mustViolate(t, "one token, two servers", b.history(), TokenTwoServers)
	v := r.Violations[0]
	if !slices.Equal(v.Servers, []string{"cs1", "cs2"}) || !slices.Equal(v.Ops, []int{0, 2, 1, 3}) ||
		v.StartNs != 0 || v.EndNs != ms(300) || !strings.Contains(v.Text, "token 5 names leases of two servers") {
		t.Errorf("violation %+v", v)
	}

	b = newHB(t) // three servers: one violation per other server
	for i, s := range []string{"cs1", "cs2", "cs2", "cs3"} {
		b.grantTok(i, float64(i), 1000, "ch_1", s, 100, tok(7))
	}
	mustViolate(t, "one token, three servers", b.history(), TokenTwoServers, TokenTwoServers)
}

func TestCheckLeaseNegativeTokenOrder(t *testing.T) {
	for _, later := range []int64{7, 9} { // smaller, and equal (also two servers)
		b := newHB(t)
		b.grantTok(0, 0, 10, "ch_1", "cs1", 100, tok(9))          // [10, 100)
		b.grantTok(1, 200, 210, "ch_1", "cs2", 100, tok(later))   // invoked after cs1's completed
		b.renewTok(1, 250, 260, "ch_1", "cs2", 100, "n2", tok(3)) // and so is this, after both
		kinds := []string{TokenOrder, TokenOrder}
		if later == 9 {
			kinds = append([]string{TokenTwoServers}, kinds...)
		}
		r := mustViolate(t, fmt.Sprintf("token %d after 9", later), b.history(), kinds...)
		v := r.Violations[len(kinds)-2]
		if !slices.Equal(v.Servers, []string{"cs1", "cs2"}) || !slices.Equal(v.Ops, []int{0, 1, 2, 3}) ||
			v.StartNs != 0 || v.EndNs != ms(210) || !strings.Contains(v.Text, fmt.Sprintf("got token %d", later)) ||
			!strings.Contains(v.Text, "completed with token 9 190 ms before") {
			t.Errorf("violation %+v", v)
		}
	}
	b := newHB(t) // invoked exactly when the other completed: not after it
	b.grantTok(0, 0, 10, "ch_1", "cs1", 100, tok(9))
	b.grantTok(1, 10, 210, "ch_1", "cs2", 100, tok(7))
	mustValid(t, "invoked at the completion", b.history())

	b = newHB(t) // one more nanosecond and it is
	b.grantTok(0, 0, 10, "ch_1", "cs1", 100, tok(9))
	b.grantTok(1, 10, 210, "ch_1", "cs2", 100, tok(7))
	h := b.history()
	h[2].Time++
	mustViolate(t, "invoked 1 ns after the completion", h, TokenOrder)

	b = newHB(t) // the same server may not go back either (a renew gets a larger token)
	b.grantTok(0, 0, 10, "ch_1", "cs1", 100, tok(9))
	b.renewTok(0, 50, 60, "ch_1", "cs1", 100, "n2", tok(4))
	mustViolate(t, "the same server", b.history(), TokenOrder)
}

// TestCheckLeaseSweepsMatchBruteForce holds the read and token-order
// sweeps to the rules written out pair by pair, on random small chunks.
func TestCheckLeaseSweepsMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(int64(testseed.Get(t))), 1))
	servers := []string{"cs1", "cs2", "cs3"}
	for round := range 3000 {
		var holdings []Holding
		for i := range 1 + rng.IntN(8) {
			inv := rng.Int64N(50)
			h := Holding{Server: servers[rng.IntN(3)], InvokeNs: inv, StartNs: inv + rng.Int64N(10),
				Token: 1 + rng.Int64N(6), InvokeIndex: 2 * i, CompletionIndex: 2*i + 1}
			h.EndNs = h.StartNs + rng.Int64N(30)
			holdings = append(holdings, h)
		}
		var reads []leaseRead
		for i := range rng.IntN(6) {
			inv := rng.Int64N(70)
			reads = append(reads, leaseRead{holder: []string{"", "cs1", "cs2", "cs3"}[rng.IntN(4)],
				startNs: inv, endNs: inv + rng.Int64N(15), invoke: 100 + i})
		}
		sorted := slices.Clone(holdings)
		slices.SortStableFunc(sorted, byStart)
		gotReads := violatingOps(judgeReads("c", slices.Clone(reads), sorted), 0)
		if want := bruteReads(reads, holdings); !slices.Equal(gotReads, want) {
			t.Fatalf("round %d: reads flagged %v, want %v\nholdings %+v\nreads %+v", round, gotReads, want, holdings, reads)
		}
		gotOrder := violatingOps(tokenOrder("c", holdings), 2)
		if want := bruteOrder(holdings); !slices.Equal(gotOrder, want) {
			t.Fatalf("round %d: token order flagged %v, want %v\nholdings %+v", round, gotOrder, want, holdings)
		}
	}
}

// violatingOps lists, sorted, the op index at position at of each violation.
func violatingOps(vs []Violation, at int) []int {
	var out []int
	for _, v := range vs {
		out = append(out, v.Ops[at])
	}
	slices.Sort(out)
	return out
}

func bruteReads(reads []leaseRead, holdings []Holding) []int {
	var out []int
	for _, r := range reads {
		for _, h := range holdings {
			if h.StartNs <= r.startNs && r.endNs < h.EndNs && h.Server != r.holder {
				out = append(out, r.invoke)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

func bruteOrder(holdings []Holding) []int {
	var out []int
	for _, b := range holdings {
		for _, a := range holdings {
			if a.StartNs < b.InvokeNs && b.Token <= a.Token {
				out = append(out, b.InvokeIndex)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestCheckLeaseNegativeSameServerTokenOrder: a renew (or re-grant) gets a
// new, larger token than the server's own lease that completed before it
// was invoked (contract section 1); one that got a smaller token is a
// violation, one invoked before that lease completed is not.
func TestCheckLeaseNegativeSameServerTokenOrder(t *testing.T) {
	b := newHB(t)
	b.grantTok(0, 0, 10, "ch_1", "cs1", 1000, tok(9))
	b.renewTok(0, 100, 110, "ch_1", "cs1", 1000, "n2", tok(5))
	r := mustViolate(t, "renew with a smaller token", b.history(), TokenOrder)
	if v := r.Violations[0]; !slices.Equal(v.Servers, []string{"cs1", "cs1"}) || !strings.Contains(v.Text, "got token 5") {
		t.Errorf("violation %+v", v)
	}
	b = newHB(t) // the renew was invoked before the grant completed: no order is promised
	b.grantTok(0, 0, 10, "ch_1", "cs1", 1000, tok(9))
	b.renewTok(1, 5, 110, "ch_1", "cs1", 1000, "n2", tok(5))
	mustValid(t, "concurrent renew with a smaller token", b.history())
}

// TestCheckLeaseNegativeExpiresOutOfRange: a remaining time no node could
// honestly give is a violation, and the holding built from it is kept as
// told, so an absurd time can never wrap around into an empty holding
// that hides an overlap (a node granting everyone and answering
// expires_in_ms 9223372036854 was once judged valid that way).
func TestCheckLeaseNegativeExpiresOutOfRange(t *testing.T) {
	b := newHB(t)
	b.pair(0, FGrant, 1000, 1010, history.OK, ask("ch_1", "cs1"), grantOKValue{LeaseAsk: ask("ch_1", "cs1"), Primary: "cs1", ExpiresInMs: 9223372036854, Token: tok(1)}, "n1")
	b.grantTok(1, 1100, 1110, "ch_1", "cs2", 500, tok(2))
	r := mustViolate(t, "a time that overflows int64 nanoseconds", b.history(), TwoPrimaries, ExpiresOutOfRange)
	if v := r.Violations[len(r.Violations)-1]; !strings.Contains(v.Text, "9223372036854 ms remaining") || !strings.Contains(v.Text, "asked for") {
		t.Errorf("text %q does not show the time and the bound", v.Text)
	}
	for _, told := range []int64{-5, maxToken, 1001} {
		b := newHB(t)
		b.grant(0, 0, 10, "ch_1", "cs1", "cs1", 500)
		b.pair(0, FRenew, 100, 110, history.OK, ask("ch_1", "cs1"), renewOKValue{LeaseAsk: ask("ch_1", "cs1"), NewExpiresInMs: told, Token: tok(2)}, "n2")
		mustViolate(t, fmt.Sprintf("renew told %d ms after asking 1000", told), b.history(), ExpiresOutOfRange)
	}
	// Without lease_ms in the request (the node's default) only the range
	// applies.
	b = newHB(t)
	noAsk := map[string]any{"chunk": "ch_1", "server": "cs1"}
	b.pair(0, FGrant, 0, 10, history.OK, noAsk, map[string]any{"chunk": "ch_1", "server": "cs1", "primary": "cs1", "expires_in_ms": 60000, "token": 1}, "n1")
	mustValid(t, "a default lease of 60000 ms", b.history())
}

// TestCheckLeaseTokenSharedByARenew: the one-token-one-server rule covers
// renews as well as grants: a renew of cs1 and a concurrent grant, or a
// concurrent renew, of cs2 with the same token is token-two-servers (the
// negative control of a node whose lanes collide).
func TestCheckLeaseTokenSharedByARenew(t *testing.T) {
	for _, other := range []string{"grant", "renew"} {
		b := newHB(t)
		b.grantTok(0, 0, 10, "ch_1", "cs1", 100, tok(4))         // [10, 100)
		b.grantTok(1, 200, 210, "ch_1", "cs2", 100, tok(5))      // [210, 300)
		b.renewTok(0, 400, 500, "ch_1", "cs1", 50, "n1", tok(8)) // concurrent with the next op
		if other == "grant" {
			b.grantTok(2, 410, 490, "ch_1", "cs3", 50, tok(8))
		} else {
			b.renewTok(1, 410, 490, "ch_1", "cs2", 50, "n2", tok(8))
		}
		r := mustViolate(t, "a renew and a "+other+" share a token", b.history(), TokenTwoServers)
		if v := r.Violations[0]; v.Servers[0] == v.Servers[1] {
			t.Errorf("%s: the violation names one server twice: %+v", other, v)
		}
	}
}
