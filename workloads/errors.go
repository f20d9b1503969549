package workloads

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"chunklease/history"
	"chunklease/internal/flatjson"
)

// errorCode is one row of Maelstrom's error table (maelstrom-spec A.6).
type errorCode struct {
	name     string
	definite bool // the operation definitely did not happen and never will
}

// maelstromErrors is Maelstrom's table of reserved codes. Any other code,
// including every code >= 1000, is "unknown" and indefinite.
var maelstromErrors = map[int64]errorCode{
	0:  {"timeout", false},
	1:  {"node-not-found", true},
	10: {"not-supported", true},
	11: {"temporarily-unavailable", true},
	12: {"malformed-request", true},
	13: {"crash", false},
	14: {"abort", true},
	20: {"key-does-not-exist", true},
	21: {"key-already-exists", true},
	22: {"precondition-failed", true},
	30: {"txn-conflict", true},
}

// TimeoutError is the error recorded for an op whose reply never came.
const TimeoutError = "net-timeout"

// errorBody is Maelstrom's error reply. Code stays raw so that 11.0, "11"
// or null can be told from the integer 11 (only an integer is looked up).
type errorBody struct {
	Type string          `json:"type"`
	Code json.RawMessage `json:"code"`
	Text json.RawMessage `json:"text"`
}

// ErrorName returns the name of a Maelstrom error code and whether it is
// definite. code is the raw JSON of the body's "code": only a JSON integer
// in the table has a name; anything else (missing, >= 1000, 11.0, "11")
// is "unknown" and indefinite.
func ErrorName(code json.RawMessage) (name string, definite bool) {
	n, ok := JSONInt(code)
	if !ok {
		return "unknown", false
	}
	e, ok := maelstromErrors[n]
	if !ok {
		return "unknown", false
	}
	return e.name, e.definite
}

// ClassifyError maps an error reply body to a completion type and the
// error string recorded in the history. It returns fail when the code is
// definite or the op is idempotent (running it again is harmless, so Jepsen
// treats its failure as definite), and info otherwise. The error string
// follows Maelstrom's [name text]: "temporarily-unavailable: no majority
// answered"; an unknown code keeps its raw code so a person can find it:
// "unknown: boom (code 1001)".
func ClassifyError(body json.RawMessage, idempotent bool) (typ, errText string) {
	var eb errorBody
	if err := json.Unmarshal(body, &eb); err != nil {
		return history.Info, fmt.Sprintf("malformed-error-reply: %v", err)
	}
	name, definite := ErrorName(eb.Code)
	errText = name
	if text := errorText(eb.Text); text != "" {
		errText += ": " + text
	}
	if name == "unknown" {
		code := string(bytes.TrimSpace(eb.Code))
		if code == "" {
			code = "missing"
		}
		errText += " (code " + code + ")"
	}
	if definite || idempotent {
		return history.Fail, errText
	}
	return history.Info, errText
}

// ClassifyTimeout is the completion type of an op that got no reply: it
// may have happened, so info, unless it is idempotent (then fail).
func ClassifyTimeout(idempotent bool) (typ, errText string) {
	if idempotent {
		return history.Fail, TimeoutError
	}
	return history.Info, TimeoutError
}

// errorCompletion handles the two replies every workload treats alike: no
// reply (nil: a timeout) and an error body. It returns ok=false when the
// reply is something else, for the workload to validate. The completion of
// a failed or unknown op carries the invoke's value, as in Jepsen.
func ErrorCompletion(inv Invocation, reply json.RawMessage, idempotent bool) (Completion, bool) {
	if reply == nil {
		typ, text := ClassifyTimeout(idempotent)
		return Completion{Type: typ, Value: inv.Value, Error: text}, true
	}
	if ReplyType(reply) != "error" {
		return Completion{}, false
	}
	typ, text := ClassifyError(reply, idempotent)
	return Completion{Type: typ, Value: inv.Value, Error: text}, true
}

// malformedReply is the info completion of a reply that breaks its schema:
// the node may or may not have done the op, so the outcome is unknown.
func MalformedReply(inv Invocation, problem string) Completion {
	return Completion{Type: history.Info, Value: inv.Value, Error: "malformed-rpc-response: " + problem}
}

// replyType returns the body's "type" when it is a string, else "".
func ReplyType(body json.RawMessage) string {
	var b struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(body, &b) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(b.Type, &s) != nil {
		return ""
	}
	return s
}

// errorText returns the error's text when it is a JSON string, the raw
// JSON when it is something else, and "" when it is absent or null.
func errorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// jsonInt reads a JSON integer literal: 11 yes; 11.0, 1e1, "11", null no.
func JSONInt(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.ContainsAny(raw, ".eE\"") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// OrMissing shows a raw field in an error text: "missing" when absent.
func OrMissing(raw json.RawMessage) string {
	if raw == nil {
		return "missing"
	}
	return string(raw)
}

// RawString decodes a raw JSON string value; null, absent or another type
// is not a string.
func RawString(raw json.RawMessage) (string, bool) {
	if tok, end, ok := flatjson.String(raw, 0); ok && end == len(raw) {
		return string(tok[1 : len(tok)-1]), true
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
