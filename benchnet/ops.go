package main

import "context"

// leaseOps are one system's four calls on its j-th lease (chunk or
// lease id) of a worker: the same table for ours and etcd's.
type leaseOps struct {
	grant, renew, check, release func(ctx context.Context, j int) error
}

// setupSize is how many leases a worker of op keeps for n measured ops,
// and whether Setup grants them first: renew and check cycle over
// keysPerClient leases granted beforehand; release gives back n leases
// granted beforehand; grant takes n fresh ones; mixed cycles over
// keysPerClient leases, each granted, renewed, checked and released in
// turn.
func setupSize(op string, clients, n int) (count int, grant bool) {
	switch op {
	case "renew", "check":
		return keysPerClient(clients, n), true
	case "release":
		return n, true
	case "mixed":
		return keysPerClient(clients, (n+3)/4), false
	}
	return n, false
}

// doOp is measured op i of a worker of op that holds count leases: the
// op itself, or for mixed lease j = (i/4) mod count granted, renewed,
// checked and released in turn. It returns the kind of op done.
func doOp(ctx context.Context, op string, i, count int, o leaseOps) (string, error) {
	switch op {
	case "grant":
		return op, o.grant(ctx, i)
	case "renew":
		return op, o.renew(ctx, i%count)
	case "check":
		return op, o.check(ctx, i%count)
	case "release":
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
