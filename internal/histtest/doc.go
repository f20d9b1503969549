// Package histtest records a test's client ops as the lease workload
// would, in history.jsonl, and judges them with the harness's own lease
// checker (with fencing). The Maelstrom node's live-cluster scenarios
// (module root) and the service's cluster tests (server/) both record
// through it. It is a test tool: nothing in a binary imports it.
package histtest
