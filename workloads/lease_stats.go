package workloads

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// LeaseStatsResult is the lease workload's statistics for results.json:
// the generic Stats plus failover, overall and split by whether the
// tenure ended inside a fault, and how soon grants succeed after a heal.
type LeaseStatsResult struct {
	Stats
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
	Heal
	GrantAfterMs *float64 `json:"grant_after_ms"`
}

// LeaseStats computes availability, latency, messages per op, failover
// and recovery from a lease history, the holdings CheckLease found in it,
// and the network's message count.
func LeaseStats(history []Op, holdings []Holding, messages int) LeaseStatsResult {
	st := ComputeStats(history, messages)
	ends := collectTenureEnds(holdings)
	inFault := func(t int64) bool { return inAny(st.FaultIntervals, t) }
	return LeaseStatsResult{
		Stats:                 st,
		Failover:              summarise(ends, func(int64) bool { return true }),
		FailoverInsideFaults:  summarise(ends, inFault),
		FailoverOutsideFaults: summarise(ends, func(t int64) bool { return !inFault(t) }),
		HoldingsInPartitions:  holdingsIn(holdings, st.Partitions),
		HoldingsInFaults:      holdingsIn(holdings, st.FaultIntervals),
		GrantsInFaults:        holdingsIn(grantsOnly(holdings), st.FaultIntervals),
		HealToGrant:           healToGrant(Heals(history), holdings),
	}
}

// holdingsIn counts the holdings whose start lies inside one of the
// intervals.
func holdingsIn(holdings []Holding, intervals []Interval) int {
	n := 0
	for _, h := range holdings {
		if inAny(intervals, h.StartNs) {
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

// healToGrant pairs each heal with the first grant holding invoked at or
// after it.
func healToGrant(heals []Heal, holdings []Holding) HealToGrant {
	grants := grantsOnly(holdings)
	res := HealToGrant{Heals: len(heals), Events: []HealGrant{}}
	var samplesMs []float64
	for _, h := range heals {
		ev := HealGrant{Heal: h}
		first := int64(math.MaxInt64)
		for _, g := range grants {
			if g.InvokeNs >= h.AtNs && g.StartNs < first {
				first = g.StartNs
			}
		}
		if first != math.MaxInt64 {
			v := nsToMs(first - h.AtNs)
			ev.GrantAfterMs = &v
			samplesMs = append(samplesMs, v)
		}
		res.Events = append(res.Events, ev)
	}
	p := percentiles(samplesMs)
	res.Granted, res.MedianMs, res.MaxMs = p.Count, p.P50, p.Max
	return res
}

// Failover computes FailoverStats from a checker's holdings.
func Failover(holdings []Holding) FailoverStats {
	return summarise(collectTenureEnds(holdings), func(int64) bool { return true })
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

// collectTenureEnds finds every tenure end of every chunk.
func collectTenureEnds(holdings []Holding) []tenureEnd {
	byChunk := map[string][]Holding{}
	for _, h := range holdings {
		byChunk[h.Chunk] = append(byChunk[h.Chunk], h)
	}
	var out []tenureEnd
	for _, hs := range byChunk {
		slices.SortStableFunc(hs, byStart)
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
				out = append(out, tenureEnd{endNs: h.EndNs, outcome: followedByOther, gapMs: nsToMs(next.StartNs - h.EndNs)})
			}
		}
	}
	return out
}

// summarise counts the tenure ends whose end time keep accepts.
func summarise(ends []tenureEnd, keep func(endNs int64) bool) FailoverStats {
	var st FailoverStats
	var samplesMs []float64
	for _, e := range ends {
		if !keep(e.endNs) {
			continue
		}
		st.TenureEndCount++
		switch e.outcome {
		case neverRetaken:
			st.NeverRetaken++
		case retakenBySame:
			st.RetakenBySame++
		default:
			samplesMs = append(samplesMs, e.gapMs)
		}
	}
	p := percentiles(samplesMs)
	st.Count, st.MedianMs, st.MaxMs = p.Count, p.P50, p.Max
	return st
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

// compareNatural orders names like ch_2 before ch_10: by the text before
// a trailing number, then by that number.
func compareNatural(a, b string) int {
	pa, na := splitTrailingNumber(a)
	pb, nb := splitTrailingNumber(b)
	return cmp.Or(strings.Compare(pa, pb), cmp.Compare(na, nb), strings.Compare(a, b))
}

func splitTrailingNumber(s string) (string, int64) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.ParseInt(s[i:], 10, 64)
	if err != nil {
		return s, -1
	}
	return s[:i], n
}
