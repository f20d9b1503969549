// Package flatjson reads the usual JSON of the project without
// encoding/json's reflection: objects whose values are scalars (strings
// of printable ASCII without escapes, integers, true, false, null) or,
// where a caller allows it, flat objects of them, and arrays of such
// objects. It serves every hot path that reads JSON: the history's lines
// (history/opline.go), the workloads' values and replies, the member's
// requests (lease/wireflat.go, server/batchflat.go) and the client's
// replies (client/wireflat.go). Reading a history of a long run, and
// serving or making calls at 16 clients, encoding/json was the largest
// cost that was not a system call.
//
// It is a fast path, never the only one. Every function reports false
// for anything outside that subset, valid JSON or not (escapes,
// fractions, exponents, nested arrays, control characters, bytes above
// 0x7e), and its caller then decodes the same bytes with encoding/json,
// which also words the errors. A caller stays exact by storing from here
// only what encoding/json would store alike: null where encoding/json
// leaves a field or makes a pointer nil, a key that matches a field only
// up to case (FoldsToOneOf) refused. Each caller's fuzz test holds its
// fast path to encoding/json (flatjsontest.SameAsJSON), with a decoder
// known to be wrong as its negative control.
//
// The package is pure (no state, no I/O): the lease core uses it, and
// its purity test reads these files too.
package flatjson
