package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// nodeNames returns n0 .. n(n-1).
func nodeNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%d", i)
	}
	return out
}

// rounds is how many random grudges each shape is checked on.
const rounds = 200

// eachGrudge computes `rounds` grudges of target over n nodes and passes
// each to check.
func eachGrudge(t *testing.T, target Target, n int, check func(g Grudge) string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(testSeed(t), 7))
	nodes := nodeNames(n)
	for range rounds {
		g, err := Compute(target, nodes, rng)
		if err != nil {
			t.Fatal(err)
		}
		if problem := check(g); problem != "" {
			t.Fatalf("%s at n=%d: %s: %v", target, n, problem, g)
		}
	}
}

// drops reports whether receiver a drops sender b.
func drops(g Grudge, a, b string) bool { return slices.Contains(g[a], b) }

func symmetric(g Grudge) bool {
	for a, srcs := range g {
		for _, b := range srcs {
			if !drops(g, b, a) {
				return false
			}
		}
	}
	return true
}

// sides checks a complete two-way split into components of the given
// sizes (smaller first): every node is a key, and a node drops exactly
// the nodes of the other component.
func sides(g Grudge, nodes []string, small, large int) string {
	if len(g) != len(nodes) {
		return fmt.Sprintf("%d keys, want every node (%d)", len(g), len(nodes))
	}
	var smallSide, largeSide []string
	for _, x := range nodes {
		switch len(g[x]) {
		case large:
			smallSide = append(smallSide, x)
		case small:
			largeSide = append(largeSide, x)
		default:
			return fmt.Sprintf("%s drops %d nodes, want %d or %d", x, len(g[x]), small, large)
		}
	}
	if small == large { // 2|2 or 1|1: split by who drops whom
		smallSide, largeSide = []string{nodes[0]}, nil
		for _, x := range nodes[1:] {
			if drops(g, nodes[0], x) {
				largeSide = append(largeSide, x)
			} else {
				smallSide = append(smallSide, x)
			}
		}
	}
	if len(smallSide) != small || len(largeSide) != large {
		return fmt.Sprintf("components %v | %v, want sizes %d | %d", smallSide, largeSide, small, large)
	}
	for _, a := range smallSide {
		for _, b := range largeSide {
			if !drops(g, a, b) || !drops(g, b, a) {
				return fmt.Sprintf("%s and %s are on different sides but connected", a, b)
			}
		}
	}
	return ""
}

// noop checks that nobody drops anybody.
func noop(g Grudge) string {
	for a, srcs := range g {
		if len(srcs) > 0 {
			return fmt.Sprintf("%s drops %v, want a no-op", a, srcs)
		}
	}
	return ""
}

func TestSplitShapes(t *testing.T) {
	cases := []struct {
		target      Target
		n           int
		small, larg int // 0|n means no partition
	}{
		{One, 1, 0, 1}, {One, 2, 1, 1}, {One, 3, 1, 2}, {One, 4, 1, 3}, {One, 5, 1, 4}, {One, 7, 1, 6},
		{Majority, 1, 0, 1}, {Majority, 2, 1, 1}, {Majority, 3, 1, 2}, {Majority, 4, 2, 2},
		{Majority, 5, 2, 3}, {Majority, 7, 3, 4}, {Majority, 25, 12, 13},
		{MinorityThird, 1, 0, 1}, {MinorityThird, 2, 0, 2}, {MinorityThird, 3, 0, 3},
		{MinorityThird, 4, 1, 3}, {MinorityThird, 5, 1, 4}, {MinorityThird, 7, 2, 5}, {MinorityThird, 25, 8, 17},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/n=%d", c.target, c.n), func(t *testing.T) {
			nodes := nodeNames(c.n)
			eachGrudge(t, c.target, c.n, func(g Grudge) string {
				if c.small == 0 {
					if len(g) != c.n {
						return fmt.Sprintf("%d keys, want every node", len(g))
					}
					return noop(g)
				}
				return sides(g, nodes, c.small, c.larg)
			})
		})
	}
}

func TestRingNoopAtOneAndTwo(t *testing.T) {
	for _, n := range []int{1, 2} {
		eachGrudge(t, MajoritiesRing, n, noop)
	}
}

// TestRingThreeIsDirected: with ring order a, b, c, b drops c, c drops a
// and a drops b: each node hears only its predecessor, so no pair can
// complete a request and its response.
func TestRingThreeIsDirected(t *testing.T) {
	eachGrudge(t, MajoritiesRing, 3, func(g Grudge) string {
		if len(g) != 3 {
			return "want 3 keys"
		}
		for a, srcs := range g {
			if len(srcs) != 1 {
				return fmt.Sprintf("%s drops %v, want exactly one node", a, srcs)
			}
			if srcs[0] == a {
				return a + " drops itself"
			}
			if drops(g, srcs[0], a) {
				return fmt.Sprintf("%s and %s drop each other: want a directed ring", a, srcs[0])
			}
		}
		// a drops b, b drops c, c drops a: following drops from any node
		// visits all three and returns.
		x := "n0"
		seen := map[string]bool{}
		for range 3 {
			seen[x] = true
			x = g[x][0]
		}
		if x != "n0" || len(seen) != 3 {
			return "drops do not form a 3-cycle"
		}
		return ""
	})
}

// TestRingFourIsTwoCuts: each node loses exactly the opposite node of the
// ring, both ways (cuts a-c and b-d).
func TestRingFourIsTwoCuts(t *testing.T) {
	eachGrudge(t, MajoritiesRing, 4, func(g Grudge) string {
		if len(g) != 4 || !symmetric(g) {
			return "want 4 keys and symmetric drops"
		}
		for a, srcs := range g {
			if len(srcs) != 1 || srcs[0] == a {
				return fmt.Sprintf("%s drops %v, want exactly one other node", a, srcs)
			}
		}
		return ""
	})
}

// TestRingFiveIsSymmetricRing: each node hears itself and its two ring
// neighbours, and the "hears" relation forms one 5-cycle.
func TestRingFiveIsSymmetricRing(t *testing.T) {
	nodes := nodeNames(5)
	eachGrudge(t, MajoritiesRing, 5, func(g Grudge) string {
		if len(g) != 5 || !symmetric(g) {
			return "want 5 keys and symmetric drops"
		}
		hears := map[string][]string{}
		for _, a := range nodes {
			if len(g[a]) != 2 || drops(g, a, a) {
				return fmt.Sprintf("%s drops %v, want two other nodes", a, g[a])
			}
			for _, b := range nodes {
				if b != a && !drops(g, a, b) {
					hears[a] = append(hears[a], b)
				}
			}
		}
		prev, x := "", "n0"
		seen := map[string]bool{}
		for range 5 {
			seen[x] = true
			next := hears[x][0]
			if next == prev {
				next = hears[x][1]
			}
			prev, x = x, next
		}
		if x != "n0" || len(seen) != 5 {
			return "neighbours do not form one 5-cycle"
		}
		return ""
	})
}

// TestRingStochastic: for n >= 6 every node is linked to a majority
// (itself included), the drops are symmetric, and some node is cut off
// from someone (it is a partition).
func TestRingStochastic(t *testing.T) {
	for _, n := range []int{6, 7, 9, 25} {
		nodes := nodeNames(n)
		eachGrudge(t, MajoritiesRing, n, func(g Grudge) string {
			if len(g) != n || !symmetric(g) {
				return "want every node as a key and symmetric drops"
			}
			cut := false
			for _, a := range nodes {
				if drops(g, a, a) {
					return a + " drops itself"
				}
				if hears := n - len(g[a]); hears < majority(n) {
					return fmt.Sprintf("%s hears %d nodes, want >= %d", a, hears, majority(n))
				}
				cut = cut || len(g[a]) > 0
			}
			if !cut {
				return "nobody drops anybody"
			}
			return ""
		})
	}
}

func TestComputeIsReproducible(t *testing.T) {
	seed := testSeed(t)
	nodes := nodeNames(7)
	for _, target := range Targets {
		a, _ := Compute(target, nodes, rand.New(rand.NewPCG(seed, 1)))
		b, _ := Compute(target, nodes, rand.New(rand.NewPCG(seed, 1)))
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: same seed, different grudges %v and %v", target, a, b)
		}
	}
	if _, err := Compute("bridge", nodes, rand.New(rand.NewPCG(seed, 1))); err == nil {
		t.Error("unknown target accepted")
	}
}
