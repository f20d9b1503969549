package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"chunklease/maelstrom/netsim"
)

// testFlags are the options of `maelstrom test`, with Maelstrom's names
// and defaults, plus the lease workload's and the harness's own.
type testFlags struct {
	Workload        string   `json:"workload"`
	Bin             string   `json:"bin"`
	Args            []string `json:"args"`
	NodeCount       int      `json:"node_count"`
	Nodes           []string `json:"nodes"`
	TimeLimitS      float64  `json:"time_limit_s"`
	Rate            float64  `json:"rate"`
	Concurrency     string   `json:"concurrency"`
	LatencyMs       int      `json:"latency_ms"`
	LatencyDist     string   `json:"latency_dist"`
	Nemesis         string   `json:"nemesis"`
	NemesisInterval float64  `json:"nemesis_interval_s"`
	Availability    string   `json:"availability"`
	LogStderr       bool     `json:"log_stderr"`
	Strict          bool     `json:"strict"`
	Seed            uint64   `json:"seed"`
	Store           string   `json:"store"`
	LeaseMs         int64    `json:"lease_ms"`
	Servers         int      `json:"servers"`
	Chunks          int      `json:"chunks"`

	nodeList  string   // --nodes a,b,c
	nodeFlags []string // -n/--node, repeatable
	seedSet   bool
}

// newTestFlagSet declares every flag of `maelstrom test` on fs.
func newTestFlagSet(f *testFlags, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("maelstrom test", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.Workload, "workload", "lease", "workload: lease or echo")
	fs.StringVar(&f.Workload, "w", "lease", "shorthand for --workload")
	fs.StringVar(&f.Bin, "bin", "", "the node program to test (required)")
	fs.IntVar(&f.NodeCount, "node-count", 0, "run this many nodes, named n0, n1, ... (overrides --nodes)")
	fs.StringVar(&f.nodeList, "nodes", "", "comma-separated node ids (default n1,n2,n3,n4,n5)")
	fs.Func("node", "add one node id (repeatable)", func(s string) error { f.nodeFlags = append(f.nodeFlags, s); return nil })
	fs.Func("n", "shorthand for --node", func(s string) error { f.nodeFlags = append(f.nodeFlags, s); return nil })
	fs.Float64Var(&f.TimeLimitS, "time-limit", 60, "seconds during which ops are invoked")
	fs.Float64Var(&f.Rate, "rate", 5, "mean client ops per second across all workers (0: none)")
	fs.StringVar(&f.Concurrency, "concurrency", "1n", "client workers: N, or Kn for K times the node count")
	fs.IntVar(&f.LatencyMs, "latency", 0, "mean node-to-node latency in milliseconds")
	fs.StringVar(&f.LatencyDist, "latency-dist", "constant", "latency distribution: constant, uniform or exponential")
	fs.StringVar(&f.Nemesis, "nemesis", "", "faults to inject: partition")
	fs.Float64Var(&f.NemesisInterval, "nemesis-interval", 10, "mean seconds between nemesis operations")
	fs.StringVar(&f.Availability, "availability", "", "least ok fraction for a valid run: a number in [0, 1], or total")
	fs.BoolVar(&f.LogStderr, "log-stderr", false, "copy node stderr to the console")
	fs.BoolVar(&f.Strict, "strict", true, "fail the run on node output Maelstrom would reject; --strict=false mutes the node instead, as Maelstrom does")
	fs.Func("seed", "seed for latencies, partitions and workload choices (default: random, printed)", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		f.Seed, f.seedSet = v, true
		return err
	})
	fs.StringVar(&f.Store, "store", "store", "directory for run results")
	fs.Int64Var(&f.LeaseMs, "lease-ms", 1000, "lease workload: lease length each grant and renew asks for, in ms")
	fs.IntVar(&f.Servers, "servers", 3, "lease workload: number of chunk servers contending (cs1..)")
	fs.IntVar(&f.Chunks, "chunks", 3, "lease workload: number of chunks (ch_1..)")
	return fs
}

// nodeIDs resolves --node-count, --nodes and -n as Maelstrom does.
func (f *testFlags) nodeIDs() ([]string, error) {
	switch {
	case f.NodeCount < 0:
		return nil, fmt.Errorf("--node-count must be >= 1, got %d", f.NodeCount)
	case f.NodeCount > 0:
		ids := make([]string, f.NodeCount)
		for i := range ids {
			ids[i] = "n" + strconv.Itoa(i)
		}
		return ids, nil
	case f.nodeList != "":
		return strings.Split(f.nodeList, ","), nil
	case len(f.nodeFlags) > 0:
		return f.nodeFlags, nil
	}
	return []string{"n1", "n2", "n3", "n4", "n5"}, nil
}

// concurrency parses --concurrency: N, or Kn meaning K times the nodes.
func (f *testFlags) concurrency(nodes int) (int, error) {
	s := f.Concurrency
	k, err := strconv.Atoi(strings.TrimSuffix(s, "n"))
	if err != nil || k < 1 {
		return 0, fmt.Errorf("--concurrency %q: want a positive integer N or Kn (K times the node count)", s)
	}
	if strings.HasSuffix(s, "n") {
		return k * nodes, nil
	}
	return k, nil
}

// durations converts the second-valued flags.
func (f *testFlags) durations() (timeLimit, interval time.Duration, err error) {
	if !(f.TimeLimitS > 0) || math.IsInf(f.TimeLimitS, 0) {
		return 0, 0, fmt.Errorf("--time-limit must be a positive number of seconds, got %v", f.TimeLimitS)
	}
	if !(f.NemesisInterval > 0) || math.IsInf(f.NemesisInterval, 0) {
		return 0, 0, fmt.Errorf("--nemesis-interval must be a positive number of seconds, got %v", f.NemesisInterval)
	}
	return seconds(f.TimeLimitS), seconds(f.NemesisInterval), nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// latency parses --latency and --latency-dist.
func (f *testFlags) latency() (netsim.Latency, error) {
	dist, err := netsim.ParseDist(f.LatencyDist)
	if err != nil {
		return netsim.Latency{}, err
	}
	l := netsim.Latency{MeanMs: f.LatencyMs, Dist: dist}
	return l, l.Validate()
}

// nemesis parses --nemesis: empty, or "partition".
func (f *testFlags) nemesis() (bool, error) {
	switch f.Nemesis {
	case "":
		return false, nil
	case "partition":
		return true, nil
	}
	return false, fmt.Errorf("--nemesis %q: only partition is supported", f.Nemesis)
}

// availability parses --availability: nothing, "total" (1) or a fraction.
func (f *testFlags) availability() (*float64, error) {
	switch f.Availability {
	case "":
		return nil, nil
	case "total":
		one := 1.0
		return &one, nil
	}
	v, err := strconv.ParseFloat(f.Availability, 64)
	if err != nil || v < 0 || v > 1 {
		return nil, fmt.Errorf("--availability %q: want total or a number in [0, 1]", f.Availability)
	}
	return &v, nil
}

// checkRate rejects a negative or non-finite --rate.
func (f *testFlags) checkRate() error {
	if f.Rate < 0 || math.IsNaN(f.Rate) || math.IsInf(f.Rate, 0) {
		return errors.New("--rate must be a number >= 0")
	}
	return nil
}
