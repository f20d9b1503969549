//go:build weaken

package nodeconfig

import (
	"fmt"

	"chunklease/lease"
)

// WeakenBuiltIn is true in a binary built with -tags weaken: LEASE_WEAKEN
// switches one of the core's safety rules off, for a negative control.
const WeakenBuiltIn = true

// Weaken switches off the safety rule LEASE_WEAKEN names (lease/weaken.go),
// and returns a note for the log that says so loudly.
func Weaken(cfg lease.Config, getenv func(string) string) (lease.Config, string, error) {
	name := getenv("LEASE_WEAKEN")
	if name == "" {
		return cfg, "weaken build: LEASE_WEAKEN is not set, every rule is on", nil
	}
	cfg, err := lease.WeakenedForControl(cfg, name)
	if err != nil {
		return cfg, "", fmt.Errorf("LEASE_WEAKEN (weaken build): %v", err)
	}
	return cfg, fmt.Sprintf("WEAKENED BUILD: the safety rule %q is off (LEASE_WEAKEN), for a negative control only", name), nil
}
