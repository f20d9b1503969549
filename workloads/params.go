package workloads

// Params are the settings a workload is built from: the CLI's flags of
// `maelstrom test`, resolved. Each workload package has a FromParams
// constructor that reads the ones it needs and refuses bad values with
// an error that names the flag; the CLI's table of workloads maps each
// -w name to one (maelstrom/cmd/maelstrom/workloads.go).
type Params struct {
	Rate    float64 // --rate: mean scheduled ops per second across all workers
	Workers int     // --concurrency, resolved: the client workers
	Seed    int64   // the workload's seed (the harness's WorkloadSeed of --seed)
	LeaseMs int64   // --lease-ms: the longest lease a workload uses
	// The lease workloads' own: --servers and --chunks, and the lease
	// benchmark's --bench-op and --ops.
	Servers, Chunks int
	BenchOp         string
	Ops             int
}
