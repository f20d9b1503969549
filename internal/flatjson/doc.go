// Package flatjson reads the usual JSON of the project without
// encoding/json's reflection: objects whose values are scalars (strings
// of printable ASCII without escapes, integers, true, false, null) or,
// where a caller allows it, flat objects of them, and arrays of such
// objects. It serves the history's lines (history/opline.go), the
// workloads' values and replies, the member's requests
// (lease/wireflat.go, server/batchflat.go) and the client's replies
// (client/wireflat.go): reading a long run's history, encoding/json was
// the analysis's largest cost, and at 16 clients about a seventh of the
// client's CPU (docs/performance.md "Long runs" and "Fewer copies, the
// wire without reflection"). The Maelstrom library has a scanner of its
// own for its envelopes (maelstrom/fastparse.go).
//
// It is a fast path, never the only one. Every function reports false
// for anything outside that subset, valid JSON or not (escapes,
// fractions, exponents, nested arrays, control characters, bytes above
// 0x7e), and its caller then decodes the same bytes with encoding/json,
// which also words the errors. A caller stays exact by storing from here
// only what encoding/json would store alike: null where encoding/json
// leaves a field or makes a pointer nil, a key that matches a field only
// up to case (FoldsToOneOf) refused. Tests hold each fast path to
// encoding/json: FuzzReplyFlat and FuzzBatchResultsFlat (client) and
// FuzzBatchCallsFlat (server) through flatjsontest.SameAsJSON, each
// with decoders known to be wrong as negative controls; FuzzOpLine
// (history) and FuzzFlatDecoders (workloads/lease); and
// TestDecodeFlatAsFields (lease), against the core's encoding/json
// path. This package's own fuzz tests hold the scanners to json.Valid.
//
// The package is pure (no state, no I/O): the lease core uses it, and
// its purity test reads these files too.
package flatjson
