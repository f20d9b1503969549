package master

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"chunklease/history"
	"chunklease/workloads"
)

// MasterDetailsFile is the master analysis's detail file, beside
// results.json: one JSON object a line, every violation
// ({"violation": {...}}, in start order), then every history problem
// ({"problem": {"index", "text"}}), then every anomaly
// ({"anomaly": {"index", "text"}}).
const MasterDetailsFile = "master-details.jsonl"

// SummaryViolations bounds each list results.json holds (violations,
// problems, anomalies), as the lease summary does; MasterDetailsFile
// holds them all.
const SummaryViolations = 20

// SummarizeMaster is what results.json says about a master history (under
// "master"): res with its violations, problems and anomalies cut to the
// first SummaryViolations (their counts stay whole), and details, the
// name of the file that lists them all ("" when none was written).
// Tenures stay whole: one per change of mastership.
func SummarizeMaster(res MasterResult, details string) MasterResult {
	s := res
	s.Violations = res.Violations[:min(len(res.Violations), SummaryViolations)]
	s.Problems = res.Problems[:min(len(res.Problems), SummaryViolations)]
	s.Anomalies = res.Anomalies[:min(len(res.Anomalies), SummaryViolations)]
	s.Details = details
	return s
}

// NewAnalysis judges a master history read back op by op (Analyzer): the
// checker keeps each node's beliefs and stops, the statistics their sums;
// the verdict is CheckMaster's, the figures MasterStats's. results.json
// gets SummarizeMaster's summary, MasterDetailsFile every violation, and
// the master timeline (TimelineInput) is drawn from the tenures.
func (m *Master) NewAnalysis(env workloads.AnalysisEnv) (workloads.Analysis, error) {
	return &masterAnalysis{check: newMasterChecker(), stats: workloads.NewStatsBuilder(env.Nemesis), env: env}, nil
}

type masterAnalysis struct {
	check *masterChecker
	stats *workloads.StatsBuilder
	env   workloads.AnalysisEnv
}

func (a *masterAnalysis) Pair(p history.Pair) error {
	a.check.add(p)
	a.stats.Add(p)
	return nil
}

func (a *masterAnalysis) Problem(p history.Problem) { a.check.Problem(p) }

func (a *masterAnalysis) Finish(facts history.Facts) (workloads.Analyzed, error) {
	res := a.check.result()
	known := map[string]bool{}
	for _, n := range facts.Nodes {
		known[n] = true
	}
	run := workloads.Interval{StartNs: facts.FirstNs, EndNs: facts.LastNs}
	st := masterStats(a.stats.Result(a.env.Messages), masterFaults(facts.Nemesis, known), run, res.Tenures)
	out := workloads.Analyzed{Stats: st}
	details := ""
	if a.env.Dir != "" {
		if err := writeMasterDetails(a.env.Dir, res); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s could not be written: %v", MasterDetailsFile, err))
		} else {
			details = MasterDetailsFile
			out.Reports = append(out.Reports, MasterDetailsFile)
		}
		out.Pictures = append(out.Pictures, TimelineInputOf(res, facts.Nodes,
			workloads.FaultsOf(facts.Nemesis, facts.Nodes), max(facts.LastNs, 1), details))
	}
	out.Result = workloads.Result{Valid: res.Valid, Details: SummarizeMaster(res, details)}
	return out, nil
}

// Abort gives up; there is nothing to clean.
func (a *masterAnalysis) Abort() {}

// writeMasterDetails writes MasterDetailsFile into dir.
func writeMasterDetails(dir string, res MasterResult) error {
	f, err := os.Create(filepath.Join(dir, MasterDetailsFile))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, v := range res.Violations {
		if err == nil {
			err = enc.Encode(struct {
				Violation MasterViolation `json:"violation"`
			}{v})
		}
	}
	for _, list := range []struct {
		key string
		ps  []history.Problem
	}{{"problem", res.Problems}, {"anomaly", res.Anomalies}} {
		for _, p := range list.ps {
			if err == nil {
				err = enc.Encode(map[string]history.Problem{list.key: p})
			}
		}
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
