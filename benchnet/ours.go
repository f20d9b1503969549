package main

import (
	"context"
	"errors"
	"fmt"

	"chunklease/client"
)

// ours is the chunk-lease service through its Go client (one Client
// shared by every benchmark client, as client/doc.go asks). Each client k
// is chunk server cs<k> with chunks of its own, so nothing contends, as
// in scripts/bench.sh: grants on free chunks, renews by the holder,
// checks of held chunks, releases by the latest token.
type ours struct {
	c       *client.Client
	leaseMs int64
	keys    int // leases a renew, check or mixed run cycles over, all clients together (0: 1000)
	pids    []int
}

func (o *ours) Name() string    { return "ours" }
func (o *ours) Servers() []int  { return o.pids }
func (o *ours) Version() string { return "this repository" }

func (o *ours) Worker(id, op string, k, clients int) worker {
	return &oursWorker{o: o, op: op, clients: clients, prefix: fmt.Sprintf("b%s_%s_%d_%d", id, op, clients, k), server: fmt.Sprintf("cs%d", k)}
}

type oursWorker struct {
	o          *ours
	op, prefix string
	clients    int
	server     string
	chunks     []string // grows as a grant run takes fresh chunks
	tokens     []int64  // the latest token of each chunk this client holds; 0 when none
	count      int      // the chunks set up
}

func (w *oursWorker) Setup(ctx context.Context, pool int) error {
	count, grant := setupSize(w.op, keysPerClient(w.o.keys, w.clients), pool)
	w.count = count
	for i := range count {
		w.ensure(i)
		if grant {
			if err := w.grant(ctx, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// ensure makes chunk j known.
func (w *oursWorker) ensure(j int) {
	for len(w.chunks) <= j {
		w.chunks = append(w.chunks, fmt.Sprintf("%s_%d", w.prefix, len(w.chunks)))
		w.tokens = append(w.tokens, 0)
	}
}

func (w *oursWorker) Do(ctx context.Context, i int) (string, error) {
	return doOp(ctx, w.op, i, w.count, leaseOps{w.grant, w.renew, w.check, w.release})
}

func (w *oursWorker) Teardown(ctx context.Context) {
	for j, t := range w.tokens {
		if t != 0 {
			w.release(ctx, j)
		}
	}
}

func (w *oursWorker) grant(ctx context.Context, j int) error {
	w.ensure(j)
	l, err := w.o.c.Grant(ctx, w.chunks[j], w.server, w.o.leaseMs)
	switch {
	case err != nil:
		return err
	case !l.Granted():
		return fmt.Errorf("grant of %s: held by %s", w.chunks[j], l.Primary)
	}
	w.tokens[j] = l.Token
	return nil
}

func (w *oursWorker) renew(ctx context.Context, j int) error {
	l, err := w.o.c.Renew(ctx, w.chunks[j], w.server, w.o.leaseMs)
	if err != nil {
		return err
	}
	w.tokens[j] = l.Token
	return nil
}

func (w *oursWorker) check(ctx context.Context, j int) error {
	c, err := w.o.c.Check(ctx, w.chunks[j])
	switch {
	case err != nil:
		return err
	case w.tokens[j] != 0 && (c.Expired || c.Primary != w.server):
		return fmt.Errorf("check of %s: %+v, want held by %s", w.chunks[j], c, w.server)
	}
	return nil
}

func (w *oursWorker) release(ctx context.Context, j int) error {
	if w.tokens[j] == 0 {
		return errors.New("release of a chunk whose grant failed")
	}
	err := w.o.c.Release(ctx, w.chunks[j], w.server, w.tokens[j])
	if err == nil {
		w.tokens[j] = 0
	}
	return err
}
