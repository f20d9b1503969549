package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"chunklease/maelstrom/netsim"
	"chunklease/report"
	"chunklease/workloads"
)

// Analysing a stored run again (maelstrom analyze, as Maelstrom's
// analyze command): the checkers, the statistics, the pictures and the
// pages are computed again from the run's history.jsonl, and results.json
// is written again. What the history does not hold comes from the stored
// results.json (StoredRun): the command, the seed and the flags, when the
// run started and how long it took, the final phase's counts, the
// network's message counts and the replies it dropped. messages.svg is
// drawn from the network's journal, which only a live run has: a stored
// run keeps the one it has. The pictures' time axis ends at the last op
// of the history (a live run's ends when its analysis begins, a few
// milliseconds later).

// Analyze judges the stored run in dir again and rewrites its
// results.json, pictures and pages. o is the run's options as the stored
// flags give them (Workload, Nodes, Faults, NemesisInterval,
// AvailabilityMin, TimeLimit, Seed, Config, Stdout, Stderr); nothing is
// started. A run that failed stays failed, with its stored error, as the
// test run reported it. The exit status is the one test gives.
func Analyze(o Options, dir string, s *report.StoredRun) Outcome {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	o.Command = s.Command
	r := &runner{o: o, dir: dir, console: newConsole(o.Stderr), started: s.Started, stored: s}
	analysisStart := time.Now()
	end, err := lastOpTime(filepath.Join(dir, historyFile))
	if err != nil {
		return Outcome{Exit: ExitBadArgs, Dir: dir, Err: err}
	}
	var runErr error
	if s.Error != nil {
		runErr = errors.New(*s.Error)
	}
	fmt.Fprintf(o.Stdout, "maelstrom: analysing %s (%s workload, seed %d) again\n", dir, o.Workload.Name(), s.Seed)
	return r.conclude(runErr, 0, analysisStart, end)
}

// lastOpTime is the time of the last op in the history at path: a stored
// run's end, for the pictures' time axis.
func lastOpTime(path string) (time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("no history to analyse: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	const tailBytes = 1 << 20
	from := max(fi.Size()-tailBytes, 0)
	tail := make([]byte, fi.Size()-from)
	if _, err := f.ReadAt(tail, from); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	lines := bytes.Split(bytes.TrimSpace(tail), []byte("\n"))
	var op struct {
		Time int64 `json:"time"`
	}
	if len(lines) == 0 || len(lines[len(lines)-1]) == 0 {
		return 0, nil // an empty history
	}
	if err := json.Unmarshal(lines[len(lines)-1], &op); err != nil {
		return 0, fmt.Errorf("%s: the last line: %w", path, err)
	}
	return time.Duration(op.Time), nil
}

// observedRun is what the network saw: the live network's, or what a
// stored run's results.json says it saw.
func (r *runner) observedRun() Observed {
	s := r.stored
	if s == nil {
		return r.observed
	}
	o := Observed{StrayReplies: s.Net.StrayReplies, LateRepliesDropped: s.Nemesis.LateRepliesDropped, NodePeakMiB: s.Memory.NodePeakMiB}
	if len(s.NetworkObserved) > 0 && string(s.NetworkObserved) != "null" {
		o.Network = s.NetworkObserved
	}
	if s.Net.All != nil && s.Net.Clients != nil && s.Net.Servers != nil {
		o.Messages = &netsim.Stats{All: *s.Net.All, Clients: *s.Net.Clients, Servers: *s.Net.Servers}
	}
	return o
}

// networkName names the network that ran: the live one, or the stored
// run's ("sim" for runs stored before networks were named).
func (r *runner) networkName() string {
	switch {
	case r.stored == nil:
		return r.net.Name()
	case r.stored.Network != "":
		return r.stored.Network
	}
	return "sim"
}

// messageCount is the number of messages the run's network carried, or
// workloads.UnknownMessages.
func (r *runner) messageCount() int {
	if m := r.observedRun().Messages; m != nil {
		return int(m.All.MsgCount)
	}
	return workloads.UnknownMessages
}

// finalPhaseResult is what the final phase did.
func (r *runner) finalPhaseResult() report.FinalPhase {
	if s := r.stored; s != nil {
		return s.Final
	}
	return r.final.FinalPhase
}
