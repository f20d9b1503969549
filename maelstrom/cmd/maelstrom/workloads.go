package main

import (
	"strings"

	"chunklease/workloads"
	"chunklease/workloads/echo"
	"chunklease/workloads/lease"
	"chunklease/workloads/leasebench"
	"chunklease/workloads/master"
)

// workloadTable is every workload -w can name, in the order the help
// lists them, each with its constructor from the flags. Adding a
// workload takes its own package and one line here
// (docs/adding-a-workload.md).
var workloadTable = []workloadEntry{
	{"echo", echo.FromParams},
	{"lease", lease.FromParams},
	{"master", master.FromParams},
	{"lease-bench", leasebench.FromParams},
}

// workloadEntry is one workload of the table.
type workloadEntry struct {
	name  string
	build func(workloads.Params) (workloads.Workload, error)
}

// workloadNames lists the table's names: "echo, lease, master, lease-bench".
func workloadNames() string {
	var names []string
	for _, w := range workloadTable {
		names = append(names, w.name)
	}
	return strings.Join(names, ", ")
}
