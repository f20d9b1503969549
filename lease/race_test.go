//go:build race

package lease_test

// The race detector slows the simulation about tenfold; the race run keeps
// the suite's time budget with a tenth of the schedules. The full budget
// runs without -race (scripts/run_tests.sh runs both).
func init() {
	defaultSchedules = 100
	raceEnabled = true
}
