// Package clock is a node process's sense of time: the monotonic clock
// that drives its timers and the lease core, and the wall clock it reads
// once at start (incarnation, ballot floor).
//
// A normal build reads the machine's clocks unchanged. A build with
// -tags clockfault (the clock nemesis's binary, contract section 2) lets a
// test harness skew them, because a Go program reads its clocks from the
// kernel and no preloaded library can fake them:
//
//   - LEASE_CLOCK_OFFSET_MS (a whole number, may be negative) is added to
//     every wall-clock read;
//   - LEASE_CLOCK_RATE (a positive factor, 1 = true time) scales elapsed
//     monotonic time, timers included: at 2 the node's clock runs twice as
//     fast, its leases end and its timers fire in half the real time;
//   - LEASE_CLOCK_FILE names a file holding {"offset_ms": N, "rate": R}
//     that the node reads at start (after the two variables above, which
//     it overrides) and re-reads while it runs (polled every PollInterval), so
//     a harness changes a running node's clocks by rewriting the file
//     (write a temporary file and rename it over, so a read never sees
//     half a file). A rate change takes effect from the moment it is read
//     (the clock never jumps); an offset change moves the wall clock.
//
// In a normal build those variables are ignored, and FromEnv says so in
// its Notes, so a test that meant to skew a clock cannot pass unnoticed
// with an unskewed binary. FaultsBuiltIn tells which build this is.
//
// Guarantees: Now never goes backwards and is continuous across rate
// changes; Wall is the wall clock at the clock's origin plus the offset
// plus Now (so it advances at the clock's rate, like a drifting
// oscillator's); RealDelay converts a span of this clock into the real
// time a timer must wait, at the current rate, and Changed is closed at
// every change so that a waiting timer can re-arm.
//
// Tests: clock_test.go (the real clock), fault_test.go (with -tags
// clockfault: offsets, rates, continuity across changes, the control
// file, bad values).
package clock
