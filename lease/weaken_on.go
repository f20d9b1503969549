//go:build weaken

package lease

import "fmt"

// WeakenedForControl returns c with the named safety rule switched off
// (weaken.go). It exists only in a binary built with -tags weaken, for
// the harness's negative controls (scripts/harness_checks.sh): a normal
// build cannot switch a rule off.
func WeakenedForControl(c Config, name string) (Config, error) {
	for w, n := range weakeningNames {
		if n == name && w != strong {
			c.weaken = w
			return c, nil
		}
	}
	return c, fmt.Errorf("unknown weakening %q", name)
}
