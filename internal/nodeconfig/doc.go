// Package nodeconfig is the lease settings both shells of lease-node
// share (the Maelstrom node in the module root and the service in
// server/): the table of flags and environment variables, their parsing
// and checks, and the start every mode makes (parse, help, clocks).
//
// It is not the core's configuration (lease.Config): a shell turns a
// Node into one. Tests: nodeconfig_test.go; the shells' own help tests
// check that -h lists every row.
package nodeconfig
