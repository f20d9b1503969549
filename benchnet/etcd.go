package main

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdSystem is etcd's lease API through its Go client, op for op:
// grant = LeaseGrant, renew = LeaseKeepAliveOnce, check =
// LeaseTimeToLive, release = LeaseRevoke; mixed = all four in turn on a
// lease of the client's own. Each client has leases of its own, so
// nothing contends; leases a run leaves are revoked afterwards, not
// measured.
type etcdSystem struct {
	name, version string
	c             *clientv3.Client
	ttlS          int64 // every lease's TTL (whole seconds: etcd has no other)
	keys          int   // leases a renew, check or mixed run cycles over, all clients together (0: 1000)
	ec            *etcdCluster
}

func (e *etcdSystem) Name() string    { return e.name }
func (e *etcdSystem) Version() string { return e.version }

func (e *etcdSystem) Servers() []int {
	var pids []int
	for _, m := range e.ec.members {
		if m.running() {
			pids = append(pids, m.cmd.Process.Pid)
		}
	}
	return pids
}

func (e *etcdSystem) Worker(id, op string, k, clients int) worker {
	return &etcdWorker{e: e, op: op, clients: clients}
}

type etcdWorker struct {
	e       *etcdSystem
	op      string
	clients int
	ids     []clientv3.LeaseID // 0 when revoked or never granted; grows as a grant run goes
	count   int                // the leases set up
}

func (w *etcdWorker) Setup(ctx context.Context, pool int) error {
	count, grant := setupSize(w.op, keysPerClient(w.e.keys, w.clients), pool)
	w.count = count
	w.ids = make([]clientv3.LeaseID, count)
	if grant {
		for j := range w.ids {
			if err := w.grant(ctx, j); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *etcdWorker) Do(ctx context.Context, i int) (string, error) {
	return doOp(ctx, w.op, i, w.count, leaseOps{w.grant, w.keepAlive, w.timeToLive, w.revoke})
}

func (w *etcdWorker) Teardown(ctx context.Context) {
	for j, id := range w.ids {
		if id != 0 {
			w.revoke(ctx, j)
		}
	}
}

func (w *etcdWorker) grant(ctx context.Context, j int) error {
	for len(w.ids) <= j {
		w.ids = append(w.ids, 0)
	}
	r, err := w.e.c.Grant(ctx, w.e.ttlS)
	switch {
	case err != nil:
		return err
	case r.Error != "" || r.ID == 0 || r.TTL <= 0:
		return fmt.Errorf("LeaseGrant answered id %d, TTL %d, error %q", r.ID, r.TTL, r.Error)
	}
	w.ids[j] = r.ID
	return nil
}

func (w *etcdWorker) keepAlive(ctx context.Context, j int) error {
	r, err := w.e.c.KeepAliveOnce(ctx, w.ids[j])
	switch {
	case err != nil:
		return err
	case r.TTL <= 0:
		return fmt.Errorf("LeaseKeepAliveOnce of %x answered TTL %d", w.ids[j], r.TTL)
	}
	return nil
}

func (w *etcdWorker) timeToLive(ctx context.Context, j int) error {
	r, err := w.e.c.TimeToLive(ctx, w.ids[j])
	switch {
	case err != nil:
		return err
	case r.TTL <= 0:
		return fmt.Errorf("LeaseTimeToLive of %x answered TTL %d (expired)", w.ids[j], r.TTL)
	}
	return nil
}

func (w *etcdWorker) revoke(ctx context.Context, j int) error {
	if w.ids[j] == 0 {
		return fmt.Errorf("LeaseRevoke of a lease whose grant failed")
	}
	if _, err := w.e.c.Revoke(ctx, w.ids[j]); err != nil {
		return err
	}
	w.ids[j] = 0
	return nil
}
