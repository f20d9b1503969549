package harness

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"chunklease/maelstrom/nemesis"
)

// The member nemesis (nemesis.Member): the runner changes the acceptor
// set while the run goes on, through the nodes' own membership procedure
// (lease/doc.go "Membership"), as an operator would: member_remove or
// member_add of one node, sent to a node that is up, one change at a
// time. It keeps the configuration as the nodes last answered it and
// draws each change from it: a removal while more than a majority of the
// nodes are members (a member that is down first, half the time: the
// replacement of a dead member), an addition while fewer are, either
// otherwise. The op's invoke names the change and the node asked; its
// completion is the node's answer (the configuration, or the error), or
// a timeout. Every node runs with LEASE_MEMBERSHIP=on.

// memberWork is the member nemesis's state.
type memberWork struct {
	rng     *rand.Rand
	client  Client   // the nemesis's own client identity, opened at the first change
	members []string // the configuration as the nodes last answered it
	epoch   uint64
}

// memberChange is a member op's invoke value.
type memberChange struct {
	Op   string `json:"op"`   // add or remove
	Node string `json:"node"` // the node added or removed
	Via  string `json:"via"`  // the node asked
}

// memberEnv is what the member fault adds to every node's environment.
func (r *runner) memberEnv() []string {
	if !r.o.Faults.Member {
		return nil
	}
	return []string{"LEASE_MEMBERSHIP=on"}
}

// startMembers sets the member nemesis up: the start configuration is
// every node, or the LEASE_ACCEPTORS list the nodes are given.
func (r *runner) startMembers(rng *rand.Rand) {
	r.member = memberWork{rng: rng, members: slices.Clone(r.o.Nodes)}
	if list := strings.TrimSpace(os.Getenv("LEASE_ACCEPTORS")); list != "" && list != "all" && list != "self" {
		r.member.members = strings.Split(list, ",")
	}
}

// performMember draws a change, records its invoke and sends it; the
// completion is recorded when the node answers (or the call times out),
// and no other nemesis op starts before.
func (r *runner) performMember() {
	m := &r.member
	if m.client == nil {
		m.client = r.net.OpenClient()
	}
	ch := r.drawMember()
	r.recordNemesis(nemesis.MemberOp, ch)
	req, _ := json.Marshal(map[string]string{"type": "member_" + ch.Op, "node": ch.Node})
	done := make(chan error, 1)
	var reply json.RawMessage
	var callErr error
	client, ctx := m.client, r.nemesis.ctx
	r.nemesis.bg.Add(1)
	go func() {
		defer r.nemesis.bg.Done()
		reply, callErr = client.Call(ctx, ch.Via, req, ClientTimeout)
		done <- nil
	}()
	r.nemesis.pending(done, func() { r.recordNemesis(nemesis.MemberOp, r.memberOutcome(ch, reply, callErr)) })
}

// drawMember picks the change and the node to ask (one that is neither
// killed nor paused, if there is one).
func (r *runner) drawMember() memberChange {
	m, nodes := &r.member, r.o.Nodes
	var outside, down []string
	for _, id := range nodes {
		if !slices.Contains(m.members, id) {
			outside = append(outside, id)
		}
	}
	up := slices.DeleteFunc(slices.Clone(nodes), func(id string) bool {
		return slices.Contains(r.faults.killed, id) || slices.Contains(r.faults.paused, id)
	})
	for _, id := range m.members {
		if slices.Contains(r.faults.killed, id) {
			down = append(down, id)
		}
	}
	if len(up) == 0 {
		up = nodes
	}
	ch := memberChange{Via: up[m.rng.IntN(len(up))]}
	add := len(outside) > 0 && (len(m.members) <= len(nodes)/2+1 || m.rng.IntN(2) == 0)
	switch {
	case len(outside) == 0 && len(m.members) <= len(nodes)/2+1:
		// One or two nodes: no change keeps a majority of them; asking to
		// add a member changes nothing, and the answer is the configuration.
		ch.Op, ch.Node = "add", m.members[m.rng.IntN(len(m.members))]
	case add:
		ch.Op, ch.Node = "add", outside[m.rng.IntN(len(outside))]
	case len(down) > 0 && m.rng.IntN(2) == 0:
		ch.Op, ch.Node = "remove", down[m.rng.IntN(len(down))]
	default:
		ch.Op, ch.Node = "remove", m.members[m.rng.IntN(len(m.members))]
	}
	return ch
}

// memberOutcome is a member op's completion value: the change with the
// configuration the node answered (which the nemesis adopts if newer), its
// error, or that the call timed out.
func (r *runner) memberOutcome(ch memberChange, reply json.RawMessage, callErr error) any {
	out := map[string]any{"op": ch.Op, "node": ch.Node, "via": ch.Via}
	if callErr != nil {
		out["timeout"] = true
		return out
	}
	var body struct {
		Type    string   `json:"type"`
		Epoch   uint64   `json:"epoch"`
		Members []string `json:"members"`
		Code    *int     `json:"code"`
		Text    string   `json:"text"`
	}
	if json.Unmarshal(reply, &body) != nil {
		out["reply"] = string(reply)
		return out
	}
	if body.Code != nil {
		out["error"], out["text"] = *body.Code, body.Text
		return out
	}
	out["epoch"], out["members"] = body.Epoch, body.Members
	if m := &r.member; body.Epoch > m.epoch || body.Epoch == m.epoch && len(body.Members) > 0 {
		m.epoch, m.members = body.Epoch, body.Members
	}
	return out
}
