package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"chunklease/maelstrom/harness"
	"chunklease/report"
)

const analyzeUsage = `Usage: maelstrom analyze [--store DIR] [RUN_DIR]

Judges a stored run again, as Maelstrom's analyze does: reads RUN_DIR's
history.jsonl and results.json (default: STORE/latest), runs the
workload's checker, the statistics and the pictures again and rewrites
results.json, the report files and index.html in RUN_DIR. The run's flags,
seed and network figures come from its results.json; messages.svg, drawn
from the live network's journal, is kept as the run wrote it. Nothing is
started.

Exit status, as test's: 0 valid, 1 invalid, 2 validity unknown, 254 bad
arguments (no such run), 255 the analysis failed (or the stored run had).

Options:
`

// analyze is the analyze command.
func analyze(args []string, stdout, stderr io.Writer) int {
	var store string
	var help bool
	fs := pflag.NewFlagSet("maelstrom analyze", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVarP(&help, "help", "h", false, "print this help and exit")
	fs.StringVar(&store, "store", "store", "directory of stored runs; the run analysed is STORE/latest unless RUN_DIR is given")
	err := fs.Parse(args)
	if help {
		fmt.Fprint(stdout, analyzeUsage)
		fmt.Fprint(stdout, fs.FlagUsages())
		return harness.ExitValid
	}
	if err == nil && fs.NArg() > 1 {
		err = fmt.Errorf("analyze takes one run directory, got %d: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	if err != nil {
		fmt.Fprintf(stderr, "maelstrom: %v\n", parseError(err))
		return harness.ExitBadArgs
	}
	dir := filepath.Join(store, "latest")
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	opts, stored, err := storedOptions(dir)
	if err != nil {
		fmt.Fprintf(stderr, "maelstrom: %v\n", err)
		return harness.ExitBadArgs
	}
	opts.Stdout, opts.Stderr = stdout, stderr
	out := harness.Analyze(opts, dir, stored)
	if out.Err != nil && out.Results == nil {
		fmt.Fprintf(stderr, "maelstrom: %v\n", out.Err)
	}
	return out.Exit
}

// storedOptions rebuilds a stored run's options from its results.json:
// the flags it ran with, as test parsed them.
func storedOptions(dir string) (harness.Options, *report.StoredRun, error) {
	stored, err := report.ReadStoredRun(dir)
	if err != nil {
		return harness.Options{}, nil, err
	}
	f := &testFlags{}
	if err := json.Unmarshal(stored.Config, f); err != nil {
		return harness.Options{}, nil, fmt.Errorf("%s/results.json: the run's flags (config): %w", dir, err)
	}
	if f.Workload != stored.Workload {
		return harness.Options{}, nil, fmt.Errorf("%s/results.json: workload %q, but its flags say %q", dir, stored.Workload, f.Workload)
	}
	if f.NodeCount == 0 {
		f.nodeList = strings.Join(f.Nodes, ",") // the resolved node ids
	}
	o, err := f.runOptions()
	if err != nil {
		return harness.Options{}, nil, errors.Join(fmt.Errorf("%s/results.json: the run's flags", dir), err)
	}
	o.StoreDir = filepath.Dir(filepath.Dir(dir))
	return o, stored, nil
}
