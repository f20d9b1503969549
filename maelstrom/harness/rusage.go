//go:build unix

package harness

import "syscall"

// peakRSSMiB is the peak resident memory of the harness itself
// (RUSAGE_SELF) or of the largest of its children that were reaped, the
// node programs (RUSAGE_CHILDREN), in MiB; 0 when the system does not say.
func peakRSSMiB(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) * maxRSSUnit / (1 << 20)
}
