package maelstrom

import (
	"errors"
	"fmt"
)

// Code is a Maelstrom error code, the `code` field of an error body.
// Codes 0-999 are Maelstrom's; codes from 1000 up are for applications and
// Maelstrom always treats them as indefinite.
type Code int

// Maelstrom's error codes (resources/errors.edn). "Definite" means the
// operation certainly did not happen and never will; a node may only send a
// definite code when it knows that. When in doubt, send an indefinite code
// (CodeCrash or CodeTimeout).
const (
	CodeTimeout                Code = 0  // indefinite: the operation did not finish within a timeout
	CodeNodeNotFound           Code = 1  // definite: the request named a node that does not exist
	CodeNotSupported           Code = 10 // definite: this node does not implement the request type
	CodeTemporarilyUnavailable Code = 11 // definite: cannot be done now (not initialised, no quorum); nothing happened
	CodeMalformedRequest       Code = 12 // definite: the request could not possibly be processed
	CodeCrash                  Code = 13 // indefinite: general failure; the operation may have happened
	CodeAbort                  Code = 14 // definite: general failure; the operation did not happen
	CodeKeyDoesNotExist        Code = 20 // definite: the key is missing
	CodeKeyAlreadyExists       Code = 21 // definite: create of an existing key refused
	CodePreconditionFailed     Code = 22 // definite: a precondition (e.g. CAS from, lease holder) did not hold
	CodeTxnConflict            Code = 30 // definite: the transaction aborted on a conflict
)

// codeUnknown is what an error body with a missing or non-integer code
// decodes to. Maelstrom names such errors :unknown and treats them as
// indefinite; so does Definite.
const codeUnknown Code = -1

type codeInfo struct {
	name     string
	definite bool
}

var codeTable = map[Code]codeInfo{
	CodeTimeout:                {"timeout", false},
	CodeNodeNotFound:           {"node-not-found", true},
	CodeNotSupported:           {"not-supported", true},
	CodeTemporarilyUnavailable: {"temporarily-unavailable", true},
	CodeMalformedRequest:       {"malformed-request", true},
	CodeCrash:                  {"crash", false},
	CodeAbort:                  {"abort", true},
	CodeKeyDoesNotExist:        {"key-does-not-exist", true},
	CodeKeyAlreadyExists:       {"key-already-exists", true},
	CodePreconditionFailed:     {"precondition-failed", true},
	CodeTxnConflict:            {"txn-conflict", true},
}

// Definite reports whether Maelstrom reads this code as "the operation
// certainly did not happen". Unknown codes, application codes (>= 1000) and
// the decoded form of a missing code are indefinite, as in Maelstrom.
func (c Code) Definite() bool { return codeTable[c].definite }

// String is Maelstrom's name for the code ("temporarily-unavailable"), or
// "unknown" for codes Maelstrom does not name.
func (c Code) String() string {
	if info, ok := codeTable[c]; ok {
		return info.name
	}
	return "unknown"
}

// Error is a Maelstrom error body: what a handler returns to have the library
// answer with `{"type":"error","in_reply_to":..,"code":..,"text":..}`, and what
// an RPC callback receives when the peer answered with an error body.
// Code has no omitempty: code 0 (timeout) is a real code.
type Error struct {
	Code Code   `json:"code"`
	Text string `json:"text"`
}

// Errorf builds an *Error whose text is formatted like fmt.Sprintf. Write a
// text a person can act on: what was wrong and what is accepted.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Text: fmt.Sprintf(format, args...)}
}

// Error renders "temporarily-unavailable (11): no majority answered".
func (e *Error) Error() string {
	return fmt.Sprintf("%s (%d): %s", e.Code, int(e.Code), e.Text)
}

// asError maps any handler error onto the wire error body. A non-*Error is an
// unexpected failure, so it becomes CodeCrash: indefinite, because the
// library cannot know whether the handler changed state before failing.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeCrash, Text: err.Error()}
}
