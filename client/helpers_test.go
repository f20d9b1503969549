package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"chunklease/internal/fakelease"
)

// fakeClient starts a fake cluster and a Client over all its members.
// Inside a synctest bubble, pass fakelease.Pipe.
func fakeClient(t *testing.T, opts fakelease.Options, cfg Config) (*fakelease.Cluster, *Client) {
	t.Helper()
	f := fakelease.Start(t, opts)
	cfg.Endpoints = f.Endpoints()
	cfg.DialContext = f.DialContext()
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return f, c
}

// ctxFor is a context with a timeout, cancelled at the test's end.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// asError returns err as *Error, failing the test otherwise.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	return e
}

// nodesOf lists the members that received the logged calls of op.
func nodesOf(f *fakelease.Cluster, op string) []string {
	var out []string
	for _, c := range f.CallsOf(op) {
		out = append(out, c.Node)
	}
	return out
}
