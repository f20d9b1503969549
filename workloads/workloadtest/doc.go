// Package workloadtest helps the workloads' tests: a virtual-time driver
// that runs a workload against a simulated service the way the harness
// runs it against nodes (Simulate, SimulateRotating), a builder of
// hand-made lease histories (LeaseHistory) with the value shapes that are
// the oracle for the lease workload's encoders, and the streamed analysis
// of a history written to a file (Analyze, WithNemesis). It is imported
// by tests only; nothing in it runs in the harness.
package workloadtest
