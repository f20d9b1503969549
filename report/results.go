package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"chunklease/maelstrom/netsim"
)

// Exit statuses of a run, as real Maelstrom's (Jepsen's cli; contract
// section 2).
const (
	ExitValid   = 0   // every checker found the history valid
	ExitInvalid = 1   // some checker found it invalid
	ExitUnknown = 2   // no checker found it invalid, but some could not decide
	ExitBadArgs = 254 // bad arguments: no command, unknown flag, impossible value
	// ExitFailed: the run itself failed: a node crashed (outside the kill
	// nemesis) or printed a line Maelstrom rejects (strict mode), init
	// failed, a checker crashed, the run was interrupted.
	ExitFailed = 255
)

// Results is results.json: the verdict of every checker and the figures
// of the run. Its top-level "valid" is the run's verdict.
type Results struct {
	Valid    bool
	Error    string // why the run failed; "" when it did not (written as null)
	Workload string
	// Network is the network that ran ("sim": the simulated one; "netns":
	// nodes in Linux network namespaces, faults by the kernel).
	Network string
	// NetworkObserved is what that network alone observed (the real one:
	// per node, what its delay path and its namespace's TCP counters
	// saw); nil when nothing.
	NetworkObserved any
	// Checker is the workload checker's verdict, written under the
	// workload's name ("lease", "echo"); nil when the checker did not run.
	Checker      any
	Checks       Checks
	Stats        OpStats
	Availability AvailabilityResult
	// WorkloadStats is the workload's own statistics (StatsReporter:
	// availability inside and outside partitions, latency percentiles,
	// failover, messages per op over all messages), when it has some.
	WorkloadStats any
	Nemesis       NemesisResult
	Final         FinalPhase
	Net           NetResult
	Perf          PerfResult
	Reports       []string // the report files of the run, in the order they were written
	Seed          uint64
	Command       []string
	Config        any
	Started       time.Time
	Duration      time.Duration
	Timing        Timing
	Memory        Memory
	ExitCode      int
}

// Timing is how long the run and its analysis took: the analysis (reading
// the history back, checking it, the statistics, pictures and reports)
// is meant to stay under a tenth of the time limit.
type Timing struct {
	// RunS is from the start to the end of teardown: setup, the main
	// phase, the final phase and stopping the nodes.
	RunS       float64 `json:"run_s"`
	AnalysisS  float64 `json:"analysis_s"`
	TimeLimitS float64 `json:"time_limit_s"`
}

// Memory is the peak resident memory, in MiB, of the harness (getrusage,
// at the end of the analysis) and of the largest node program (each
// incarnation's VmHWM, read as it was killed; 0 where /proc does not
// tell).
type Memory struct {
	HarnessPeakMiB float64 `json:"harness_peak_mib"`
	NodePeakMiB    float64 `json:"node_peak_mib"`
}

// Checks is each checker's verdict; a nil workload verdict means the
// workload checker did not run (the run failed) or crashed.
type Checks struct {
	Workload     *bool `json:"workload"`
	Stats        bool  `json:"stats"`
	Availability bool  `json:"availability"`
	Net          bool  `json:"net"`
	Perf         bool  `json:"perf"`
	// Final is the final phase's verdict (FinalPhase.Valid): true,
	// "unknown", or null without a final phase.
	Final any `json:"final"`
}

// MarshalJSON writes the keys in a fixed, readable order, with the
// checker's details under the workload's name.
func (r Results) MarshalJSON() ([]byte, error) {
	var errText any
	if r.Error != "" {
		errText = r.Error
	}
	fields := []struct {
		key   string
		value any
	}{
		{"valid", r.Valid}, {"error", errText}, {"exit_code", r.ExitCode},
		{"workload", r.Workload}, {"network", r.Network}, {r.Workload, r.Checker}, {"checks", r.Checks},
		{"stats", r.Stats}, {"availability", r.Availability}, {"workload_stats", r.WorkloadStats},
		{"nemesis", r.Nemesis}, {"final", r.Final},
		{"net", r.Net}, {"network_observed", r.NetworkObserved}, {"perf", r.Perf}, {"reports", r.Reports},
		{"seed", r.Seed}, {"command", r.Command}, {"config", r.Config},
		{"started", r.Started.Format(time.RFC3339Nano)}, {"duration_s", r.Duration.Seconds()},
		{"timing", r.Timing}, {"memory", r.Memory},
	}
	var b bytes.Buffer
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		key, _ := json.Marshal(f.key)
		value, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("results.json %q: %w", f.key, err)
		}
		b.Write(key)
		b.WriteString(":")
		b.Write(value)
	}
	b.WriteString("}")
	return b.Bytes(), nil
}

// OpStats is Jepsen's stats checker over client completions: invalid when
// some f never completed ok.
type OpStats struct {
	Count     int               `json:"count"`
	OKCount   int               `json:"ok_count"`
	FailCount int               `json:"fail_count"`
	InfoCount int               `json:"info_count"`
	ByF       map[string]FStats `json:"by_f"`
	Valid     bool              `json:"valid"`
}

// FStats are the completion counts of one f.
type FStats struct {
	Count     int  `json:"count"`
	OKCount   int  `json:"ok_count"`
	FailCount int  `json:"fail_count"`
	InfoCount int  `json:"info_count"`
	Valid     bool `json:"valid"`
}

// AvailabilityResult is Maelstrom's availability checker: the ok fraction
// of client invocations, judged against --availability when given.
type AvailabilityResult struct {
	OKFraction float64  `json:"ok_fraction"` // 1 when nothing was invoked
	Expected   *float64 `json:"expected"`    // null: any fraction is valid
	Valid      bool     `json:"valid"`
}

// NemesisResult counts what the nemesis did: completed ops by f, the
// fault periods by kind (those that hit some node, as the pictures draw
// them) and the steps that hit no node, the nodes each kind of op hit in
// all, and the replies to closed clients that were dropped because their
// node had been paused.
type NemesisResult struct {
	Faults    string         `json:"faults"` // "partition,kill,pause"; "" without a nemesis
	IntervalS float64        `json:"interval_s"`
	Ops       map[string]int `json:"ops"` // every completed step, as the history holds them
	// Periods counts the fault periods by kind (partition, kill, pause)
	// that hit some node (DrawnFaults): what the pictures shade and the
	// console and index count.
	Periods map[string]int `json:"periods"`
	// EmptySteps counts, by f, the steps that hit no node: a
	// start-partition whose grudge cut nobody off (minority-third at 3
	// nodes), a kill or pause that found no node running. They stay in
	// the history and in Ops.
	EmptySteps         map[string]int `json:"empty_steps"`
	NodesKilled        int            `json:"nodes_killed"`
	NodesRestarted     int            `json:"nodes_restarted"`
	NodesPaused        int            `json:"nodes_paused"`
	NodesResumed       int            `json:"nodes_resumed"`
	LateRepliesDropped int64          `json:"late_replies_dropped"`
	// Clock is the clock nemesis's bounds; omitted without it.
	Clock *ClockBounds `json:"clock,omitempty"`
	// LiveMajority is how much of the main phase a majority of the nodes
	// was up and connected; omitted without a nemesis.
	LiveMajority *LiveMajority `json:"live_majority,omitempty"`
	// NeverApplied lists the requested faults that never took effect in
	// the main phase (no partition cut a node off, no kill or pause hit a
	// node, ...): the run did not test them. Empty when each did.
	NeverApplied []string `json:"never_applied"`
}

// LiveMajority is how much of the main phase (from time 0 to the time
// limit) some node that was up (neither killed nor paused) could
// exchange messages both ways, directly, with enough other nodes that
// were up to make a majority with itself: what a proposer needs for a
// quorum. Each fault counts from the completion of the op that caused it
// to the completion of the op that ended it; packet and clock faults do
// not count (they slow messages or clocks, they cut no one off).
type LiveMajority struct {
	Fraction    float64 `json:"fraction"`      // of the main phase
	LongestGapS float64 `json:"longest_gap_s"` // the longest stretch without a live majority
	AllDownS    float64 `json:"all_down_s"`    // time with every node killed or paused
	MainPhaseS  float64 `json:"main_phase_s"`
	Nodes       int     `json:"nodes"`
	Majority    int     `json:"majority"` // nodes a majority needs
}

// ClockBounds are what the clock nemesis drew within and the nodes'
// bounds: a run within them must be valid; a run beyond them is the
// clock nemesis's negative control.
type ClockBounds struct {
	DriftPPM        int64 `json:"drift_ppm"`          // rates drawn within 1 +- this, in ppm
	MaxOffsetMs     int64 `json:"max_offset_ms"`      // offsets drawn within +- this
	NodeDriftPPM    int64 `json:"node_drift_ppm"`     // the nodes' LEASE_DRIFT_PPM
	NodeMaxOffsetMs int64 `json:"node_max_offset_ms"` // the offset bound for the run's leases
	WithinBound     bool  `json:"within_bound"`
}

// NetResult is Maelstrom's net checker: message counts over the whole run
// (init included), overall, client traffic and node-to-node traffic.
type NetResult struct {
	// All, Clients and Servers are given where the network counts every
	// message (the simulated one); omitted otherwise.
	All     *NetGroup `json:"all,omitempty"`
	Clients *NetGroup `json:"clients,omitempty"`
	Servers *NetGroup `json:"servers,omitempty"`
	// StrayReplies counts messages clients discarded because they
	// answered no request in flight (stale, duplicate, or a wrong
	// in_reply_to); the first is shown as a warning during the run.
	StrayReplies int64 `json:"stray_replies"`
	Valid        bool  `json:"valid"` // always true, as in Maelstrom
}

// NetGroup is one traffic group's counts; MsgsPerOp (msg_count over
// client invocations) is given for all and servers when there were
// invocations, as in Maelstrom.
type NetGroup struct {
	netsim.Counts
	MsgsPerOp *float64 `json:"msgs_per_op,omitempty"`
}

// PerfResult names the pictures; Error says why one could not be drawn.
type PerfResult struct {
	LatencyGraph string `json:"latency_graph"`
	RateGraph    string `json:"rate_graph"`
	Error        string `json:"error"`
	Valid        bool   `json:"valid"`
}

// WriteResults writes results.json into dir.
func WriteResults(dir string, res *Results) error {
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "results.json"), append(raw, '\n'), 0o644)
}

// ListFiles returns the names of the regular files directly in dir.
func ListFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// FinalPhase is what results.json says about the final phase: when every
// fault was healed, how long the harness then waited, and how the final
// ops fared. Valid is true when some final op completed ok, "unknown"
// when none did (the service was never seen to come back, as Jepsen's
// set checker is unknown when no element was ever read), and null when
// the workload has no final phase.
type FinalPhase struct {
	Ran           bool    `json:"ran"`
	HealedAtNs    int64   `json:"healed_at_ns"`
	RecoveryWaitS float64 `json:"recovery_wait_s"`
	Workers       int     `json:"workers,omitempty"` // the workers that ran the final ops
	Invoked       int     `json:"invoked"`
	OK            int     `json:"ok"`
	Valid         any     `json:"valid"`
}

// Verdict is Valid once the final ops completed.
func (f FinalPhase) Verdict() any {
	if f.OK > 0 {
		return true
	}
	return "unknown"
}

// FailedChecks names the checkers that found the history invalid.
func (res *Results) FailedChecks() string {
	var failed []string
	if c := res.Checks.Workload; c != nil && !*c {
		failed = append(failed, fmt.Sprintf("the %s checker found violations (results.json key %q)", res.Workload, res.Workload))
	}
	if !res.Checks.Stats {
		var none []string
		for f, st := range res.Stats.ByF {
			if !st.Valid {
				none = append(none, f)
			}
		}
		slices.Sort(none)
		failed = append(failed, fmt.Sprintf("no %s op ever completed ok (stats)", strings.Join(none, "/")))
	}
	if !res.Checks.Availability {
		failed = append(failed, fmt.Sprintf("availability %.3f is below the expected %v", res.Availability.OKFraction, *res.Availability.Expected))
	}
	return strings.Join(failed, "; ")
}
