package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"
)

// reportPart prints the table part's report again from a stored run
// (STORE/results.jsonl), e.g. after a change to the report itself.
type reportPart struct{ results string }

func (r *reportPart) flags(fs *flag.FlagSet) {
	fs.StringVar(&r.results, "results", "", "a results.jsonl written by the table part (-store)")
}

func (r *reportPart) run(ctx context.Context, env *benchEnv) error {
	if r.results == "" {
		return errors.New("-results FILE is required")
	}
	f, err := os.Open(r.results)
	if err != nil {
		return err
	}
	defer f.Close()
	var results []result
	var systems []string
	var clients []int
	rounds := 0
	var duration float64
	s := bufio.NewScanner(f)
	for s.Scan() {
		var res result
		if err := json.Unmarshal(s.Bytes(), &res); err != nil {
			return fmt.Errorf("%s: %v", r.results, err)
		}
		results = append(results, res)
		if !slices.Contains(systems, res.System) {
			systems = append(systems, res.System)
		}
		if !slices.Contains(clients, res.Clients) {
			clients = append(clients, res.Clients)
		}
		rounds, duration = max(rounds, res.Round+1), res.DurationS
	}
	if err := s.Err(); err != nil {
		return err
	}
	slices.Sort(clients)
	t := &tablePart{duration: time.Duration(duration * float64(time.Second)), rounds: rounds}
	var named []system
	for _, name := range systems {
		named = append(named, storedSystem(name))
	}
	t.report(env, results, named, clients)
	return nil
}

// storedSystem is a system known only by its name, for a report.
type storedSystem string

func (s storedSystem) Name() string                           { return string(s) }
func (s storedSystem) Version() string                        { return "" }
func (s storedSystem) Servers() []int                         { return nil }
func (s storedSystem) Worker(string, string, int, int) worker { return nil }
