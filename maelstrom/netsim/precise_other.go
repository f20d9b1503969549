//go:build !linux

package netsim

import (
	"errors"
	"time"
)

// haveKernelTimer: outside Linux deliveries use Go timers only (wait.go).
const haveKernelTimer = false

// kernelTimer is not available here; wait is never called.
type kernelTimer struct{}

func (k *kernelTimer) wait(time.Duration) error { return errors.ErrUnsupported }
func (k *kernelTimer) close()                   {}

func clockIsVirtual() bool { return false }
