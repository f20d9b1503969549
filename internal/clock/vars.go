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
