// Package history is the test history: the op format of history.jsonl,
// the writer that numbers and appends ops, the readers that decode and
// validate them (all at once, or one at a time in flat memory), the
// pairing of invokes with completions, and the spill files an analysis
// parks ops in. It knows nothing about any workload: an op's f and value
// are opaque here, and a workload (package workloads and its
// sub-packages) gives them meaning. The harness writes histories
// (Writer) and reads them back (ReadBack); the lease core's simulation
// writes them in virtual time; checkers read them.
//
// # Format (history.jsonl)
//
// One JSON object a line, keys in this order:
//
//	{"index":0,"time":123456789,"process":3,"type":"invoke","f":"grant","node":"n1","value":{...}}
//	{"index":1,"time":125000000,"process":3,"type":"ok","f":"grant","node":"n1","value":{...},"error":"..."}
//
// index is dense from 0 (Writer assigns it in append order; NewWriter
// also keeps the ops for a simulation, NewStreamWriter keeps none, for the
// harness); time is nanoseconds since the test started (the caller's
// clock); process is a worker's integer or "nemesis"; type is invoke, ok,
// fail (definitely did not happen) or info (unknown); node and error are
// written only when set; value is written null when absent. ReadHistory
// checks each line (dense index, time >= 0, known type, non-empty f) and
// names the line of the first defect; ScanHistory does the same op by
// op, without keeping them. Lines in the Writer's own subset (string
// values printable ASCII without escapes, integers, a value that is a
// scalar or a flat object of scalars) are decoded by hand, ten times
// faster than encoding/json (opline.go, on internal/flatjson, which
// serves the workloads' values, the client's replies and the member's
// requests too); any other line falls back to
// encoding/json, whose meaning and errors are the reference (FuzzOpLine).
// A reader shares the strings a history repeats (types, fs, node names)
// among its ops, up to a few thousand distinct ones.
//
// # Pairs
//
// A client op is an invoke and the next completion of the same process,
// as in Jepsen (a process has at most one op in flight). PairOps pairs a
// whole history, in invoke order, and lists every op that breaks the
// process discipline as a Problem (a completion without an open invoke, a
// second invoke by a busy process, a completion with another f); nemesis
// ops are not paired. PairStream gives the same pairs and problems for
// ops fed one at a time, holding back a completed pair only while an
// earlier invoke is still open (bounded by the client timeout, not by the
// history).
//
// # Reading a history back (ReadBack)
//
// The harness keeps no op in memory during a run; it judges
// history.jsonl read back from disk. ReadBack reads the file twice:
// first only the lines that mention "nemesis" (so every analysis knows
// the partitions and faults before the first client op, as each key's
// sub-history does in Jepsen's independent checker), then every line, as
// ReadHistory reads it, handing each pair and problem to the PairSinks
// the caller opened once it saw the nemesis ops (an OpObserver sees
// every op too). It returns the Facts: op count, first and last op time,
// the client ops' node names, the nemesis ops.
//
// # Spill files
//
// An analysis that must group ops by key (the lease checker's chunks)
// writes each pair to one of SpillShards(history size) files chosen by
// ShardOf(key) (about one shard per 2 MiB of history, at most 1024), in
// a compact binary form, and reads a whole shard back (ReadSpill); keyed
// byte records (WriteBytes, OpenByteRecords) carry per-key findings to be
// merged. SpillDir makes the scratch directory.
//
// # Tests
//
// history_test.go (line format and key order, dense indices, the
// reader's line-numbered errors, concurrent appends), opline_test.go
// (FuzzOpLine: the hand-written line decoder against encoding/json),
// pair_test.go (PairOps against a plain loop on histories that break the
// process discipline), readback_test.go (a defect met in either pass is
// ReadHistory's error, with its line).
package history
