package workloads

import (
	"chunklease/history"
)

// Analyzer is implemented by workloads that judge a history read back
// from disk one op at a time (ReadBack), in memory that does not grow with
// the history: the harness's way to judge a run of any length. Check,
// Stats and Report stay for histories held in memory (the simulations);
// an analysis reaches the same verdict and figures.
type Analyzer interface {
	NewAnalysis(env AnalysisEnv) (Analysis, error)
}

// AnalysisEnv is what an analysis knows before the first op.
type AnalysisEnv struct {
	// Dir is the run's directory: report and detail files go there, and
	// scratch files in a subdirectory removed when Finish returns. ""
	// writes no files (scratch goes to the system's temporary directory).
	Dir string
	// Nemesis is every nemesis op of the history, in order: faults and
	// partitions are known before the first client op, as each key's
	// sub-history in Jepsen's independent checking carries them all.
	Nemesis []history.Op
	// Messages is the number of network messages the run carried;
	// UnknownMessages when the network does not count them.
	Messages int
	// Parallel is how many goroutines the analysis may keep busy (>= 1).
	Parallel int
	// HistoryBytes is the size of history.jsonl, to size scratch files.
	HistoryBytes int64
}

// Analysis judges one history: every pair, then Finish (or Abort, when
// the history could not be read to its end).
type Analysis interface {
	history.PairSink
	// Finish judges what the pairs showed and writes the report files.
	Finish(facts history.Facts) (Analyzed, error)
	// Abort gives up, leaving no scratch file behind.
	Abort()
}

// Analyzed is what an analysis found.
type Analyzed struct {
	// Result is the verdict; Details go to results.json under the
	// workload's name and stay small (kilobytes) whatever the run's
	// length: detail files hold the rest.
	Result  Result
	Stats   any      // results.json "workload_stats"; nil for none
	Reports []string // files written into Dir
	// Pictures are what package report draws into Dir after the analysis
	// (the lease workload's lease.TimelineInput: lease-timeline.html), in
	// order; none without a Dir.
	Pictures []any
	// Focus is the earliest violation and the time span of the ops it
	// names, for pictures that zoom in on it; nil when there is none.
	Focus *Focus
	// Warnings say which report files could not be written: they cost
	// the reader a picture, never the verdict.
	Warnings []string
}

// Focus is a violation to look at first, for pictures that zoom in on
// it: its kind, the key it concerns (the lease workload's chunk: the
// message diagram shows the messages that name it), when it began, the
// time span [FromNs, ToNs] of the ops it names, and those ops (so the
// diagram can mark their messages).
type Focus struct {
	Kind         string
	Key          string
	StartNs      int64
	FromNs, ToNs int64
	Ops          []FocusOp
}

// FocusOp is one client op a focused violation names: its invoke and
// completion indices (DoneIndex -1 when it never completed), f, the node
// that answered it, and when it was invoked and completed.
type FocusOp struct {
	Index, DoneIndex int
	F                string
	Node             string
	InvokeNs, DoneNs int64
}
