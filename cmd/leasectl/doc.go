// leasectl is the command-line client of the chunk-lease service, for
// people: every call of package chunklease/client as a subcommand, one
// line of output per call, an exit status per outcome (usage.go has the
// text of `leasectl -h`, which is the specification of its interface).
//
// Why the name: it is to lease-node what etcdctl is to etcd and kubectl to
// a cluster: the operator's control tool, separate from the server binary
// so that a client host needs no server.
//
// Guarantees:
//   - One line per call on stdout (`verb name ... key=value ...`, names
//     quoted when they hold spaces, quotes or "="), errors on stderr in one
//     line starting "leasectl: " that names the request, the member, the
//     status, the member's own text and what to do.
//   - Exit 0 done, 1 refused (the service did nothing, another server holds
//     the chunk, or keep lost the lease), 2 bad usage, 3 unknown outcome (a
//     grant or renew that may have taken effect is never reported as
//     refused).
//   - keep releases with the latest token on SIGINT or SIGTERM and exits 0;
//     it reports a loss before the lease can have ended and exits 1.
//   - Endpoints from -endpoints, LEASE_ENDPOINTS or ENDPOINTS (what
//     scripts/cluster.sh up prints on its last line); the token from
//     -token-file, LEASE_CLIENT_TOKEN_FILE or LEASE_CLIENT_TOKEN (the
//     server's own names), never from a flag (it would show in ps).
//
// What it is not: a load generator or a benchmark driver (those use the
// package directly).
//
// Tests: run_test.go drives run(ctx, args, getenv, stdout, stderr) against
// internal/fakelease: each command's line and exit status, refusals,
// unknown outcomes, usage errors, -h, and keep's renewals, release on
// interrupt and loss (under testing/synctest). real_test.go runs the
// commands and keep against real members when CHUNKLEASE_TEST_ENDPOINTS
// lists their client URLs (scripts/run_tests.sh starts a cluster for it).
package main
