package master

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

// idealMaster is a correct master-lease service: one authoritative lease
// that started nodes acquire and renew at half-life, each request applied
// at its invoke time. status answers from the holder's own timer, as the
// contract asks; stop ends the holder's mastership at once (it renews no
// more and answers is_master false) and gives the lease back at the end
// it last announced. During an outage
// (a fault) no renewal or acquisition succeeds, so the holder lapses at
// its lease end and the next election waits for the outage to end.
// Replies come after a random delay; some are lost (applied, unanswered)
// and some fail definitely (not applied). Each new mastership and each
// renewal gets the next token of one counter, and status names the
// holder's. Three switches break it.
type idealMaster struct {
	rng                *rand.Rand
	nodes              int
	lease, election    time.Duration // lease length T; delay from a free lease to the next holder
	minDelay, maxDelay time.Duration
	lossRate, failRate float64
	outages            []workloads.Interval // virtual time, ns

	started     []bool
	holder      int           // -1: nobody
	stopped     bool          // the holder was stopped: no renewal, not master, lease ends at until
	until       time.Duration // the holder's lease end
	electAt     time.Duration // when a free lease gets its next holder; Never while nobody is started
	known       string        // the last holder's name, for "master"
	former      int           // the last node that lost the lease; -1 none
	lostAt      time.Duration // when former lost it
	token       int64         // the latest token handed out; the holder's while there is one
	formerToken int64         // former's token when it lost the lease
	terms       []int64       // each node's masterships and renewals, counted
	linger      time.Duration // broken: former keeps saying is_master this long after losing
	alwaysOwner int           // broken: this node says is_master whenever it is started; -1 off
	localTokens bool          // broken: a master's token is its own count of terms
}

func newIdealMaster(seed int64, nodes int) *idealMaster {
	return &idealMaster{
		rng: rand.New(rand.NewPCG(uint64(seed), 77)), nodes: nodes,
		lease: time.Second, election: 40 * time.Millisecond,
		minDelay: time.Millisecond, maxDelay: 10 * time.Millisecond,
		started: make([]bool, nodes), terms: make([]int64, nodes), holder: -1, electAt: workloads.Never, former: -1, alwaysOwner: -1,
	}
}

func (s *idealMaster) Handle(now time.Duration, node int, req json.RawMessage) (json.RawMessage, time.Duration) {
	delay := s.minDelay + time.Duration(s.rng.Int64N(int64(s.maxDelay-s.minDelay)+1))
	if s.rng.Float64() < s.failRate {
		return json.RawMessage(`{"type":"error","code":11,"text":"busy"}`), delay
	}
	var body struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(req, &body); err != nil {
		panic(err)
	}
	s.advance(now)
	var reply json.RawMessage
	switch body.Type {
	case "master_start":
		s.setStarted(now, node, true)
		reply = json.RawMessage(`{"type":"master_start_ok","in_reply_to":1}`)
	case "master_stop":
		if s.holder == node {
			s.stopped = true
		}
		s.setStarted(now, node, false)
		reply = json.RawMessage(`{"type":"master_stop_ok","in_reply_to":1}`)
	default:
		reply = s.status(now, node)
	}
	if s.rng.Float64() < s.lossRate {
		return nil, 0
	}
	return reply, delay
}

// advance plays renewals, lapses and elections up to now.
func (s *idealMaster) advance(now time.Duration) {
	for {
		switch {
		case s.holder >= 0:
			renewAt := s.outageEnd(s.until - s.lease/2)
			if !s.stopped && renewAt < s.until && renewAt <= now {
				s.until = renewAt + s.lease
				s.nextToken()
				continue
			}
			if s.until > now {
				return
			}
			s.lose(s.until)
		case s.electAt <= now:
			s.electAt = s.outageEnd(s.electAt)
			if s.electAt > now {
				return
			}
			s.elect()
		default:
			return
		}
	}
}

// elect gives the free lease to a random started node at electAt. A
// holder that lapsed in an outage was cut off from the majority that
// elects the next one, so another node is preferred.
func (s *idealMaster) elect() {
	var candidates []int
	for n, on := range s.started {
		if on && (n != s.former || s.outageEnd(s.lostAt) == s.lostAt) {
			candidates = append(candidates, n)
		}
	}
	if len(candidates) == 0 {
		candidates = append(candidates, s.former)
	}
	s.holder = candidates[s.rng.IntN(len(candidates))]
	s.until, s.known, s.electAt = s.electAt+s.lease, fmt.Sprintf("n%d", s.holder+1), workloads.Never
	s.nextToken()
}

// nextToken hands the holder a new token.
func (s *idealMaster) nextToken() {
	s.token++
	s.terms[s.holder]++
}

// lose ends the holder's lease at t and schedules the next election.
func (s *idealMaster) lose(t time.Duration) {
	s.former, s.lostAt, s.formerToken, s.holder, s.stopped = s.holder, t, s.token, -1, false
	s.until = t
	s.electAt = workloads.Never
	if slices.Contains(s.started, true) {
		s.electAt = t + s.election
	}
}

func (s *idealMaster) setStarted(now time.Duration, node int, on bool) {
	s.started[node] = on
	switch {
	case s.holder >= 0:
	case !slices.Contains(s.started, true):
		s.electAt = workloads.Never
	case s.electAt == workloads.Never:
		s.electAt = now + s.election
	}
}

// outageEnd is t, or the end of the outage t falls in.
func (s *idealMaster) outageEnd(t time.Duration) time.Duration {
	for _, o := range s.outages {
		if int64(t) >= o.StartNs && int64(t) < o.EndNs {
			return time.Duration(o.EndNs)
		}
	}
	return t
}

// status answers from node's own timer: remaining time floored to whole
// ms, never more than the truth.
func (s *idealMaster) status(now time.Duration, node int) json.RawMessage {
	end, token := time.Duration(0), s.token
	switch {
	case s.holder == node && !s.stopped:
		end = s.until
	case node == s.alwaysOwner && s.started[node]:
		end = now + s.lease/2
	case node == s.former && s.linger > 0:
		end, token = s.lostAt+s.linger, s.formerToken
	}
	if s.localTokens {
		token = s.terms[node]
	}
	master := "null"
	if s.known != "" {
		master = fmt.Sprintf("%q", s.known)
	}
	if end > now {
		return fmt.Appendf(nil, `{"type":"master_status_ok","is_master":true,"master":"n%d","remaining_ms":%d,"token":%d,"in_reply_to":1}`,
			node+1, (end-now)/time.Millisecond, token)
	}
	return fmt.Appendf(nil, `{"type":"master_status_ok","is_master":false,"master":%s,"remaining_ms":0,"in_reply_to":1}`, master)
}

// masterSimRun runs the acceptance setting in virtual time: 5
// nodes, 10 workers, 50 ops/s, 1 s leases, with the service's outages
// written into the history as partitions.
func masterSimRun(tb testing.TB, svc *idealMaster, seed int64, duration time.Duration) []history.Op {
	cfg := workloadtest.Config{Workers: 10, Nodes: svc.nodes, Duration: duration, Timeout: 100 * time.Millisecond}
	ops := workloadtest.SimulateRotating(tb, NewMaster(MasterOptions{Rate: 50}, seed), svc, cfg)
	return masterWithOutages(ops, svc.outages)
}

// masterWithOutages writes each outage into the history as a partition the
// nemesis started and stopped (invoke and completion at the same
// instant), keeping real-time order and dense indices.
func masterWithOutages(ops []history.Op, outages []workloads.Interval) []history.Op {
	out := slices.Clone(ops)
	for _, o := range outages {
		for _, f := range []struct {
			f  string
			at int64
		}{{workloads.StartPartition, o.StartNs}, {workloads.StopPartition, o.EndNs}} {
			op := history.Op{Time: f.at, Process: history.NemesisProcess, Type: history.Info, F: f.f, Value: json.RawMessage(`null`)}
			out = append(out, op, op)
		}
	}
	return workloadtest.InTimeOrder(out)
}

// TestMasterSimulationAgainstIdealServiceIsValid runs the generator and
// the checker against a correct service with lost and failed replies and
// four outages of 1.5 to 3 s, longer than a lease, and checks that the
// figures describe the run: a master most of the time outside outages,
// less than half the time inside them (a lease of 1 s outlives at most
// 1 s of an outage, and the next election waits for its end), mastership
// moving between nodes, handovers after stops.
func TestMasterSimulationAgainstIdealServiceIsValid(t *testing.T) {
	seed := int64(testseed.Get(t))
	svc := newIdealMaster(seed, 5)
	svc.lossRate, svc.failRate = 0.02, 0.02
	for _, o := range [][2]time.Duration{{5000, 8000}, {12000, 13500}, {18000, 20000}, {24000, 25500}} {
		svc.outages = append(svc.outages, workloads.Interval{StartNs: int64(o[0] * time.Millisecond), EndNs: int64(o[1] * time.Millisecond)})
	}
	ops := masterSimRun(t, svc, seed, 30*time.Second)
	res := CheckMaster(ops)
	if !res.Valid {
		t.Fatalf("a correct service was judged invalid: %d violations, first %+v; problems %+v",
			len(res.Violations), res.Violations[:min(len(res.Violations), 1)], res.Problems)
	}
	st := MasterStats(ops, res.Tenures, 0)
	m, f := st.Mastership, st.Failover
	t.Logf("%d ops; mastered %.3f overall, %.3f outside faults, %.3f inside; %d changes; %d nodes; "+
		"failover outside %+v inside %+v; %d after stop; beliefs %d (empty %d)",
		len(ops), *m.Overall.Fraction, *m.OutsideFaults.Fraction, *m.InsideFaults.Fraction, m.MasterChanges,
		len(m.ByNodeMs), f.OutsideFaultsMs, f.InsideFaultsMs, f.AfterStop, res.Beliefs, res.BeliefsEmpty)
	if *m.OutsideFaults.Fraction < 0.6 || *m.InsideFaults.Fraction > 0.5 || m.MasterChanges < 3 || len(m.ByNodeMs) < 3 ||
		f.InsideFaultsMs.Count == 0 || f.OutsideFaultsMs.Count == 0 || f.AfterStop == 0 {
		t.Errorf("the run did not exercise mastership: see the figures above")
	}
	if len(st.Faults) != len(svc.outages) {
		t.Errorf("faults %+v, want the %d outages", st.Faults, len(svc.outages))
	}
	infos := 0
	for _, op := range ops {
		if op.Type == history.Info {
			infos++
		}
	}
	if infos == 0 || res.Counts[FMasterStatus].Fail == 0 {
		t.Errorf("no info or failed status: the lossy paths did not run (%+v)", res.Counts)
	}
}

// TestMasterSimulationAgainstBrokenServicesIsInvalid: the negative
// controls in virtual time. A node that keeps saying is_master after it
// lost the lease, and a node that always claims mastership, are caught
// as two masters; masters that count their own terms as tokens, as
// tokens shared and going back.
func TestMasterSimulationAgainstBrokenServicesIsInvalid(t *testing.T) {
	seed := int64(testseed.Get(t))
	cases := []struct {
		name  string
		spoil func(*idealMaster)
		kinds []string
	}{
		{"is_master after its timer", func(s *idealMaster) { s.linger = 500 * time.Millisecond }, []string{TwoMasters}},
		{"two masters", func(s *idealMaster) { s.alwaysOwner = 2 }, []string{TwoMasters}},
		{"tokens counted per node", func(s *idealMaster) { s.localTokens = true }, []string{TokenShared, TokenBack}},
	}
	for _, c := range cases {
		svc := newIdealMaster(seed, 5)
		c.spoil(svc)
		res := CheckMaster(masterSimRun(t, svc, seed, 20*time.Second))
		if res.Valid || len(res.Problems) > 0 {
			t.Errorf("%s: not caught: valid=%v violations=%d problems %v", c.name, res.Valid, len(res.Violations), res.Problems)
			continue
		}
		for _, k := range c.kinds {
			if res.ViolationsByKind[k] == 0 {
				t.Errorf("%s: no %s violation among %v", c.name, k, res.ViolationsByKind)
			}
		}
		t.Logf("%s: %d violations %v, first: %s", c.name, len(res.Violations), res.ViolationsByKind, res.Violations[0].Text)
	}
}

func TestMasterSimulationIsDeterministic(t *testing.T) {
	seed := int64(testseed.Get(t))
	run := func(s int64) string {
		return workloadtest.HistoryBytes(t, masterSimRun(t, newIdealMaster(s, 5), s, 5*time.Second))
	}
	if run(seed) != run(seed) {
		t.Fatal("the same seed gave two different histories")
	}
	if run(seed) == run(seed+1) {
		t.Fatal("two seeds gave the same history")
	}
}
