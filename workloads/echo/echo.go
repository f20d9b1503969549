package echo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"time"

	"chunklease/history"
	"chunklease/workloads"
)

// EchoOptions configures the echo workload.
type EchoOptions struct {
	// Rate is the mean number of echo requests per second across all
	// workers (Maelstrom's --rate). Zero means no requests at all.
	Rate float64
}

// Echo is Maelstrom's echo workload: each op sends "Please echo <0..127>"
// and expects exactly that back.
type Echo struct {
	rng     *rand.Rand
	stagger workloads.Stagger
}

// NewEcho returns the echo workload; seed fixes its random choices.
func NewEcho(opts EchoOptions, seed int64) workloads.Workload {
	return &Echo{rng: workloads.NewRand(seed), stagger: workloads.NewStagger(opts.Rate)}
}

// Name is "echo".
func (e *Echo) Name() string { return "echo" }

// Next returns an echo op when the stagger schedule has one due.
func (e *Echo) Next(now time.Duration, worker int) (workloads.Invocation, bool) {
	if !e.stagger.Due(now) {
		return workloads.Invocation{}, false
	}
	e.stagger.Fire(now, e.rng)
	text := "Please echo " + strconv.Itoa(e.rng.IntN(128))
	value, _ := json.Marshal(text) // a string always marshals
	return workloads.Invocation{F: "echo", Value: value}, true
}

// Wake is when the next echo op is due.
func (e *Echo) Wake() time.Duration { return e.stagger.NextAt() }

// echoRequest is the echo request body.
type echoRequest struct {
	Type string          `json:"type"`
	Echo json.RawMessage `json:"echo"`
}

// Request renders {"type":"echo","echo":<value>}.
func (e *Echo) Request(inv workloads.Invocation) json.RawMessage {
	body, _ := json.Marshal(echoRequest{Type: "echo", Echo: inv.Value}) // RawMessage from Next is valid JSON
	return body
}

// Complete validates the reply against Maelstrom's closed echo_ok schema.
// An ok completion's value is the whole reply body, as in Maelstrom; a
// timeout is info (echo has no idempotent ops), an error reply is fail or
// info by its code, and a schema violation is info naming the violation.
func (e *Echo) Complete(now time.Duration, worker int, inv workloads.Invocation, reply json.RawMessage) workloads.Completion {
	if c, done := workloads.ErrorCompletion(inv, reply, false); done {
		return c
	}
	if problem := echoSchemaProblem(reply); problem != "" {
		return workloads.MalformedReply(inv, problem)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, reply); err != nil {
		return workloads.MalformedReply(inv, err.Error())
	}
	return workloads.Completion{Type: history.OK, Value: compact.Bytes()}
}

// echoSchema names the closed schema in error texts.
const echoSchema = `echo_ok schema {type: "echo_ok", echo: any, msg_id?: int, in_reply_to: int}`

// echoSchemaProblem returns "" when reply fits the closed echo_ok schema,
// else what is wrong with it.
func echoSchemaProblem(reply json.RawMessage) string {
	var body map[string]json.RawMessage // key-set validation needs every key
	if err := json.Unmarshal(reply, &body); err != nil {
		return fmt.Sprintf("%s: body is not a JSON object: %v", echoSchema, err)
	}
	keys := slices.Sorted(maps.Keys(body))
	for _, k := range keys {
		if k != "type" && k != "echo" && k != "msg_id" && k != "in_reply_to" {
			return fmt.Sprintf("%s: disallowed key %q", echoSchema, k)
		}
	}
	if t := workloads.ReplyType(reply); t != "echo_ok" {
		return fmt.Sprintf("%s: type is %s", echoSchema, string(body["type"]))
	}
	if _, ok := body["echo"]; !ok {
		return echoSchema + `: missing required key "echo"`
	}
	if _, ok := workloads.JSONInt(body["in_reply_to"]); !ok {
		return fmt.Sprintf("%s: in_reply_to is %s, want an integer", echoSchema, workloads.OrMissing(body["in_reply_to"]))
	}
	if raw, ok := body["msg_id"]; ok {
		if _, isInt := workloads.JSONInt(raw); !isInt {
			return fmt.Sprintf("%s: msg_id is %s, want an integer", echoSchema, string(raw))
		}
	}
	return ""
}

// Check runs CheckEcho.
func (e *Echo) Check(ops []history.Op) workloads.Result {
	r := CheckEcho(ops)
	return workloads.Result{Valid: r.Valid, Details: r}
}

// Stats computes the generic run statistics for results.json.
func (e *Echo) Stats(ops []history.Op, _ workloads.Result, messages int) any {
	return workloads.ComputeStats(ops, messages)
}

// EchoResult is the echo checker's verdict.
type EchoResult struct {
	Valid   bool        `json:"valid"`
	Count   int         `json:"count"`    // client invocations
	OKCount int         `json:"ok_count"` // invocations answered ok with the right echo
	Errors  []EchoError `json:"errors"`   // every invocation that was not
}

// EchoError is one echo op that did not come back intact.
type EchoError struct {
	InvokeIndex     int             `json:"invoke_index"`
	CompletionIndex *int            `json:"completion_index"` // null: never completed
	Expected        json.RawMessage `json:"expected"`
	Got             json.RawMessage `json:"got"` // the completion's echo, null if none
	Problem         string          `json:"problem"`
}

// CheckEcho judges an echo history: every invoke must have an ok
// completion whose value's "echo" equals the invoked value (as JSON
// values). A timed-out, failed or unknown echo, or one never completed,
// makes the history invalid, as in Maelstrom. Nemesis ops are ignored.
func CheckEcho(ops []history.Op) EchoResult {
	pairs, problems := history.PairOps(ops)
	res := EchoResult{Errors: []EchoError{}}
	for _, p := range problems {
		res.Errors = append(res.Errors, EchoError{InvokeIndex: p.Index, Problem: p.Text})
	}
	for _, p := range pairs {
		res.Count++
		if e, bad := echoPairError(p); bad {
			res.Errors = append(res.Errors, e)
			continue
		}
		res.OKCount++
	}
	res.Valid = len(res.Errors) == 0
	return res
}

// echoPairError judges one invoke/completion pair.
func echoPairError(p history.Pair) (EchoError, bool) {
	e := EchoError{InvokeIndex: p.Invoke.Index, Expected: p.Invoke.Value}
	if p.Completion == nil {
		e.Problem = "never completed"
		return e, true
	}
	c := *p.Completion
	e.CompletionIndex = &c.Index
	if c.Type != history.OK {
		e.Problem = fmt.Sprintf("completed %s: %s", c.Type, c.Error)
		return e, true
	}
	var body struct {
		Echo json.RawMessage `json:"echo"`
	}
	if err := json.Unmarshal(c.Value, &body); err != nil {
		e.Problem = fmt.Sprintf("ok value is not an echo_ok body: %v", err)
		return e, true
	}
	e.Got = body.Echo
	if !sameJSON(p.Invoke.Value, body.Echo) {
		e.Problem = "echo differs from the request"
		return e, true
	}
	return EchoError{}, false
}

// sameJSON compares two JSON texts as values (key order and spacing do
// not matter).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// What the harness looks for.
var (
	_ workloads.Workload      = (*Echo)(nil)
	_ workloads.StatsReporter = (*Echo)(nil)
	_ workloads.Analyzer      = (*Echo)(nil)
)

// FromParams builds the echo workload from the CLI's settings: --rate.
func FromParams(p workloads.Params) (workloads.Workload, error) {
	return NewEcho(EchoOptions{Rate: p.Rate}, p.Seed), nil
}
