package client

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The sentinels name why a call failed. Every error a Client returns is an
// *Error that matches exactly one of them with errors.Is. All but ErrUnknown
// are definite: the service did not act on the request (contract section
// 3: 12 -> 400, 10 -> 404, 22 -> 409, 11 -> 503, a missing token -> 401, a
// body over 64 KiB -> 413; or no member could be reached at all).
// ErrUnknown is indefinite: the request may have taken effect.
var (
	// ErrBadRequest: the service refused the request as sent (400, 413):
	// a missing field, lease_ms out of range, an empty chunk handle.
	ErrBadRequest = errors.New("bad request")
	// ErrUnauthorized: the member asks for a bearer token, or the one sent
	// is wrong (401).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrNotFound: the member has no such endpoint (404, 405): a wrong
	// endpoint URL, or a member that speaks another version of the API.
	ErrNotFound = errors.New("no such endpoint")
	// ErrHeld: the chunk is held by another server (409, a renew's error
	// 22). A grant answered with another primary is not an error; see
	// Grant.Granted.
	ErrHeld = errors.New("held by another server")
	// ErrUnavailable: no member took the request, and none can have acted
	// on it (503 everywhere it was tried, connections refused, or the
	// deadline passed before anything was sent). Retrying later is safe.
	ErrUnavailable = errors.New("unavailable")
	// ErrUnknown: the outcome is unknown (504, a connection broken after
	// the request was written, an answer that never came or could not be
	// read). A grant or renew may have taken effect, with a token this
	// client never saw; a release may have ended the lease.
	ErrUnknown = errors.New("outcome unknown")
	// ErrProtocol: a definite answer outside the contract (a redirect, an
	// unexpected 4xx); the endpoint is probably not a lease-node member.
	ErrProtocol = errors.New("unexpected answer")
)

// Error is a failed call: what was asked, where, what came back, and which
// sentinel it is (errors.Is(err, ErrHeld), ...). It also wraps the cause
// from the network or the context (errors.Is(err, context.DeadlineExceeded)).
type Error struct {
	// Request says what was asked, e.g. `lease_renew ch_1 for cs1`.
	Request string
	// Endpoint is the member whose answer (or failure) decided the error;
	// "" when no member was tried.
	Endpoint string
	// Status is the HTTP status of that answer; 0 when none came.
	Status int
	// Code is the service's error code from the answer's body; -1 when the
	// body had none.
	Code int
	// Text is the service's own text, or what went wrong on the way.
	Text string
	// Attempts is how many attempts the call made across the members.
	Attempts int
	// RetryInMs is how long until asking again can succeed, when the
	// service said (a membership change refused during the waiting rule);
	// 0 otherwise.
	RetryInMs int64

	kind  error
	cause error
}

// Error is one line a person can act on.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Request)
	b.WriteString(": ")
	b.WriteString(e.kind.Error())
	if e.Endpoint != "" {
		b.WriteString(" at ")
		b.WriteString(e.Endpoint)
	}
	if e.Status != 0 || e.Code >= 0 {
		b.WriteString(" (")
		if e.Status != 0 {
			b.WriteString(strconv.Itoa(e.Status))
		}
		if e.Code >= 0 {
			if e.Status != 0 {
				b.WriteString(", ")
			}
			b.WriteString("code ")
			b.WriteString(strconv.Itoa(e.Code))
		}
		b.WriteString(")")
	}
	if e.Text != "" {
		b.WriteString(": ")
		b.WriteString(oneLine(e.Text))
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " [%d attempts]", e.Attempts)
	}
	if hint := hints[e.kind]; hint != "" {
		b.WriteString("; ")
		b.WriteString(hint)
	}
	return b.String()
}

// hints say what to do next, per sentinel.
var hints = map[error]string{
	ErrUnavailable:  "nothing was done; retry later or check that the members run (-endpoints)",
	ErrUnknown:      "it may have taken effect: check the lease, or renew or release it",
	ErrUnauthorized: "set the cluster's client token (LEASE_CLIENT_TOKEN or a token file)",
	ErrNotFound:     "check the endpoint URLs: they must be lease-node serve client addresses",
	ErrProtocol:     "check the endpoint URLs: they must be lease-node serve client addresses",
	ErrChangeRefused: "nothing changed; ask again after the time it names (the waiting rule), " +
		"or bring up the members it names first",
}

// Unwrap gives the sentinel and the cause (if any) to errors.Is and As.
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}

// Unknown reports whether the request may have taken effect.
func (e *Error) Unknown() bool { return e.kind == ErrUnknown }

// IsUnknown reports whether err says the outcome is unknown: the request
// may have taken effect (a 504, a connection broken after sending).
func IsUnknown(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unknown()
}

// IsRefused reports whether err is a definite failure: the service did
// not act on the request (every error of this package but ErrUnknown).
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e) && !e.Unknown()
}

// statusClass is what one HTTP status means to a call.
type statusClass struct {
	kind     error
	failover bool // try another member: this one could not serve it now
}

// classify is the one table from HTTP status to meaning (contract
// section 3), for statuses other than 200.
func classify(status int) statusClass {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return statusClass{kind: ErrBadRequest}
	case http.StatusUnauthorized:
		return statusClass{kind: ErrUnauthorized}
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return statusClass{kind: ErrNotFound}
	case http.StatusConflict:
		return statusClass{kind: ErrHeld}
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		return statusClass{kind: ErrUnavailable, failover: true}
	}
	if status >= 500 {
		// 504 is the contract's indefinite error 0; any other 5xx (a proxy's
		// 502, a crash's 500) cannot promise that nothing happened either.
		return statusClass{kind: ErrUnknown, failover: true}
	}
	return statusClass{kind: ErrProtocol}
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(s)
}
