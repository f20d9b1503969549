package workloads

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// LeaseStatsResult is the lease workload's statistics for results.json:
// the generic Stats plus failover.
type LeaseStatsResult struct {
	Stats
	Failover FailoverStats `json:"failover"`
	// HoldingsInPartitions counts holdings (ok grants naming the requester,
	// ok renews) that began while a partition was in force: leases the
	// side with a majority kept granting.
	HoldingsInPartitions int `json:"holdings_in_partitions"`
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

// LeaseStats computes availability, latency, messages per op and failover
// from a lease history, the holdings CheckLease found in it, and the
// network's message count.
func LeaseStats(history []Op, holdings []Holding, messages int) LeaseStatsResult {
	return LeaseStatsResult{Stats: ComputeStats(history, messages), Failover: Failover(holdings),
		HoldingsInPartitions: holdingsIn(holdings, Partitions(history))}
}

// holdingsIn counts the holdings whose start lies inside one of the
// intervals.
func holdingsIn(holdings []Holding, intervals []Interval) int {
	n := 0
	for _, h := range holdings {
		for _, iv := range intervals {
			if h.StartNs >= iv.StartNs && h.StartNs < iv.EndNs {
				n++
				break
			}
		}
	}
	return n
}

// Failover computes FailoverStats from a checker's holdings.
func Failover(holdings []Holding) FailoverStats {
	byChunk := map[string][]Holding{}
	for _, h := range holdings {
		byChunk[h.Chunk] = append(byChunk[h.Chunk], h)
	}
	var st FailoverStats
	var samplesMs []float64
	for _, hs := range byChunk {
		slices.SortStableFunc(hs, byStart)
		for i, h := range hs {
			if !tenureEnds(hs, i) {
				continue
			}
			st.TenureEndCount++
			next, ok := nextHolding(hs, h.EndNs)
			switch {
			case !ok:
				st.NeverRetaken++
			case next.Server == h.Server:
				st.RetakenBySame++
			default:
				samplesMs = append(samplesMs, nsToMs(next.StartNs-h.EndNs))
			}
		}
	}
	p := percentiles(samplesMs)
	st.Count, st.MedianMs, st.MaxMs = p.Count, p.P50, p.Max
	return st
}

// tenureEnds reports whether hs[i]'s end is covered by no other holding of
// the same server (and is not shared with an earlier one, so that an end
// is counted once).
func tenureEnds(hs []Holding, i int) bool {
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
