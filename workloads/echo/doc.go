// Package echo is Maelstrom's echo workload: a generator of echo
// requests on the stagger schedule, the closed echo_ok schema, and the
// checker. It is not the lease service's: the lease node answers echo so
// that real Maelstrom can check it, and the harness runs the same
// workload to compare.
//
// # Echo
//
// Maelstrom's echo: {"type":"echo","echo":"Please echo N"}, N uniform in
// 0..127, history value the string. The reply must fit the closed echo_ok
// schema {type: "echo_ok", echo: any, msg_id?: int, in_reply_to: int}; an
// extra key or a wrong type is info naming the violation. The ok value is
// the whole reply body, as in Maelstrom. No op is idempotent. CheckEcho:
// every invoke must have an ok completion whose value's echo equals the
// invoked value as JSON; a timed-out, failed, unknown or unfinished echo
// makes the history invalid.
//
// The analysis (Analyzer) judges each pair as it comes, in memory that
// does not grow with the history; its result is CheckEcho's and
// workloads.ComputeStats's.
//
// Tests: echo_test.go (stagger timing, closed schema, the checker and its
// negative controls), analysis_test.go (the streamed analysis against
// CheckEcho and ComputeStats, broken echoes included).
package echo
