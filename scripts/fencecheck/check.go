package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// storeWrite is one line of the chunk server's log: an accepted write.
type storeWrite struct {
	Chunk string `json:"chunk"`
	Token int64  `json:"token"`
	Seq   int64  `json:"seq"`
}

// verdict is what one run's logs show.
type verdict struct {
	holders, sessions       int
	writers                 int // holders with at least one accepted write
	checkRefused            int // acts Current refused (the lease may have ended)
	writes, refused         int // accepted by the store; refused with 409 (the holders' view)
	staleAccepted, overlaps int
	details                 []string // the first violations, for a person
}

func (v *verdict) note(format string, args ...any) {
	if len(v.details) < 10 {
		v.details = append(v.details, fmt.Sprintf(format, args...))
	}
}

// staleAccepted counts, per chunk in the order applied, accepted writes
// whose token is below one the chunk accepted before.
func staleAccepted(writes []storeWrite, v *verdict) {
	highest := map[string]storeWrite{}
	for _, w := range writes {
		h, seen := highest[w.Chunk]
		if seen && w.Token < h.Token {
			v.staleAccepted++
			v.note("stale write accepted: %s took token %d (write %d) after token %d (write %d)", w.Chunk, w.Token, w.Seq, h.Token, h.Seq)
			continue
		}
		highest[w.Chunk] = w
	}
}

// overlaps counts the checked-valid intervals (acts with Held) that
// overlap an earlier-starting interval of another holder: a sweep by
// start keeping, for the intervals seen so far, the latest end and the
// latest end of a holder other than that one's.
func overlaps(acts []actRecord, v *verdict) {
	valid := slices.DeleteFunc(slices.Clone(acts), func(a actRecord) bool { return !a.Held })
	slices.SortStableFunc(valid, func(a, b actRecord) int { return cmp.Compare(a.FromNs, b.FromNs) })
	var first, second *actRecord // the latest end so far, and the latest of any other holder
	for i := range valid {
		a := &valid[i]
		other := first
		if other != nil && other.Holder == a.Holder {
			other = second
		}
		if other != nil && a.FromNs < other.ToNs {
			v.overlaps++
			v.note("overlap: %s (token %d) checked its lease valid over [%d, %d] ns and %s (token %d) over [%d, %d] ns: both for %.3f ms",
				other.Holder, other.Token, other.FromNs, other.ToNs, a.Holder, a.Token, a.FromNs, a.ToNs, float64(min(other.ToNs, a.ToNs)-a.FromNs)/1e6)
		}
		switch {
		case first == nil || a.ToNs > first.ToNs:
			if first != nil && first.Holder != a.Holder {
				second = first
			}
			first = a
		case a.Holder != first.Holder && (second == nil || a.ToNs > second.ToNs):
			second = a
		}
	}
}

// judge reads a run's logs: the store's and each holder's.
func judge(storeLog string, holderLogs []string) (verdict, error) {
	v := verdict{holders: len(holderLogs)}
	var writes []storeWrite
	if err := readLines(storeLog, func(line []byte) error {
		var w storeWrite
		if err := json.Unmarshal(line, &w); err != nil {
			return err
		}
		writes = append(writes, w)
		return nil
	}); err != nil {
		return v, err
	}
	v.writes = len(writes)
	var acts []actRecord
	for _, path := range holderLogs {
		if err := readLines(path, func(line []byte) error {
			var rec struct {
				actRecord
				Event string `json:"event"`
			}
			if err := json.Unmarshal(line, &rec); err != nil {
				return err
			}
			switch rec.Event {
			case "session":
				v.sessions++
				return nil
			case "check-refused":
				v.checkRefused++
				return nil
			case "":
			default:
				return nil // paused, resumed
			}
			if rec.Write == "refused" {
				v.refused++
			}
			acts = append(acts, rec.actRecord)
			return nil
		}); err != nil {
			return v, err
		}
	}
	staleAccepted(writes, &v)
	overlaps(acts, &v)
	wrote := map[string]bool{}
	for _, a := range acts {
		if a.Write == "accepted" {
			wrote[a.Holder] = true
		}
	}
	v.writers = len(wrote)
	return v, nil
}

func readLines(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if err := each(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
	}
	return sc.Err()
}
