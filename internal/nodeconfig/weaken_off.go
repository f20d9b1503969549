//go:build !weaken

package nodeconfig

import "chunklease/lease"

// WeakenBuiltIn is false: this build keeps every safety rule on.
const WeakenBuiltIn = false

// Weaken returns cfg unchanged; a LEASE_WEAKEN in the environment only
// gets a note in the log, since a normal build cannot switch a rule off
// (build with -tags weaken for the harness's negative controls).
func Weaken(cfg lease.Config, getenv func(string) string) (lease.Config, string, error) {
	if name := getenv("LEASE_WEAKEN"); name != "" {
		return cfg, "LEASE_WEAKEN=" + name + " ignored: only a binary built with -tags weaken can switch a safety rule off", nil
	}
	return cfg, "", nil
}
