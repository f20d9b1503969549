package lease

import (
	"math"
	"slices"

	"chunklease/history"
	"chunklease/workloads"
)

// LeaseStatsResult is the lease workload's statistics for results.json:
// the generic Stats plus failover, overall and split by whether the
// tenure ended inside a fault, and how soon grants succeed after a heal.
type LeaseStatsResult struct {
	workloads.Stats
	Failover              FailoverStats `json:"failover"`
	FailoverInsideFaults  FailoverStats `json:"failover_inside_faults"`
	FailoverOutsideFaults FailoverStats `json:"failover_outside_faults"`
	// HoldingsInPartitions counts holdings (ok grants naming the requester,
	// ok renews) that began while a partition was in force: leases the
	// side with a majority kept granting.
	HoldingsInPartitions int `json:"holdings_in_partitions"`
	// HoldingsInFaults and GrantsInFaults count the holdings, and among
	// them those made by a grant, that began while some fault (partition,
	// killed or paused node) was in force.
	HoldingsInFaults int `json:"holdings_in_faults"`
	GrantsInFaults   int `json:"grants_in_faults"`
	// HealToGrant is the time from each heal to the next successful grant.
	HealToGrant HealToGrant `json:"heal_to_grant"`
}

// FailoverStats measures how long chunks went without a primary after a
// server's tenure ended. A tenure ends at the end of a holding that no
// other holding of the same server covers (the server neither renewed in
// time nor re-acquired); the failover time is from that end to the start
// (the completion) of the next holding of the chunk, when that holding
// belongs to another server.
type FailoverStats struct {
	Count          int     `json:"count"`     // tenure ends followed by another server's holding
	MedianMs       float64 `json:"median_ms"` // nearest-rank median of the failover times
	MaxMs          float64 `json:"max_ms"`
	RetakenBySame  int     `json:"retaken_by_same"` // tenure ends after which the same server held it next
	NeverRetaken   int     `json:"never_retaken"`   // tenure ends after which nobody held it again
	TenureEndCount int     `json:"tenure_ends"`
}

// HealToGrant measures recovery: for each heal (Heals), the time from the
// heal to the completion of the first successful grant (an ok grant
// naming its requester) invoked at or after it, for any chunk.
type HealToGrant struct {
	Heals    int         `json:"heals"`
	Granted  int         `json:"granted"` // heals followed by a successful grant
	MedianMs float64     `json:"median_ms"`
	MaxMs    float64     `json:"max_ms"`
	Events   []HealGrant `json:"events"`
}

// HealGrant is one heal and the time to the first grant after it (null
// when no grant succeeded after it).
type HealGrant struct {
	workloads.Heal
	GrantAfterMs *float64 `json:"grant_after_ms"`
}

// LeaseStats computes availability, latency, messages per op, failover
// and recovery from a lease history, the holdings CheckLease found in it,
// and the network's message count.
func LeaseStats(ops []history.Op, holdings []Holding, messages int) LeaseStatsResult {
	acc := newLeaseStatsAcc(ops)
	byChunk := map[string][]Holding{}
	for _, h := range holdings {
		byChunk[h.Chunk] = append(byChunk[h.Chunk], h)
	}
	for _, hs := range byChunk {
		acc.addChunk(hs)
	}
	return acc.result(workloads.ComputeStats(ops, messages))
}

// leaseStatsAcc gathers the lease figures chunk by chunk, so that a long
// run's analysis can compute them from one chunk's holdings at a time, on
// several goroutines (merge), in memory that does not grow with the run.
type leaseStatsAcc struct {
	parts, faults                   []workloads.Interval
	heals                           []workloads.Heal
	failover, inFaults, outFaults   failoverAcc
	inPartitions, inFault, grantsIn int
	firstGrant                      []int64 // per heal: the earliest completion of a grant invoked at or after it; MaxInt64: none
}

// failoverAcc is FailoverStats before the percentiles.
type failoverAcc struct {
	ends, retakenBySame, neverRetaken int
	gapsMs                            workloads.SampleSet
}

// newLeaseStatsAcc reads the partitions, faults and heals from the
// nemesis ops of history (other ops are ignored).
func newLeaseStatsAcc(ops []history.Op) *leaseStatsAcc {
	a := &leaseStatsAcc{parts: workloads.Partitions(ops), faults: workloads.FaultIntervals(ops), heals: workloads.Heals(ops)}
	a.firstGrant = make([]int64, len(a.heals))
	for i := range a.firstGrant {
		a.firstGrant[i] = math.MaxInt64
	}
	return a
}

// addChunk adds the holdings of one chunk (CheckLease's: cut, non-empty).
func (a *leaseStatsAcc) addChunk(hs []Holding) {
	for _, e := range tenureEnds(hs) {
		a.failover.add(e)
		if workloads.InAny(a.faults, e.endNs) {
			a.inFaults.add(e)
		} else {
			a.outFaults.add(e)
		}
	}
	grants := grantsOnly(hs)
	a.inPartitions += holdingsIn(hs, a.parts)
	a.inFault += holdingsIn(hs, a.faults)
	a.grantsIn += holdingsIn(grants, a.faults)
	for i, heal := range a.heals {
		for _, g := range grants {
			if g.InvokeNs >= heal.AtNs && g.StartNs < a.firstGrant[i] {
				a.firstGrant[i] = g.StartNs
			}
		}
	}
}

// holdingsIn counts the holdings whose start lies inside one of the
// intervals.
func holdingsIn(holdings []Holding, intervals []workloads.Interval) int {
	n := 0
	for _, h := range holdings {
		if workloads.InAny(intervals, h.StartNs) {
			n++
		}
	}
	return n
}

func grantsOnly(holdings []Holding) []Holding {
	var out []Holding
	for _, h := range holdings {
		if h.F == FGrant {
			out = append(out, h)
		}
	}
	return out
}

// merge adds what o gathered (from the same nemesis ops).
func (a *leaseStatsAcc) merge(o *leaseStatsAcc) {
	a.failover.merge(&o.failover)
	a.inFaults.merge(&o.inFaults)
	a.outFaults.merge(&o.outFaults)
	a.inPartitions += o.inPartitions
	a.inFault += o.inFault
	a.grantsIn += o.grantsIn
	for i, t := range o.firstGrant {
		a.firstGrant[i] = min(a.firstGrant[i], t)
	}
}

// result completes the generic statistics st with the lease figures.
func (a *leaseStatsAcc) result(st workloads.Stats) LeaseStatsResult {
	return LeaseStatsResult{
		Stats: st, Failover: a.failover.stats(), FailoverInsideFaults: a.inFaults.stats(),
		FailoverOutsideFaults: a.outFaults.stats(), HoldingsInPartitions: a.inPartitions,
		HoldingsInFaults: a.inFault, GrantsInFaults: a.grantsIn, HealToGrant: a.healToGrant(),
	}
}

// healToGrant pairs each heal with the first grant holding invoked at or
// after it.
func (a *leaseStatsAcc) healToGrant() HealToGrant {
	res := HealToGrant{Heals: len(a.heals), Events: []HealGrant{}}
	var samplesMs []float64
	for i, h := range a.heals {
		ev := HealGrant{Heal: h}
		if first := a.firstGrant[i]; first != math.MaxInt64 {
			v := workloads.NsToMs(first - h.AtNs)
			ev.GrantAfterMs = &v
			samplesMs = append(samplesMs, v)
		}
		res.Events = append(res.Events, ev)
	}
	p := workloads.PercentilesOf(samplesMs)
	res.Granted, res.MedianMs, res.MaxMs = p.Count, p.P50, p.Max
	return res
}

func (f *failoverAcc) add(e tenureEnd) {
	f.ends++
	switch e.outcome {
	case neverRetaken:
		f.neverRetaken++
	case retakenBySame:
		f.retakenBySame++
	default:
		f.gapsMs.Add(e.gapMs)
	}
}

func (f *failoverAcc) merge(o *failoverAcc) {
	f.ends += o.ends
	f.retakenBySame += o.retakenBySame
	f.neverRetaken += o.neverRetaken
	f.gapsMs.Merge(&o.gapsMs)
}

func (f *failoverAcc) stats() FailoverStats {
	p := f.gapsMs.Percentiles()
	return FailoverStats{Count: p.Count, MedianMs: p.P50, MaxMs: p.Max, RetakenBySame: f.retakenBySame,
		NeverRetaken: f.neverRetaken, TenureEndCount: f.ends}
}

// Failover computes FailoverStats from a checker's holdings.
func Failover(holdings []Holding) FailoverStats {
	var f failoverAcc
	byChunk := map[string][]Holding{}
	for _, h := range holdings {
		byChunk[h.Chunk] = append(byChunk[h.Chunk], h)
	}
	for _, hs := range byChunk {
		for _, e := range tenureEnds(hs) {
			f.add(e)
		}
	}
	return f.stats()
}

// tenureEnd is one end of a tenure and what followed it.
type tenureEnd struct {
	endNs   int64
	outcome int     // followedByOther, retakenBySame or neverRetaken
	gapMs   float64 // followedByOther: the failover time
}

const (
	followedByOther = iota
	retakenBySame
	neverRetaken
)

// tenureEnds finds every tenure end of one chunk's holdings.
func tenureEnds(holdings []Holding) []tenureEnd {
	hs := slices.Clone(holdings)
	slices.SortStableFunc(hs, byStart)
	var out []tenureEnd
	for i, h := range hs {
		if !endsTenure(hs, i) {
			continue
		}
		next, ok := nextHolding(hs, h.EndNs)
		switch {
		case !ok:
			out = append(out, tenureEnd{endNs: h.EndNs, outcome: neverRetaken})
		case next.Server == h.Server:
			out = append(out, tenureEnd{endNs: h.EndNs, outcome: retakenBySame})
		default:
			out = append(out, tenureEnd{endNs: h.EndNs, outcome: followedByOther, gapMs: workloads.NsToMs(next.StartNs - h.EndNs)})
		}
	}
	return out
}

// endsTenure reports whether hs[i]'s end is covered by no other holding of
// the same server (and is not shared with an earlier one, so that an end
// is counted once).
func endsTenure(hs []Holding, i int) bool {
	h := hs[i]
	for j, o := range hs {
		if j == i || o.Server != h.Server {
			continue
		}
		if o.StartNs <= h.EndNs && h.EndNs < o.EndNs {
			return false
		}
		if o.EndNs == h.EndNs && j < i {
			return false
		}
	}
	return true
}

// nextHolding is the first holding that starts at or after t.
func nextHolding(hs []Holding, t int64) (Holding, bool) {
	for _, h := range hs {
		if h.StartNs >= t {
			return h, true
		}
	}
	return Holding{}, false
}
