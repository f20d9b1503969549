package master

import (
	"cmp"
	"fmt"
	"slices"
)

// The fencing rules of the master lease (contract section 1: a master's
// token is strictly greater, for each new mastership and each renewal,
// than any token an earlier master was told). A belief b is later than a
// belief a when a ended before b began (a.endNs <= b.startNs): then b's
// token must be above a's when another node was told a, and not below it
// when the same node was (two statuses of one instance name one token).
// Beliefs that overlap say nothing about order: two statuses of one node
// may be answered in any order, and two nodes that overlap are a
// two-masters violation already. Checked:
//
//   - token-missing: every is_master answer, empty beliefs included,
//     carries a token;
//   - token-shared: no token is told to two nodes, whenever;
//   - token-back: each non-empty belief against the largest token of
//     the beliefs that ended before it began (a sweep by start, the ended
//     beliefs taken in end order): one violation per belief whose token
//     is below it, naming that earlier belief. (An equal token of another
//     node is token-shared.)

// tokenViolations checks answers (every is_master answer) and beliefs
// (the non-empty ones).
func tokenViolations(answers, beliefs []masterBelief) []MasterViolation {
	var out []MasterViolation
	firstOf := map[int64][]masterBelief{} // token -> each node's first answer with it
	for _, b := range answers {
		if b.token == 0 {
			out = append(out, tokenMissing(b))
			continue
		}
		told := firstOf[b.token]
		if slices.ContainsFunc(told, func(a masterBelief) bool { return a.node == b.node }) {
			continue
		}
		for _, a := range told {
			out = append(out, tokenShared(a, b))
		}
		firstOf[b.token] = append(told, b)
	}
	return append(out, tokensBack(beliefs)...)
}

// tokensBack sweeps the beliefs by start, keeping the belief with the
// largest token among those that ended by the current start.
func tokensBack(beliefs []masterBelief) []MasterViolation {
	withToken := slices.DeleteFunc(slices.Clone(beliefs), func(b masterBelief) bool { return b.token == 0 })
	byStart := slices.Clone(withToken)
	slices.SortStableFunc(byStart, func(a, b masterBelief) int {
		return cmp.Or(cmp.Compare(a.startNs, b.startNs), cmp.Compare(a.invoke, b.invoke))
	})
	byEnd := withToken
	slices.SortStableFunc(byEnd, func(a, b masterBelief) int {
		return cmp.Or(cmp.Compare(a.endNs, b.endNs), cmp.Compare(a.invoke, b.invoke))
	})
	var out []MasterViolation
	var best masterBelief // the ended belief with the largest token; token 0: none yet
	ended := 0
	for _, b := range byStart {
		for ; ended < len(byEnd) && byEnd[ended].endNs <= b.startNs; ended++ {
			if byEnd[ended].token > best.token {
				best = byEnd[ended]
			}
		}
		if best.token > b.token {
			out = append(out, tokenBack(best, b))
		}
	}
	return out
}

func tokenMissing(b masterBelief) MasterViolation {
	return MasterViolation{Kind: TokenMissing, Nodes: []string{b.node}, Ops: []int{b.invoke, b.done},
		StartNs: b.startNs, EndNs: max(b.startNs, b.endNs),
		Text: fmt.Sprintf("%s answered is_master true without a token: its mastership cannot be fenced", describeBelief(b))}
}

// tokenShared: a and b, of different nodes, name one token; a came first.
func tokenShared(a, b masterBelief) MasterViolation {
	first, last := a, b
	if b.startNs < a.startNs {
		first, last = b, a
	}
	return MasterViolation{Kind: TokenShared, Nodes: []string{a.node, b.node}, Ops: []int{a.invoke, a.done, b.invoke, b.done},
		StartNs: first.startNs, EndNs: max(last.endNs, last.startNs),
		Text: fmt.Sprintf("%s and %s were both told token %d: one token must name one master", describeBelief(a), describeBelief(b), a.token)}
}

// tokenBack: b began after a ended, and its token is below a's. Nodes
// names a node once when a and b are its own.
func tokenBack(a, b masterBelief) MasterViolation {
	nodes := []string{a.node, b.node}
	if a.node == b.node {
		nodes = nodes[:1]
	}
	return MasterViolation{Kind: TokenBack, Nodes: nodes, Ops: []int{a.invoke, a.done, b.invoke, b.done},
		StartNs: a.startNs, EndNs: b.endNs,
		Text: fmt.Sprintf("%s was told token %d, below token %d that %s was told before (that mastership ended before this one began)",
			describeBelief(b), b.token, a.token, describeBelief(a))}
}

// describeBelief names a status and its belief as the two-masters texts
// do: "n2 (status ops 12-13 via n2, master during [0.135s, 1.053s))".
func describeBelief(b masterBelief) string {
	return fmt.Sprintf("%s (status ops %d-%d via %s, master during [%s, %s))",
		b.node, b.invoke, b.done, b.node, secondsText(b.startNs), secondsText(max(b.startNs, b.endNs)))
}
