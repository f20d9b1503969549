package main

import "context"

// leaseOps are one system's four calls on its j-th lease (chunk or
// lease id) of a worker: the same table for ours and etcd's.
type leaseOps struct {
	grant, renew, check, release func(ctx context.Context, j int) error
}

// setupSize is how many leases a worker of op holds at the start, and
// whether Setup grants them first: renew and check cycle over
// keysPerClient leases granted beforehand; release gives back the pool
// of leases granted beforehand; mixed cycles over keysPerClient leases,
// each granted, renewed, checked and released in turn; grant takes
// fresh ones as it goes (the worker's table grows).
func setupSize(op string, keys, pool int) (count int, grant bool) {
	switch op {
	case "renew", "check":
		return keys, true
	case "release":
		return pool, true
	case "mixed":
		return keys, false
	}
	return 0, false
}

// keysPerClient is how many chunks (or etcd leases) a renew, check or
// mixed client cycles over: keys over all clients (0: 1000, as in
// scripts/bench.sh), at least one.
func keysPerClient(keys, clients int) int {
	if keys == 0 {
		keys = 1000
	}
	return max(1, keys/clients)
}

// doOp is op i of a worker of op that holds count leases: the op itself
// (a grant on a fresh lease i; a release of pooled lease i, errPoolEmpty
// past the pool), or for mixed lease j = (i/4) mod count granted,
// renewed, checked and released in turn. It returns the kind of op done.
func doOp(ctx context.Context, op string, i, count int, o leaseOps) (string, error) {
	switch op {
	case "grant":
		return op, o.grant(ctx, i)
	case "renew":
		return op, o.renew(ctx, i%count)
	case "check":
		return op, o.check(ctx, i%count)
	case "release":
		if i >= count {
			return op, errPoolEmpty
		}
		return op, o.release(ctx, i)
	}
	j := (i / 4) % count
	kind := kinds[i%4]
	switch kind {
	case "grant":
		return kind, o.grant(ctx, j)
	case "renew":
		return kind, o.renew(ctx, j)
	case "check":
		return kind, o.check(ctx, j)
	}
	return kind, o.release(ctx, j)
}
