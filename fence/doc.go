// Package fence is the storage side of fencing tokens: a resource server
// (a chunk server, a database, an object store, a scheduler's queue) uses
// it to refuse the actions of a lease holder that was superseded.
//
// # Why storage must check
//
// A holder asks, at the moment of acting, whether its lease still holds
// (client.Session.Current), and hands the lease's token on with the
// action. That stops it from starting to act on a lost lease. It cannot
// stop an action already on its way: a process can be paused between its
// check and the moment its write reaches storage (a GC or VM pause,
// SIGSTOP, a starved CPU, a slow network), for longer than the lease, and
// meanwhile another holder is granted the lease and writes. When the
// paused one resumes, its write is late, and nothing on the holder's
// side can tell. Only the storage sees both writes. Tokens grow with
// every grant and renewal (lease/doc.go, "Fencing tokens"; the same for
// the master lease), so storage that keeps, per resource, the highest
// token it accepted and refuses a lower one refuses exactly the late
// writes of deposed holders.
//
// # What storage must do
//
//  1. Take the token with every action (Header on HTTP; an argument in Go).
//  2. Per resource, keep the highest token accepted; refuse a token below
//     it, with an error the writer can act on (StaleError: stop acting as
//     primary; the lease went to someone else).
//  3. Check the token, record it, and apply the write as one atomic step.
//     If two writers could pass the check and write in the other order
//     (check A, check B, write B, write A), A's stale write would land
//     after B's. Fence.Do and Middleware hold a per-resource lock across
//     the check, the record and the write.
//  4. An equal token is accepted: one lease instance writes many times.
//     A token is recorded when it passes the check, even if the write
//     then fails: its holder may have changed part of the resource, and
//     older holders must stay out.
//  5. Durable storage keeps the highest token where the data is, and
//     updates both in one transaction (e.g. SQL: UPDATE ... SET data = $1,
//     token = $2 WHERE id = $3 AND token <= $2, and a refusal when no row
//     changed). A Fence in memory forgets its tokens when the process
//     restarts: load them back with Raise before serving.
//
// # Interface
//
//	New() *Fence
//	(*Fence).Do(resource, token, write func() error) error   the check, the record and the write, atomically
//	(*Fence).Middleware(resourceOf, next) http.Handler      the same for HTTP handlers, token from Header
//	(*Fence).Highest(resource) int64 / Raise(resource, token)
//	SetToken(http.Header, token) / TokenFrom(http.Header) (int64, error)
//	Refused(*http.Response) error                            the writer's side: a 409 as a *StaleError
//
// A refused token is a *StaleError (errors.Is ErrStale); Middleware
// answers it with 409 Conflict, and a request without a valid token with
// 400 Bad Request, both with a JSON body naming the resource and tokens.
//
// # Tests
//
// fence_test.go: the rules (lower refused, equal accepted, recorded on a
// failed write, bad tokens, Raise), concurrent writers on shared
// resources whose store must see non-decreasing tokens and never two
// writes at once, with its negative control (a check that does not hold
// the lock across the write must be caught); http_test.go: the
// middleware's statuses, bodies and concurrent writers. The end-to-end
// test on real processes is scripts/fence_check.sh (examples/chunkserver
// behind this package, holders through client.Session.Act).
package fence
