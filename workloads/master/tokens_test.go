package master

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckMasterTokensValid: tokens that keep the rules. One node's
// statuses of one instance repeat its token, also in beliefs that do not
// touch; a node's own overlapping beliefs may come in any token order;
// the next master's token is above every earlier master's.
func TestCheckMasterTokensValid(t *testing.T) {
	var b masterHB
	b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 50)             // n1 [10, 100) token 50
	b.statusToken(0, "n1", 200*masterMs, 210*masterMs, true, "n1", 100, 50) // n1 [210, 300) token 50 again
	b.statusToken(1, "n1", 220*masterMs, 240*masterMs, true, "n1", 100, 60) // n1 [240, 320) token 60
	b.statusToken(2, "n1", 230*masterMs, 250*masterMs, true, "n1", 50, 55)  // n1 [250, 280): overlaps its own 60
	b.statusToken(3, "n2", 320*masterMs, 330*masterMs, true, "n2", 100, 61) // n2 after every n1 belief
	b.statusToken(4, "n1", 500*masterMs, 510*masterMs, true, "n1", 100, 70) // n1 again, above n2
	b.statusToken(5, "n1", 500*masterMs, 800*masterMs, true, "n1", 100, 70) // empty belief: no order, no problem
	masterValid(t, "tokens that keep the rules", b.history())
}

// TestCheckMasterTokensNegative: the negative controls of the fencing
// rules, each caught with its kind, nodes and text.
func TestCheckMasterTokensNegative(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *masterHB)
		kind  string
		nodes []string
		text  string
	}{
		{"is_master without a token", func(b *masterHB) {
			b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 0)
		}, TokenMissing, []string{"n1"}, "n1 (status ops 0-1 via n1, master during [0.010s, 0.100s)) answered is_master true without a token"},
		{"an empty belief without a token", func(b *masterHB) {
			b.statusToken(0, "n1", 0, 200*masterMs, true, "n1", 100, 0)
		}, TokenMissing, []string{"n1"}, "without a token"},
		{"two nodes told one token", func(b *masterHB) {
			b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 42)
			b.statusToken(1, "n2", 500*masterMs, 510*masterMs, true, "n2", 100, 42)
		}, TokenShared, []string{"n1", "n2"}, "were both told token 42"},
		{"the next master's token equal to the last's", func(b *masterHB) {
			b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 42)
			b.statusToken(0, "n1", 20*masterMs, 30*masterMs, true, "n1", 100, 43)
			b.statusToken(1, "n2", 200*masterMs, 210*masterMs, true, "n2", 100, 43)
		}, TokenShared, []string{"n1", "n2"}, "both told token 43"},
		{"the next master's token below the last's", func(b *masterHB) {
			b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 42)
			b.statusToken(1, "n2", 100*masterMs, 110*masterMs, true, "n2", 100, 41)
		}, TokenBack, []string{"n1", "n2"}, "n2 (status ops 2-3 via n2, master during [0.110s, 0.200s)) was told token 41, below token 42 that n1 (status ops 0-1 via n1"},
		{"one node's token going back", func(b *masterHB) {
			b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 42)
			b.statusToken(0, "n1", 100*masterMs, 110*masterMs, true, "n1", 100, 41)
		}, TokenBack, []string{"n1"}, "was told token 41, below token 42"},
		{"below a master two tenures back", func(b *masterHB) {
			b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 50)
			b.statusToken(1, "n2", 100*masterMs, 110*masterMs, true, "n2", 100, 60)
			b.statusToken(2, "n3", 200*masterMs, 210*masterMs, true, "n3", 100, 55)
		}, TokenBack, []string{"n2", "n3"}, "token 55, below token 60"},
	}
	for _, c := range cases {
		var b masterHB
		c.build(&b)
		r := CheckMaster(b.history())
		if r.Valid || len(r.Violations) != 1 || len(r.Problems) > 0 {
			t.Errorf("%s: valid=%v violations %+v problems %+v, want one %s", c.name, r.Valid, r.Violations, r.Problems, c.kind)
			continue
		}
		v := r.Violations[0]
		if v.Kind != c.kind || !slices.Equal(v.Nodes, c.nodes) || !strings.Contains(v.Text, c.text) || r.ViolationsByKind[c.kind] != 1 {
			t.Errorf("%s: violation %+v, want kind %s nodes %v text containing %q", c.name, v, c.kind, c.nodes, c.text)
		}
	}
}

// TestCheckMasterTokenBackOncePerBelief: every later belief whose token
// is below an earlier master's is one violation, naming the earlier
// belief with the largest token.
func TestCheckMasterTokenBackOncePerBelief(t *testing.T) {
	var b masterHB
	b.statusToken(0, "n1", 0, 10*masterMs, true, "n1", 100, 50)
	b.statusToken(1, "n2", 100*masterMs, 110*masterMs, true, "n2", 100, 70)
	for i := range int64(3) {
		b.statusToken(2, "n3", (200+100*i)*masterMs, (210+100*i)*masterMs, true, "n3", 100, 60)
	}
	r := CheckMaster(b.history())
	if r.Valid || r.ViolationCount != 3 || r.ViolationsByKind[TokenBack] != 3 {
		t.Fatalf("valid=%v violations %+v, want 3 token-back", r.Valid, r.Violations)
	}
	for _, v := range r.Violations {
		if !slices.Equal(v.Nodes, []string{"n2", "n3"}) || !strings.Contains(v.Text, "below token 70") {
			t.Errorf("violation %+v should name n2's token 70", v)
		}
	}
}
