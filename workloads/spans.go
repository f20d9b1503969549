package workloads

import (
	"cmp"
	"slices"
)

// Spans is a sorted list of disjoint, non-empty intervals.
type Spans []Interval

// UniteSpans returns the union of ivs as Spans (touching intervals join).
func UniteSpans(ivs []Interval) Spans {
	sorted := slices.Clone(ivs)
	slices.SortFunc(sorted, func(a, b Interval) int { return cmp.Compare(a.StartNs, b.StartNs) })
	var out Spans
	for _, iv := range sorted {
		switch {
		case iv.StartNs >= iv.EndNs:
		case len(out) > 0 && iv.StartNs <= out[len(out)-1].EndNs:
			out[len(out)-1].EndNs = max(out[len(out)-1].EndNs, iv.EndNs)
		default:
			out = append(out, iv)
		}
	}
	return out
}

// Clip keeps the parts of s inside w.
func (s Spans) Clip(w Interval) Spans {
	var out Spans
	for _, iv := range s {
		iv.StartNs, iv.EndNs = max(iv.StartNs, w.StartNs), min(iv.EndNs, w.EndNs)
		if iv.StartNs < iv.EndNs {
			out = append(out, iv)
		}
	}
	return out
}

// Total is the summed length in nanoseconds.
func (s Spans) Total() int64 {
	var n int64
	for _, iv := range s {
		n += iv.EndNs - iv.StartNs
	}
	return n
}

// Intersect returns the time covered by both s and t (a two-pointer
// merge of two sorted span lists).
func (s Spans) Intersect(t Spans) Spans {
	var out Spans
	for i, j := 0, 0; i < len(s) && j < len(t); {
		lo, hi := max(s[i].StartNs, t[j].StartNs), min(s[i].EndNs, t[j].EndNs)
		if lo < hi {
			out = append(out, Interval{StartNs: lo, EndNs: hi})
		}
		if s[i].EndNs < t[j].EndNs {
			i++
		} else {
			j++
		}
	}
	return out
}

// Touches reports whether some span meets the closed interval [from, to]:
// a fault in force at any instant of a failover, its ends included.
func (s Spans) Touches(from, to int64) bool {
	for _, iv := range s {
		if iv.StartNs <= to && from < iv.EndNs {
			return true
		}
	}
	return false
}
