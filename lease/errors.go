package lease

import "fmt"

// Maelstrom error codes the core answers with. All but CodeTimeout are
// definite: the core uses them only when the request changed nothing.
// CodeTimeout is indefinite: proposes or releases were sent, so an
// acceptor may have recorded the change although no client was told.
const (
	CodeTimeout                = 0
	CodeNotSupported           = 10
	CodeTemporarilyUnavailable = 11
	CodeMalformedRequest       = 12
	CodePreconditionFailed     = 22
)

// Error is a refusal sent to a client: a Maelstrom code and a text a
// person can act on.
type Error struct {
	Code int
	Text string
	// RetryInMs, when set, is how long until asking again can succeed (a
	// membership change refused by the waiting rule); shells may pass it
	// on (HTTP's Retry-After).
	RetryInMs int64
}

func (e *Error) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Text) }

// malformed is error 12: the request could not be processed as sent.
func malformed(format string, args ...any) *Error {
	return &Error{Code: CodeMalformedRequest, Text: fmt.Sprintf(format, args...)}
}

// unavailable is error 11: no majority answered in time, nothing granted.
func unavailable(format string, args ...any) *Error {
	return &Error{Code: CodeTemporarilyUnavailable, Text: fmt.Sprintf(format, args...)}
}

// timedOut is error 0: the request's messages went out, the majority's
// answers did not come back in time; it may have taken effect.
func timedOut(format string, args ...any) *Error {
	return &Error{Code: CodeTimeout, Text: fmt.Sprintf(format, args...)}
}

// heldByOther is error 22: a renew found the chunk held by another server.
func heldByOther(chunk, holder, server string, remainingMs int64) *Error {
	return &Error{Code: CodePreconditionFailed, Text: fmt.Sprintf(
		"chunk %q is held by %s for about %d ms more; %s cannot renew it (grant it after it expires)",
		chunk, holder, remainingMs, server)}
}
