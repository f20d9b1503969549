package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Target is a partition shape, as Jepsen names it.
type Target string

// The four shapes Maelstrom's partition nemesis picks from.
const (
	One            Target = "one"
	MinorityThird  Target = "minority-third"
	Majority       Target = "majority"
	MajoritiesRing Target = "majorities-ring"
)

// Targets are the shapes in Jepsen's order; a start picks one uniformly.
var Targets = []Target{One, MinorityThird, Majority, MajoritiesRing}

// Grudge maps a receiver to the senders it drops (sorted).
type Grudge map[string][]string

// Compute builds the grudge of target over nodes.
func Compute(target Target, nodes []string, rng *rand.Rand) (Grudge, error) {
	switch target {
	case One:
		if len(nodes) == 0 {
			return Grudge{}, nil
		}
		loner := nodes[rng.IntN(len(nodes))]
		rest := slices.DeleteFunc(slices.Clone(nodes), func(x string) bool { return x == loner })
		return complete([]string{loner}, rest), nil
	case Majority:
		s := shuffled(nodes, rng)
		return complete(s[:len(s)/2], s[len(s)/2:]), nil
	case MinorityThird:
		s := shuffled(nodes, rng)
		k := minorityThird(len(s))
		return complete(s[:k], s[k:]), nil
	case MajoritiesRing:
		if len(nodes) <= 5 {
			return ringPerfect(shuffled(nodes, rng)), nil
		}
		return ringStochastic(nodes, rng), nil
	}
	return nil, fmt.Errorf("unknown partition target %q", target)
}

// majority is the smallest majority of n: floor(n/2)+1.
func majority(n int) int { return n/2 + 1 }

// minorityThird is the largest minority below a third: floor((n-1)/3).
func minorityThird(n int) int {
	if n < 1 {
		return 0
	}
	return (n - 1) / 3
}

func shuffled(nodes []string, rng *rand.Rand) []string {
	s := slices.Clone(nodes)
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

// complete cuts the components from one another both ways: every node
// drops every node outside its own component.
func complete(components ...[]string) Grudge {
	g := Grudge{}
	for i, comp := range components {
		var others []string
		for j, c := range components {
			if j != i {
				others = append(others, c...)
			}
		}
		slices.Sort(others)
		for _, node := range comp {
			g[node] = append([]string{}, others...)
		}
	}
	return g
}

// ringPerfect is Jepsen's majorities-ring-perfect over a ring already in
// random order: the middle node of each window of m consecutive nodes
// drops everyone outside the window.
func ringPerfect(ring []string) Grudge {
	n := len(ring)
	m := majority(n)
	g := Grudge{}
	for i := range n {
		window := map[string]bool{}
		for k := range m {
			window[ring[(i+k)%n]] = true
		}
		var drops []string
		for _, x := range ring {
			if !window[x] {
				drops = append(drops, x)
			}
		}
		slices.Sort(drops)
		g[ring[(i+m/2)%n]] = append([]string{}, drops...)
	}
	return g
}

// ringStochastic is Jepsen's majorities-ring-stochastic: link
// least-connected nodes until every node is linked to a majority (itself
// included), then drop the unlinked.
func ringStochastic(nodes []string, rng *rand.Rand) Grudge {
	m := majority(len(nodes))
	links := map[string]map[string]bool{}
	for _, x := range nodes {
		links[x] = map[string]bool{x: true}
	}
	for {
		order := byDegree(nodes, links, rng)
		a := order[0]
		if len(links[a]) >= m {
			break
		}
		for _, b := range order[1:] {
			if !links[a][b] {
				links[a][b], links[b][a] = true, true
				break
			}
		}
	}
	g := Grudge{}
	for _, x := range nodes {
		drops := []string{}
		for _, y := range nodes {
			if !links[x][y] {
				drops = append(drops, y)
			}
		}
		slices.Sort(drops)
		g[x] = drops
	}
	return g
}

// byDegree orders nodes by ascending link count, shuffling within each
// count, as Jepsen's (mapcat shuffle) over its degree map does.
func byDegree(nodes []string, links map[string]map[string]bool, rng *rand.Rand) []string {
	sorted := slices.Clone(nodes)
	slices.Sort(sorted) // a fixed starting order keeps a seed reproducible
	s := shuffled(sorted, rng)
	slices.SortStableFunc(s, func(a, b string) int { return len(links[a]) - len(links[b]) })
	return s
}
