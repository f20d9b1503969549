package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"chunklease/maelstrom/harness/simnet"
	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netsim"
)

// testFlags are the options of `maelstrom test`, with Maelstrom's names
// and defaults, plus the lease workload's and the harness's own.
type testFlags struct {
	Workload            string   `json:"workload"`
	Network             string   `json:"network"`
	Bin                 string   `json:"bin"`
	Args                []string `json:"args"`
	NodeCount           int      `json:"node_count"`
	Nodes               []string `json:"nodes"`
	TimeLimitS          int64    `json:"time_limit_s"`
	Rate                float64  `json:"rate"`
	Concurrency         string   `json:"concurrency"`
	LatencyMs           int      `json:"latency_ms"`
	LatencyDist         string   `json:"latency_dist"`
	Nemesis             string   `json:"nemesis"`
	NemesisInterval     float64  `json:"nemesis_interval_s"`
	RecoveryTimeS       float64  `json:"recovery_time_s"` // 0: the default for the workload's leases
	InitTimeoutS        float64  `json:"init_timeout_s"`
	KillWithoutBootWait bool     `json:"kill_without_boot_wait"`
	ClockDriftPPM       *int64   `json:"clock_drift_ppm"`     // nil: the nodes' LEASE_DRIFT_PPM
	ClockMaxOffsetMs    *int64   `json:"clock_max_offset_ms"` // nil: the offset bound for the leases
	Availability        string   `json:"availability"`
	LogStderr           bool     `json:"log_stderr"`
	LogNetSend          bool     `json:"log_net_send"`
	LogNetRecv          bool     `json:"log_net_recv"`
	TestCount           int      `json:"test_count"`
	Strict              bool     `json:"strict"`
	Seed                uint64   `json:"seed"`
	Store               string   `json:"store"`
	LeaseMs             int64    `json:"lease_ms"`
	Servers             int      `json:"servers"`
	Chunks              int      `json:"chunks"`
	BenchOp             string   `json:"bench_op"`
	Ops                 int      `json:"ops"`

	nodeList   string   // --nodes a,b,c
	nodeFlags  []string // -n/--node, repeatable
	nodesFile  string   // --nodes-file
	help       bool
	seedSet    bool
	countGiven bool     // --node-count was given (an explicit 0 is refused)
	sshUnused  struct { // Jepsen's SSH options: accepted, no effect (as in Maelstrom)
		user, password, key string
		strict, noSSH       bool
	}
}

// newTestFlagSet declares every flag of `maelstrom test`. Flags may come
// before, between and after positional words, as with Maelstrom's
// tools.cli; everything after "--" is positional. Parsing errors are
// returned, never printed.
func newTestFlagSet(f *testFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("maelstrom test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	fs.BoolVarP(&f.help, "help", "h", false, "print this help and exit")
	fs.StringVarP(&f.Workload, "workload", "w", "lease", "workload: lease, echo, master or lease-bench")
	fs.StringVar(&f.Bin, "bin", "", "the node program to test (required)")
	fs.StringVar(&f.Network, "network", "sim", "sim: Maelstrom's simulated network; netns: each node runs as BIN serve in its own Linux network namespace, faults by the kernel (needs root)")
	fs.IntVar(&f.NodeCount, "node-count", 0, "run this many nodes, named n0, n1, ... (overrides --nodes)")
	fs.StringVar(&f.nodeList, "nodes", "", "comma-separated node ids (default n1,n2,n3,n4,n5)")
	fs.StringArrayVarP(&f.nodeFlags, "node", "n", nil, "add one node id (repeatable)")
	fs.StringVar(&f.nodesFile, "nodes-file", "", "file with node ids, one a line, added to -n")
	fs.Int64Var(&f.TimeLimitS, "time-limit", 60, "seconds during which ops are invoked (a whole number)")
	fs.Float64Var(&f.Rate, "rate", 5, "mean client ops per second across all workers (0: none)")
	fs.StringVar(&f.Concurrency, "concurrency", "1n", "client workers: N, or Kn for K times the node count")
	fs.IntVar(&f.LatencyMs, "latency", 0, "mean node-to-node latency in milliseconds")
	fs.StringVar(&f.LatencyDist, "latency-dist", "constant", "latency distribution: constant, uniform or exponential")
	fs.StringVar(&f.Nemesis, "nemesis", "", "faults to inject, comma-separated: partition, kill, pause, clock, packet (clock needs a node built with -tags clockfault)")
	fs.Float64Var(&f.NemesisInterval, "nemesis-interval", 10, "mean seconds between nemesis operations")
	fs.Float64Var(&f.RecoveryTimeS, "recovery-time", 0, "seconds the final phase waits after healing every fault (default: twice the longest lease, at least 1, with a --nemesis; 0 without; Maelstrom: 10)")
	fs.Float64Var(&f.InitTimeoutS, "init-timeout", simnet.InitTimeout.Seconds(), "seconds a node has to answer init (--network netns: to become ready), at the start and after each restart (Maelstrom: a fixed 10); more on a loaded machine or for a slow interpreter")
	fs.BoolVar(&f.KillWithoutBootWait, "kill-without-boot-wait", false, "negative control: restart killed nodes without LEASE_BOOT_WAIT_MS")
	fs.Var(optionalInt{&f.ClockDriftPPM}, "clock-drift-ppm", "clock nemesis: draw rates within 1 +- N ppm (default: the nodes' LEASE_DRIFT_PPM, 1000 unless set; more is the negative control)")
	fs.Var(optionalInt{&f.ClockMaxOffsetMs}, "clock-max-offset-ms", "clock nemesis: draw wall-clock offsets within +-N ms (default: a quarter of the longest lease, the bound for token order across restarts; more is the negative control)")
	fs.StringVar(&f.Availability, "availability", "", "least ok fraction for a valid run: a number in [0, 1], or total")
	fs.BoolVar(&f.LogStderr, "log-stderr", false, "copy node stderr to the console")
	fs.BoolVar(&f.LogNetSend, "log-net-send", false, "log every message sent (:send)")
	fs.BoolVar(&f.LogNetRecv, "log-net-recv", false, "log every message delivered (:recv)")
	fs.IntVar(&f.TestCount, "test-count", 1, "run the test this many times; stop at the first that is not valid")
	fs.BoolVar(&f.Strict, "strict", true, "fail the run on node output Maelstrom would reject; --strict=false mutes the node instead, as Maelstrom does")
	fs.Func("seed", "seed for latencies, faults and workload choices (default: random, printed)", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		f.Seed, f.seedSet = v, true
		return err
	})
	fs.StringVar(&f.Store, "store", "store", "directory for run results")
	fs.Int64Var(&f.LeaseMs, "lease-ms", 1000, "lease workload: the longest lease_ms a grant or renew asks for; master workload: the master lease's length, given to every node as LEASE_MS and LEASE_MAX_MS")
	fs.IntVar(&f.Servers, "servers", 3, "lease workload: number of chunk servers contending (cs1..)")
	fs.IntVar(&f.Chunks, "chunks", 3, "lease workload: number of chunks (ch_1..)")
	fs.StringVar(&f.BenchOp, "bench-op", "renew", "lease-bench workload: the op measured: grant, renew, check, release or mixed")
	fs.IntVar(&f.Ops, "ops", 2000, "lease-bench workload: measured ops across all clients")
	u := &f.sshUnused
	fs.StringVar(&u.user, "username", "root", "no effect (Jepsen's SSH options; Maelstrom runs no SSH)")
	fs.StringVar(&u.password, "password", "root", "no effect")
	fs.StringVar(&u.key, "ssh-private-key", "", "no effect")
	fs.BoolVar(&u.strict, "strict-host-key-checking", false, "no effect")
	fs.BoolVar(&u.noSSH, "no-ssh", false, "no effect")
	for _, name := range []string{"username", "password", "ssh-private-key", "strict-host-key-checking", "no-ssh"} {
		_ = fs.MarkHidden(name) // defined above
	}
	return fs
}

// optionalInt is a whole-number flag whose value stays nil while the flag
// is not given (the default is worked out later).
type optionalInt struct{ dst **int64 }

func (o optionalInt) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return err
	}
	*o.dst = &v
	return nil
}

func (o optionalInt) String() string {
	if *o.dst == nil {
		return ""
	}
	return strconv.FormatInt(**o.dst, 10)
}

func (o optionalInt) Type() string { return "int" }

// parseError words a flag-parsing error as Maelstrom's tools.cli does.
func parseError(err error) error {
	var unknown *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	var missing *pflag.ValueRequiredError
	switch {
	case errors.As(err, &unknown):
		dashes := "--"
		if unknown.GetSpecifiedShortnames() != "" {
			dashes = "-"
		}
		return fmt.Errorf("Unknown option: %q", dashes+unknown.GetSpecifiedName())
	case errors.As(err, &invalid):
		return fmt.Errorf("Error while parsing option %q: %s", "--"+invalid.GetFlag().Name+" "+invalid.GetValue(), valueProblem(invalid))
	case errors.As(err, &missing):
		return fmt.Errorf("Missing required argument for %q", "--"+missing.GetFlag().Name)
	}
	return err
}

// valueProblem says what kind of value a flag wanted.
func valueProblem(e *pflag.InvalidValueError) string {
	switch e.GetFlag().Value.Type() {
	case "int", "int64":
		return "not a whole number"
	case "float64":
		return "not a number"
	case "bool":
		return "not true or false"
	}
	return errors.Unwrap(e).Error()
}

// invalid is Maelstrom's validation error for a flag's value.
func invalid(name string, value any, why string) error {
	return fmt.Errorf("Failed to validate %q: %s", fmt.Sprintf("--%s %v", name, value), why)
}

// nodeIDs resolves --node-count, --nodes, -n and --nodes-file as
// Maelstrom does: --node-count wins, then --nodes (comma-separated,
// spaces around names ignored), then -n and the file's lines, else
// n1..n5.
func (f *testFlags) nodeIDs() ([]string, error) {
	switch {
	case f.NodeCount < 0 || (f.NodeCount == 0 && f.countGiven):
		return nil, invalid("node-count", f.NodeCount, "Must be positive")
	case f.NodeCount > 0:
		ids := make([]string, f.NodeCount)
		for i := range ids {
			ids[i] = "n" + strconv.Itoa(i)
		}
		return ids, nil
	case f.nodeList != "":
		ids := strings.Split(f.nodeList, ",")
		for i := range ids {
			ids[i] = strings.TrimSpace(ids[i])
		}
		return ids, nil
	}
	ids := f.nodeFlags
	if f.nodesFile != "" {
		raw, err := os.ReadFile(f.nodesFile)
		if err != nil {
			return nil, fmt.Errorf("--nodes-file: %w", err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				ids = append(ids, line)
			}
		}
	}
	if len(ids) > 0 {
		return ids, nil
	}
	return []string{"n1", "n2", "n3", "n4", "n5"}, nil
}

// concurrency parses --concurrency: N, or Kn meaning K times the nodes.
func (f *testFlags) concurrency(nodes int) (int, error) {
	s := f.Concurrency
	k, err := strconv.Atoi(strings.TrimSuffix(s, "n"))
	if err != nil || k < 1 || strings.HasPrefix(s, "+") {
		return 0, invalid("concurrency", s, "Must be a positive integer, optionally followed by n.")
	}
	if strings.HasSuffix(s, "n") {
		return k * nodes, nil
	}
	return k, nil
}

// durations converts the second-valued flags (--init-timeout:
// initTimeout).
func (f *testFlags) durations() (timeLimit, interval, recovery time.Duration, err error) {
	var errs []error
	if f.TimeLimitS < 1 {
		errs = append(errs, invalid("time-limit", f.TimeLimitS, "Must be positive"))
	}
	if !(f.NemesisInterval > 0) || math.IsInf(f.NemesisInterval, 0) {
		errs = append(errs, invalid("nemesis-interval", f.NemesisInterval, "Must be a positive number of seconds"))
	}
	if !(f.RecoveryTimeS >= 0) || math.IsInf(f.RecoveryTimeS, 0) {
		errs = append(errs, invalid("recovery-time", f.RecoveryTimeS, "Must be a number of seconds >= 0"))
	}
	if _, err := f.initTimeout(); err != nil {
		errs = append(errs, err)
	}
	return time.Duration(f.TimeLimitS) * time.Second, seconds(f.NemesisInterval), seconds(f.RecoveryTimeS), errors.Join(errs...)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// maxInitTimeoutS bounds --init-timeout at an hour: a longer wait is a
// mistake (a stuck node would hold the run that long), and the bound
// keeps the duration from overflowing.
const maxInitTimeoutS = 3600

// initTimeout is --init-timeout as a duration: more than 0, at most an
// hour.
func (f *testFlags) initTimeout() (time.Duration, error) {
	if !(f.InitTimeoutS > 0) || f.InitTimeoutS > maxInitTimeoutS {
		return 0, invalid("init-timeout", f.InitTimeoutS, "Must be a number of seconds above 0 and at most 3600")
	}
	return seconds(f.InitTimeoutS), nil
}

// latency parses --latency and --latency-dist.
func (f *testFlags) latency() (netsim.Latency, error) {
	if f.LatencyMs < 0 {
		return netsim.Latency{}, invalid("latency", f.LatencyMs, "Must be >= 0")
	}
	dist, err := netsim.ParseDist(f.LatencyDist)
	if err != nil {
		return netsim.Latency{}, err
	}
	l := netsim.Latency{MeanMs: f.LatencyMs, Dist: dist}
	return l, l.Validate()
}

// faults parses --nemesis: a comma-separated set of partition, kill,
// pause and packet.
func (f *testFlags) faults() (nemesis.Faults, error) {
	faults, err := nemesis.ParseFaults(f.Nemesis)
	if err != nil {
		return faults, invalid("nemesis", f.Nemesis, err.Error())
	}
	return faults, nil
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
		return nil, invalid("availability", f.Availability, "Must be total or a number in [0, 1]")
	}
	return &v, nil
}

// checkCounts rejects a negative or non-finite --rate and a --test-count
// below 1.
func (f *testFlags) checkCounts() error {
	var errs []error
	if f.Rate < 0 || math.IsNaN(f.Rate) || math.IsInf(f.Rate, 0) {
		errs = append(errs, invalid("rate", f.Rate, "Must be a number >= 0"))
	}
	if f.TestCount < 1 {
		errs = append(errs, invalid("test-count", f.TestCount, "Must be positive"))
	}
	return errors.Join(errs...)
}

// networkProblems checks --network and what the real network cannot do:
// it runs the nodes' HTTP API (lease-node serve), which has no echo; its
// latency is a constant delay; it carries no journal to log.
func (f *testFlags) networkProblems() error {
	switch f.Network {
	case "sim", "":
		return nil
	case "netns":
	default:
		return invalid("network", f.Network, "Must be sim or netns")
	}
	var errs []error
	if f.Workload == "echo" {
		errs = append(errs, invalid("workload", f.Workload, "The netns network runs lease-node serve, whose HTTP API has no echo: use lease, master or lease-bench"))
	}
	if f.LatencyDist != "constant" {
		errs = append(errs, invalid("latency-dist", f.LatencyDist, "The netns network's latency is a constant delay on every node-to-node packet"))
	}
	if f.LogNetSend || f.LogNetRecv {
		errs = append(errs, errors.New("--log-net-send and --log-net-recv need --network sim: on the netns network the kernel carries the messages and the harness sees none"))
	}
	return errors.Join(errs...)
}
