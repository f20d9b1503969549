//go:build unix

package harness

import "syscall"

// peakRSSMiB is the peak resident memory of the harness itself, in MiB;
// 0 when the system does not say.
func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) * maxRSSUnit / (1 << 20)
}
