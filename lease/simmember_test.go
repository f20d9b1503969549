package lease_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"chunklease/lease"
	leasewl "chunklease/workloads/lease"
)

// Membership changes in the simulation (doc.go "Membership"). In the
// schedules with membership on, a member nemesis adds and removes members
// while the workload runs, through any live node, now and then from two
// nodes at once, and now and then asking for two members at once (which
// the core refuses); the start set is often a subset of the nodes, so
// there are learners to add; a node outside it may start late as a
// brand-new identity (no boot wait), some of them joining without a
// configuration (Config.Join); and the crash nemesis restarts removed
// members too, so a departed identity comes back as a restart and may be
// added again. Every configuration a node adopts is recorded: two member
// sets at one epoch are a violation of their own.

// memberSettings are a scenario's membership faults.
type memberSettings struct {
	membership bool
	member     time.Duration // mean time between membership changes; 0: none
	concurrent float64       // probability that a second node asks for a change at the same time
	replaceP   float64       // probability that a change asks for two members at once
	forceP     float64       // probability that a change is forced
	late       []int         // nodes outside the start set that start late, as brand-new identities
	join       bool          // late nodes start knowing no configuration (Config.Join)
	// script is a fixed sequence of changes, made one after the other
	// from quietFrom on while the clients send nothing; they resume once
	// the last change is in force (a maintenance window).
	script    []lease.Request
	quietFrom time.Duration
	// paced: the operator asks for the next change the moment the last
	// answer says it may (next_change_in_ms of an ok, retry_in_ms of a
	// waiting refusal), as docs/service.md tells operators to, and not
	// before; the random nemesis then only stands in for answers that
	// never came. A change asked the moment a member's lead ends its
	// waiting rule is the one that finds the member's other cores still
	// on the previous configuration, if the shell has not handed it to
	// them yet (doc.go "Membership and cores").
	paced bool
}

var simMembership = flag.Bool("membership", false,
	"turn membership changes on in every schedule whose profile allows them (the membership soak)")

// drawMembership turns membership on in an eighth of the schedules (with
// -membership in all that allow it), from a stream of its own, so that a
// seed's other settings stay what they were: a quarter of those become
// the membership profile, an eighth the maintenance window
// (freshMembers), the rest keep their profile with the member nemesis
// added. Profiles that restart a majority at once (whole-cluster storms,
// site outages) keep it off: after such a restart nothing remembers the
// configuration (doc.go "Restarts"), and storms elsewhere are turned into
// minority crashes.
func drawMembership(seed uint64, s *scenario) {
	rng := rand.New(rand.NewPCG(seed, 0x3e3b))
	if s.self || s.wholeCluster || s.outage > 0 || !*simMembership && rng.IntN(8) > 0 {
		return
	}
	switch rng.IntN(8) {
	case 0, 1:
		s.membershipProfile(rng)
	case 2:
		s.freshMembers(rng)
	default:
		s.membershipOn(rng)
	}
	s.drawPaced()
}

// drawPaced makes the operator paced (memberSettings.paced) in half the
// schedules with a member nemesis, from a stream of its own, so that a
// seed's other settings stay what they were.
func (s *scenario) drawPaced() {
	s.paced = s.member > 0 && s.script == nil && rand.New(rand.NewPCG(s.seed, 0x9aced)).IntN(2) == 0
}

// membershipOn adds the member nemesis to a scenario.
func (s *scenario) membershipOn(rng *rand.Rand) {
	s.memberSettings = memberSettings{membership: true, concurrent: 0.2, replaceP: 0.05, forceP: 0.05,
		member: time.Duration(200+rng.IntN(1200)) * time.Millisecond}
	s.storm, s.minorityCrashes = 0, true
	if s.acceptors == nil && rng.IntN(2) == 0 {
		perm := rng.Perm(s.nodes)
		s.acceptors = perm[:2+rng.IntN(s.nodes-1)]
		slices.Sort(s.acceptors)
	}
	if outside := s.outsideStart(); len(outside) > 0 && rng.IntN(2) == 0 {
		s.late = []int{outside[rng.IntN(len(outside))]}
		s.join = rng.IntN(2) == 0
	}
}

// membershipProfile is where the membership rules are needed: five nodes,
// three of them the start set, changes every few hundred milliseconds,
// leases of a few hundred, partitions that hold messages, minority
// crashes, clients behind a load balancer, and wall clocks absent in half
// the schedules (then only the configurations' floors order tokens across
// changes).
func (s *scenario) membershipProfile(rng *rand.Rand) {
	s.resetProfile()
	s.profile = "membership"
	s.nodes, s.uplink, s.outage, s.balanced = 5, 0, 0, true
	s.acceptors = rng.Perm(5)[:3]
	slices.Sort(s.acceptors)
	s.servers, s.chunks = 2+rng.IntN(2), 1+rng.IntN(2)
	s.workers = 6 + rng.IntN(8)
	s.leaseMs = 300 + rng.Int64N(500)
	s.rate = 40 + 40*rng.Float64()
	s.duration = time.Duration(8+rng.IntN(5)) * time.Second
	s.latency = latency{kind: "uniform", mean: time.Duration(1+rng.IntN(5)) * time.Millisecond}
	s.lossP, s.dupP, s.spikeP, s.dupClientP = 0.05*rng.Float64(), 0.05*rng.Float64(), 0.02*rng.Float64(), 0
	s.partition, s.hold = time.Duration(300+rng.IntN(900))*time.Millisecond, rng.IntN(2) == 0
	s.crash, s.storm, s.pause = time.Duration(500+rng.IntN(1500))*time.Millisecond, 0, 0
	s.driftPPM, s.clockEdge = rng.Int64N(1000), false
	s.wallClock, s.wallSkew, s.minorityCrashes = rng.IntN(2) == 0, time.Duration(s.leaseMs/10)*time.Millisecond, true
	s.memberSettings = memberSettings{membership: true, concurrent: 0.3, replaceP: 0.1, forceP: 0.1,
		member: time.Duration(150+rng.IntN(400)) * time.Millisecond}
	if rng.IntN(2) == 0 {
		s.late = []int{s.outsideStart()[rng.IntN(2)]}
		s.join = rng.IntN(2) == 0
	}
}

// freshMembers is a maintenance window: the start set n1, n2, n3 serves
// a few chunks; then the clients stop, two brand-new nodes start and
// replace n1 and n2 (add n4, add n5, remove n1, remove n2, each once the
// waiting rule allows), and the clients resume, through every node. No
// wall clocks: the new members never saw a ballot of the chunks, and the
// proposers that first ask them do not either, so only the floor the
// configurations carry keeps the new tokens above the old ones.
func (s *scenario) freshMembers(rng *rand.Rand) {
	s.resetProfile()
	s.profile = "fresh-members"
	s.nodes, s.acceptors, s.uplink, s.outage, s.balanced = 5, []int{0, 1, 2}, 0, 0, false
	s.servers, s.chunks = 2+rng.IntN(2), 1+rng.IntN(3)
	s.workers = 5 + rng.IntN(6)
	s.leaseMs = 200 + rng.Int64N(300)
	s.rate = 40 + 40*rng.Float64()
	s.latency = latency{kind: "uniform", mean: time.Duration(1+rng.IntN(4)) * time.Millisecond}
	s.lossP, s.dupP, s.spikeP, s.dupClientP = 0.02*rng.Float64(), 0, 0, 0
	s.partition, s.crash, s.storm, s.pause = 0, 0, 0, 0
	s.driftPPM, s.clockEdge = rng.Int64N(1000), false
	s.wallClock, s.wallSkew, s.minorityCrashes = false, 0, true
	s.quietFrom = time.Duration(500+rng.IntN(1000)) * time.Millisecond
	s.duration = s.quietFrom + 6*time.Duration(s.leaseMs)*time.Millisecond + 3*time.Second
	s.memberSettings = memberSettings{membership: true, member: 50 * time.Millisecond, late: []int{3, 4},
		script: []lease.Request{{Op: lease.OpMemberAdd, Member: "n4"}, {Op: lease.OpMemberAdd, Member: "n5"},
			{Op: lease.OpMemberRemove, Member: "n1"}, {Op: lease.OpMemberRemove, Member: "n2"}},
		quietFrom: s.quietFrom}
}

// resetProfile clears what another profile drawn before may have set
// that a membership profile does not set itself.
func (s *scenario) resetProfile() {
	s.minLeaseMs, s.aheadSkew, s.behindAll, s.aheadFixed, s.assertFencing = 0, 0, false, false, false
	s.oneAtATime, s.oneVictim, s.wholeCluster, s.downMin, s.downMax, s.ballotUnit = false, false, false, 0, 0, 0
	s.marginMs, s.clientsInMargin, s.clientOutside, s.noBootWait = 0, false, false, false
}

// outsideStart lists the nodes outside the start set.
func (s *scenario) outsideStart() []int {
	var out []int
	for i := range s.nodes {
		if s.acceptors != nil && !slices.Contains(s.acceptors, i) {
			out = append(out, i)
		}
	}
	return out
}

// memberText renders the membership settings for a scenario's line.
func (m memberSettings) memberText() string {
	if !m.membership {
		return ""
	}
	return fmt.Sprintf(" membership=%v concurrent=%.2f replace=%.2f force=%.2f late=%v join=%v paced=%v",
		m.member, m.concurrent, m.replaceP, m.forceP, m.late, m.join, m.paced)
}

// memberWorld is what the world keeps for membership.
type memberWorld struct {
	calls   map[uint64]memberCall // change requests in flight, by request id
	confs   map[uint64][]string   // the member set adopted at each epoch, sorted
	newest  uint64                // the highest epoch any node adopted
	bad     []string              // configurations that disagree
	step    int                   // the script's next change
	asked   bool                  // the script's next change is in flight
	changes int                   // changes answered ok
	// allowedAt: paced, no change is asked before it (the last answer's
	// wait).
	allowedAt time.Duration
}

// memberCall is one change request the nemesis made.
type memberCall struct {
	via        int
	req        lease.Request
	invokedAt  time.Duration
	invokeText map[string]any
}

// startMembership sets up the world's membership: the start set, and the
// first member nemesis and late starts.
func (w *world) startMembership() {
	w.mw = memberWorld{calls: map[uint64]memberCall{}, confs: map[uint64][]string{}}
	start := w.ids
	if w.sc.acceptors != nil {
		start = w.names(w.sc.acceptors)
	}
	w.mw.confs[0] = sortedCopy(start)
	if w.sc.member > 0 {
		w.push(event{at: w.expDelay(w.sc.member), kind: evMember})
	}
	for _, i := range w.sc.late {
		at := time.Duration(w.rng.Int64N(int64(w.sc.duration / 2)))
		if w.sc.script != nil {
			at = w.sc.quietFrom + time.Duration(w.rng.Int64N(int64(50*time.Millisecond)))
		}
		w.push(event{at: at, kind: evJoin, node: i})
	}
}

// quiet reports whether the clients hold back: from quietFrom until the
// script's last change is in force.
func (w *world) quiet() bool {
	return w.sc.script != nil && w.now >= w.sc.quietFrom && w.mw.step < len(w.sc.script)
}

// startsLate reports whether node i starts later than time 0.
func (w *world) startsLate(i int) bool { return slices.Contains(w.sc.late, i) }

// joinLate starts a late node for the first time: a brand-new identity,
// without a boot wait.
func (w *world) joinLate(i int) {
	if w.nodes[i].core != nil || w.nodes[i].started {
		return
	}
	w.boot(i, 0)
	w.recordNemesis("start", w.names([]int{i}), map[string]any{"node": w.ids[i], "new-identity": true, "join": w.sc.join})
}

// joinConfig marks a late node's config as joining: it knows no
// configuration, only whom to ask.
func (w *world) joinConfig(i int, cfg lease.Config) lease.Config {
	cfg.Membership = w.sc.membership
	if w.sc.join && w.startsLate(i) && !w.nodes[i].started {
		cfg.Join, cfg.Acceptors = true, w.ids
	}
	return cfg
}

// noteAdopted records a configuration a node adopted; two member sets at
// one epoch are a violation.
func (w *world) noteAdopted(i int, c *lease.Membership) {
	if c == nil {
		return
	}
	members := sortedCopy(c.Members)
	if prev, ok := w.mw.confs[c.Epoch]; ok && !slices.Equal(prev, members) {
		w.mw.bad = append(w.mw.bad, fmt.Sprintf("%s adopted epoch %d as %v at %v, but epoch %d is %v elsewhere",
			w.ids[i], c.Epoch, members, w.now, c.Epoch, prev))
		return
	}
	w.mw.confs[c.Epoch] = members
	w.mw.newest = max(w.mw.newest, c.Epoch)
}

// membershipViolations are the schedule's disagreeing configurations.
func (w *world) membershipViolations() []leasewl.Violation {
	var out []leasewl.Violation
	for _, text := range w.mw.bad {
		out = append(out, leasewl.Violation{Kind: "two-configurations", Text: text})
	}
	return out
}

// memberChange is the member nemesis: through a random live node, add a
// node outside the newest configuration or remove a member; sometimes a
// second node asks for another change at the same time.
func (w *world) memberChange(e event) {
	if e.call == 0 {
		w.push(event{at: w.expDelay(w.sc.member), kind: evMember})
	}
	if w.now >= w.sc.duration {
		return
	}
	if w.sc.script != nil {
		w.scriptChange()
		return
	}
	if w.sc.paced && (w.memberAsking() || w.now < w.mw.allowedAt) {
		return // the operator waits for the answer, or for the time it named
	}
	w.issueMember()
	if w.rng.Float64() < w.sc.concurrent {
		w.issueMember()
	}
}

// issueMember draws one change and hands it to a live node.
func (w *world) issueMember() {
	var live []int
	for i, n := range w.nodes {
		if n.core != nil && !n.paused {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return
	}
	req, ok := w.drawChange()
	if !ok {
		return
	}
	w.askMember(live[w.rng.IntN(len(live))], req)
}

// askMember hands a change request to node via.
func (w *world) askMember(via int, req lease.Request) {
	w.clients.reqSeq++
	req.ID = w.clients.reqSeq
	w.mw.calls[req.ID] = memberCall{via: via, req: req, invokedAt: w.now}
	n := w.nodes[via]
	w.absorb(via, n.core.Request(n.local(w.now), req))
}

// scriptChange asks for the script's next change through a live member
// of the newest configuration, once the previous one is answered.
func (w *world) scriptChange() {
	if w.now < w.sc.quietFrom || w.mw.step >= len(w.sc.script) || w.mw.asked {
		return
	}
	var via []int
	for _, id := range w.mw.confs[w.mw.newest] {
		if n := w.nodes[w.index(id)]; n.core != nil && !n.paused && !w.startsLate(w.index(id)) {
			via = append(via, w.index(id))
		}
	}
	if len(via) == 0 {
		return
	}
	req := w.sc.script[w.mw.step]
	w.mw.asked = true
	w.askMember(via[w.rng.IntN(len(via))], req)
}

// scriptRoute binds workers to the start set before the maintenance
// window and to the nodes that started late after it: the new members'
// first ballots are the ones the configuration's floor must lift.
func (w *world) scriptRoute(worker int) int {
	if w.now < w.sc.quietFrom || len(w.sc.late) == 0 {
		return w.sc.acceptors[worker%len(w.sc.acceptors)]
	}
	return w.sc.late[worker%len(w.sc.late)]
}

// drawChange picks a change relative to the newest configuration: mostly
// one member added or removed, keeping two to all nodes; sometimes a
// replacement (two at once); sometimes forced.
func (w *world) drawChange() (lease.Request, bool) {
	members := w.mw.confs[w.mw.newest]
	var outside []string
	for _, id := range w.ids {
		if !slices.Contains(members, id) {
			outside = append(outside, id)
		}
	}
	req := lease.Request{Force: w.rng.Float64() < w.sc.forceP}
	add := len(outside) > 0 && (len(members) <= 2 || w.rng.IntN(2) == 0)
	switch {
	case len(outside) > 0 && len(members) > 1 && w.rng.Float64() < w.sc.replaceP:
		req.Op, req.Member, req.Replacement = lease.OpMemberReplace, pick1(w.rng, members), pick1(w.rng, outside)
	case add:
		req.Op, req.Member = lease.OpMemberAdd, pick1(w.rng, outside)
	case len(members) > 1:
		req.Op, req.Member = lease.OpMemberRemove, pick1(w.rng, members)
	default:
		return req, false
	}
	return req, true
}

func pick1(rng *rand.Rand, ids []string) string { return ids[rng.IntN(len(ids))] }

// memberReply records a change's outcome in the history, as a nemesis op,
// and reports whether r answered one.
func (w *world) memberReply(r lease.Reply) bool {
	call, ok := w.mw.calls[r.ID]
	if !ok {
		return false
	}
	delete(w.mw.calls, r.ID)
	if w.sc.script != nil {
		w.mw.asked = false
		if r.Err == nil {
			w.mw.step++
		}
	}
	if r.Err == nil {
		w.mw.changes++
	}
	w.paceNext(r)
	inv := map[string]any{"op": call.req.Op.String(), "node": call.req.Member, "via": w.ids[call.via]}
	if call.req.Replacement != "" {
		inv["replacement"] = call.req.Replacement
	}
	if call.req.Force {
		inv["force"] = true
	}
	var done any
	if r.Err != nil {
		done = map[string]any{"error": r.Err.Code, "text": r.Err.Text}
	} else {
		body, _ := json.Marshal(r.Body)
		done = json.RawMessage(body)
	}
	w.recordNemesis("member", inv, done)
	return true
}

// memberAsking reports whether a change asked within the client timeout
// is unanswered (one asked through a node that crashed is never answered;
// its operator gives up on it).
func (w *world) memberAsking() bool {
	for _, c := range w.mw.calls {
		if w.now-c.invokedAt < clientTimeout {
			return true
		}
	}
	return false
}

// paceNext: a paced operator asks for the next change when answer r
// says it may, within a few milliseconds of it (e.call 1 marks the
// follow-up, which schedules nothing further itself).
func (w *world) paceNext(r lease.Reply) {
	if !w.sc.paced {
		return
	}
	var waitMs int64
	switch {
	case r.Err == nil:
		if ok, isOK := r.Body.(lease.MemberOK); isOK {
			waitMs = ok.NextChangeInMs
		}
	case r.Err.RetryInMs > 0:
		waitMs = r.Err.RetryInMs
	default:
		return // the random nemesis asks again
	}
	jitter := time.Duration(w.rng.Int64N(int64(5 * time.Millisecond)))
	w.mw.allowedAt = w.now + time.Duration(waitMs)*time.Millisecond
	w.push(event{at: w.mw.allowedAt + jitter, kind: evMember, call: 1})
}

// mayCrash reports whether node i may crash now without a majority of
// the newest configuration, or of the one before it, forgetting at once
// (down or recovering): the membership fault model (doc.go "Restarts").
func (w *world) mayCrash(i int) bool {
	if !w.sc.membership {
		return w.forgetting()+1 <= w.sc.nodes-(w.sc.nodes/2+1)
	}
	for _, e := range []uint64{w.mw.newest, max(w.mw.newest, 1) - 1} {
		members, forgetting := w.mw.confs[e], 0
		if !slices.Contains(members, w.ids[i]) {
			continue
		}
		for _, id := range members {
			n := w.nodes[w.index(id)]
			if id == w.ids[i] || n.core == nil || n.core.Recovering() {
				forgetting++
			}
		}
		if forgetting >= len(members)/2+1 {
			return false
		}
	}
	return true
}

func sortedCopy(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}
