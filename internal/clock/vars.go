package clock

import "time"

// The environment variables a clockfault build reads (see the package doc).
const (
	EnvOffsetMs = "LEASE_CLOCK_OFFSET_MS"
	EnvRate     = "LEASE_CLOCK_RATE"
	EnvFile     = "LEASE_CLOCK_FILE"
)

// Variables lists them, in the order the help text shows them.
var Variables = []string{EnvOffsetMs, EnvRate, EnvFile}

// PollInterval is how often a clockfault build re-reads LEASE_CLOCK_FILE.
const PollInterval = 10 * time.Millisecond

// Setting is what LEASE_CLOCK_FILE holds: {"offset_ms": N, "rate": R}.
// A harness writes it; a clockfault build reads it.
type Setting struct {
	OffsetMs int64   `json:"offset_ms"`
	Rate     float64 `json:"rate"`
}

// FollowingNote is the note a clockfault build logs when it follows the
// control file at path: a harness that writes the file looks for it, so
// that clock faults cannot silently do nothing.
func FollowingNote(path string) string { return "clockfault build: following " + path }

// IgnoredNote is the note a normal build logs for a clock-fault variable
// that is set.
func IgnoredNote(name string) string {
	return name + " is set but ignored: this binary was built without -tags clockfault"
}
