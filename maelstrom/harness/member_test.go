package harness

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"chunklease/internal/testseed"
)

// TestMemberNemesisDraws drives the member nemesis against a model of the
// nodes' membership procedure (each change applied as asked, the answer
// the configuration after it) with random kills and pauses, and checks
// what an operator's changes must be: one node added or removed at a
// time, through a node that is up when one is, keeping the configuration
// between a majority of the nodes and all of them; dead members removed
// first half the time; and the nemesis's view following the answers.
func TestMemberNemesisDraws(t *testing.T) {
	seed := testseed.Get(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, n := range []int{1, 2, 3, 5, 7} {
		nodes := make([]string, n)
		for i := range nodes {
			nodes[i] = fmt.Sprintf("n%d", i)
		}
		r := &runner{o: Options{Nodes: nodes}}
		r.startMembers(rand.New(rand.NewPCG(seed, uint64(n))))
		members, epoch, removedDown, removals := slices.Clone(nodes), uint64(0), 0, 0
		for step := range 400 {
			r.faults.killed, r.faults.paused = pick(rng, nodes), pick(rng, nodes)
			ch := r.drawMember()
			up := !slices.Contains(r.faults.killed, ch.Via) && !slices.Contains(r.faults.paused, ch.Via)
			if !up && len(r.faults.killed)+len(r.faults.paused) < n && !covers(r.faults.killed, r.faults.paused, nodes) {
				t.Fatalf("n=%d step %d: asked %s, which is down, while another node is up", n, step, ch.Via)
			}
			switch ch.Op {
			case "add":
				switch {
				case slices.Contains(members, ch.Node) && n > 2:
					t.Fatalf("n=%d step %d: adds %s, already a member of %v", n, step, ch.Node, members)
				case !slices.Contains(members, ch.Node):
					members = append(members, ch.Node)
				}
			case "remove":
				if !slices.Contains(members, ch.Node) || len(members) <= n/2+1 {
					t.Fatalf("n=%d step %d: removes %s from %v", n, step, ch.Node, members)
				}
				removals++
				if slices.Contains(r.faults.killed, ch.Node) {
					removedDown++
				}
				members = slices.DeleteFunc(members, func(id string) bool { return id == ch.Node })
			default:
				t.Fatalf("n=%d step %d: op %q", n, step, ch.Op)
			}
			epoch++
			reply, _ := json.Marshal(map[string]any{"type": "member_" + ch.Op + "_ok", "epoch": epoch, "members": members})
			out := r.memberOutcome(ch, reply, nil).(map[string]any)
			if out["epoch"] != epoch || !slices.Equal(r.member.members, members) {
				t.Fatalf("n=%d step %d: the nemesis holds %v at %d after the answer %s", n, step, r.member.members, r.member.epoch, reply)
			}
		}
		if n >= 3 && (removals == 0 || removedDown == 0) {
			t.Errorf("n=%d: %d removals, %d of them of a killed member; want some of each", n, removals, removedDown)
		}
	}
}

// TestMemberOutcomeErrorsAndTimeouts: a refusal is recorded with its code
// and text and leaves the nemesis's view alone; a timeout says so.
func TestMemberOutcomeErrorsAndTimeouts(t *testing.T) {
	r := &runner{o: Options{Nodes: []string{"n0", "n1", "n2"}}}
	r.startMembers(rand.New(rand.NewPCG(1, 1)))
	ch := memberChange{Op: "add", Node: "n3", Via: "n0"}
	out := r.memberOutcome(ch, json.RawMessage(`{"type":"error","code":22,"text":"another change is waiting"}`), nil).(map[string]any)
	if out["error"] != 22 || out["text"] != "another change is waiting" || len(r.member.members) != 3 {
		t.Fatalf("refusal recorded as %v, view %v", out, r.member.members)
	}
	out = r.memberOutcome(ch, nil, ErrTimeout).(map[string]any)
	if out["timeout"] != true || len(r.member.members) != 3 {
		t.Fatalf("timeout recorded as %v, view %v", out, r.member.members)
	}
}

// pick is a random subset of nodes (often empty).
func pick(rng *rand.Rand, nodes []string) []string {
	var out []string
	for _, id := range nodes {
		if rng.IntN(4) == 0 {
			out = append(out, id)
		}
	}
	return out
}

// covers reports whether killed and paused together hold every node.
func covers(killed, paused, nodes []string) bool {
	for _, id := range nodes {
		if !slices.Contains(killed, id) && !slices.Contains(paused, id) {
			return false
		}
	}
	return true
}
