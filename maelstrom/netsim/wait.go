package netsim

import (
	"context"
	"errors"
	"os"
	"time"
)

// Delivery precision. A Go timer wakes a goroutine late by up to a
// millisecond when every P is idle: the runtime then sleeps in the
// netpoller, whose timeout is in whole milliseconds (rounded down, then at
// least 1 ms). Every hop of a simulated message would pay that, and a
// four-hop grant at 10 ms latency would measure 2 ms above the protocol's
// floor. So a delivery waits in two parts: a Go timer until preciseLead
// before the deadline (cancellable, cheap for long waits), then a
// high-resolution kernel timer for the rest (precise_linux.go: a timerfd
// read through the netpoller, which wakes as soon as the timer fires,
// holds no P or thread while it waits, and burns no CPU).
//
// Inside a testing/synctest bubble time is virtual: the kernel timer would
// wait in real time while the bubble's clock stands still. New detects
// such a clock once (clockIsVirtual) and then uses Go timers only, so the
// bubble's behaviour is exactly the timers'. Whatever happens in the
// precise part (the receiver closed meanwhile, the kernel refused a file
// descriptor), a final timer wait guarantees that no message is handed
// over before its deadline by the time package's clock.

// preciseLead is how long before a deadline the Go timer hands over to
// the kernel timer: more than a Go timer's lateness on an idle runtime
// (about 1 ms), so the handover is almost never late itself.
const preciseLead = 2 * time.Millisecond

// waitUntil waits until deadline t (or until ctx ends) for the receiver
// whose inbox is in. Only that receiver's Recv calls it. The kernel-timer
// part, at most preciseLead, does not watch ctx: a cancelled Recv may
// return that much later.
func (n *Net) waitUntil(ctx context.Context, in *inbox, t time.Time) error {
	if n.precise.Load() && time.Until(t) > 0 {
		if err := sleepUntil(ctx, t.Add(-preciseLead)); err != nil {
			return err
		}
		if d := time.Until(t); d > 0 {
			if err := in.timer.wait(d); err != nil && !errors.Is(err, os.ErrClosed) {
				n.precise.Store(false) // e.g. no file descriptor left: Go timers from now on
			}
		}
	}
	return sleepUntil(ctx, t)
}

// sleepUntil waits with a Go timer until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
