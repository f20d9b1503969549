package master

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"chunklease/history"
	"chunklease/internal/jsonstr"
	"chunklease/workloads"
)

// MasterValue is the value of an ok status in the history, decoded.
// Master is nil when the node named no master (JSON null). Token is the
// master lease's fencing token, 0 when the reply had none (the contract
// has one exactly while is_master).
type MasterValue struct {
	IsMaster    bool    `json:"is_master"`
	Master      *string `json:"master"`
	RemainingMs int64   `json:"remaining_ms"`
	Token       int64   `json:"token,omitempty"`
}

// Request renders {"type":"master_<f>"}: the three requests carry no
// fields. An f this workload does not produce renders the same way, and
// the node answers it with an error.
func (m *Master) Request(inv workloads.Invocation) json.RawMessage {
	b := append([]byte(`{"type":`), jsonstr.Append(nil, "master_"+inv.F)...)
	return append(b, '}')
}

// Complete validates the reply against the op's closed schema. status is
// a read (idempotent): a timeout or any error is fail. start and stop are
// not: a timeout is info, an error is fail or info by its code. A reply
// that breaks its schema is info naming the violation. The ok value of a
// status is {is_master, master, remaining_ms, token?}; of start and stop
// null.
// Nothing is learnt: the generator draws every op at random.
func (m *Master) Complete(_ time.Duration, _ int, inv workloads.Invocation, reply json.RawMessage) workloads.Completion {
	if c, done := workloads.ErrorCompletion(inv, reply, inv.F == FMasterStatus); done {
		return c
	}
	value, problem := masterReplyValue(inv.F, reply)
	if problem != "" {
		return workloads.MalformedReply(inv, problem)
	}
	return workloads.Completion{Type: history.OK, Value: value}
}

// The closed reply schemas, named in error texts. msg_id is optional as in
// Maelstrom's own schemas; in_reply_to is required.
const (
	masterAckSchema    = `{type: "master_%s_ok", msg_id?: int, in_reply_to: int}`
	masterStatusSchema = `{type: "master_status_ok", is_master: bool, master: string | null, ` +
		`remaining_ms: int >= 0, token?: int > 0, msg_id?: int, in_reply_to: int}`
)

// masterReplyValue checks a non-error reply against f's closed schema and
// returns the ok completion's value, or what is wrong with the reply.
func masterReplyValue(f string, reply json.RawMessage) (json.RawMessage, string) {
	var schema string
	keys := []string{"type", "msg_id", "in_reply_to"}
	switch f {
	case FMasterStart, FMasterStop:
		schema = fmt.Sprintf("master_%s_ok schema "+masterAckSchema, f, f)
	case FMasterStatus:
		schema = "master_status_ok schema " + masterStatusSchema
		keys = append(keys, "is_master", "master", "remaining_ms", "token")
	default:
		return nil, fmt.Sprintf("the master workload has no f %q", f)
	}
	body, problem := masterClosedBody(reply, keys)
	if problem == "" {
		problem = masterEnvelopeProblem(body, "master_"+f+"_ok")
	}
	if problem != "" {
		return nil, schema + ": " + problem
	}
	if f != FMasterStatus {
		return nil, ""
	}
	v, problem := masterStatusFields(body)
	if problem != "" {
		return nil, schema + ": " + problem
	}
	return appendMasterValue(make([]byte, 0, 64), v), ""
}

// closedBody decodes a reply object and names the first key outside
// allowed (in sorted order, so the text is stable).
func masterClosedBody(reply json.RawMessage, allowed []string) (map[string]json.RawMessage, string) {
	var body map[string]json.RawMessage // key-set validation needs every key
	if err := json.Unmarshal(reply, &body); err != nil {
		return nil, fmt.Sprintf("body is not a JSON object: %v", err)
	}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Sprintf("disallowed key %q", k)
		}
	}
	return body, ""
}

// envelopeProblem checks type, in_reply_to and msg_id.
func masterEnvelopeProblem(body map[string]json.RawMessage, wantType string) string {
	if t, ok := workloads.RawString(body["type"]); !ok || t != wantType {
		return fmt.Sprintf("type is %s, want %q", workloads.OrMissing(body["type"]), wantType)
	}
	if _, ok := workloads.JSONInt(body["in_reply_to"]); !ok {
		return fmt.Sprintf("in_reply_to is %s, want an integer", workloads.OrMissing(body["in_reply_to"]))
	}
	if raw, ok := body["msg_id"]; ok {
		if _, isInt := workloads.JSONInt(raw); !isInt {
			return fmt.Sprintf("msg_id is %s, want an integer", string(raw))
		}
	}
	return ""
}

// statusFields reads is_master (true or false), master (a non-empty
// string or null), remaining_ms (an integer >= 0) and token (absent, or
// an integer > 0) exactly. Whether a token belongs there is the checker's
// question (token-missing), not the schema's: a reply without one is
// still a reply.
func masterStatusFields(body map[string]json.RawMessage) (MasterValue, string) {
	var v MasterValue
	switch string(bytes.TrimSpace(body["is_master"])) {
	case "true":
		v.IsMaster = true
	case "false":
	default:
		return v, fmt.Sprintf("is_master is %s, want true or false", workloads.OrMissing(body["is_master"]))
	}
	raw := body["master"]
	if s, ok := workloads.RawString(raw); ok && s != "" {
		v.Master = &s
	} else if string(bytes.TrimSpace(raw)) != "null" {
		return v, fmt.Sprintf("master is %s, want a node id or null", workloads.OrMissing(raw))
	}
	r, ok := workloads.JSONInt(body["remaining_ms"])
	if !ok || r < 0 {
		return v, fmt.Sprintf("remaining_ms is %s, want an integer >= 0", workloads.OrMissing(body["remaining_ms"]))
	}
	v.RemainingMs = r
	if raw, ok := body["token"]; ok {
		tok, isInt := workloads.JSONInt(raw)
		if !isInt || tok <= 0 {
			return v, fmt.Sprintf("token is %s, want an integer > 0", string(raw))
		}
		v.Token = tok
	}
	return v, ""
}

// appendMasterValue appends {"is_master":..,"master":..,"remaining_ms":..},
// with "token" when it is not 0.
func appendMasterValue(b []byte, v MasterValue) []byte {
	b = strconv.AppendBool(append(b, `{"is_master":`...), v.IsMaster)
	b = append(b, `,"master":`...)
	if v.Master == nil {
		b = append(b, "null"...)
	} else {
		b = jsonstr.Append(b, *v.Master)
	}
	b = strconv.AppendInt(append(b, `,"remaining_ms":`...), v.RemainingMs, 10)
	if v.Token != 0 {
		b = strconv.AppendInt(append(b, `,"token":`...), v.Token, 10)
	}
	return append(b, '}')
}
