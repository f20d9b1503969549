package nodeproc

import (
	"context"
	"sync"
)

// Failure is the first thing that went wrong with a network's nodes (a
// program that exited on its own, output the protocol forbids). Every
// failure is reported to the run; the first is also kept, so that a
// network waiting for its nodes (at start, after a restart) stops
// waiting. It is safe for concurrent use.
type Failure struct {
	once   sync.Once
	err    error
	done   chan struct{} // closed when err is set
	report func(error)
}

// NewFailure returns a Failure that reports every failure to report
// (harness.Host.Fail).
func NewFailure(report func(error)) *Failure {
	return &Failure{done: make(chan struct{}), report: report}
}

// Set records err (the first one is kept) and reports it.
func (f *Failure) Set(err error) {
	f.once.Do(func() { f.err = err; close(f.done) })
	f.report(err)
}

// Done is closed once a failure was set.
func (f *Failure) Done() <-chan struct{} { return f.done }

// Err is the first failure, nil before any.
func (f *Failure) Err() error {
	select {
	case <-f.done:
		return f.err
	default:
		return nil
	}
}

// AwaitEach runs each(ctx, i) for i in [0, n) on goroutines of their own
// (a node's init or readiness) and waits until all returned nil, one
// returned an error (that error), a failure was set (the failure), or ctx
// ended (ctx's error). The goroutines still running are cancelled when it
// returns.
func (f *Failure) AwaitEach(ctx context.Context, n int, each func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- each(ctx, i) }()
	}
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				return err
			}
		case <-f.Done():
			return f.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
