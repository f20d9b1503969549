package maelstrom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Message is one decoded input message: the envelope, the raw body, and the
// body's reserved fields parsed once at the edge. Presence is tracked apart
// from value: msg_id 0 is a valid id, and a message is a reply exactly when
// its body has an `in_reply_to` key, whatever its value.
type Message struct {
	Src  string
	Dest string
	Body json.RawMessage // the whole body object, reserved fields included

	Type         string // body "type"; "" when missing or not a string
	MsgID        int64  // body "msg_id", meaningful only when HasMsgID
	HasMsgID     bool
	InReplyTo    int64 // body "in_reply_to", meaningful only when HasInReplyTo
	HasInReplyTo bool

	receivedAt time.Duration // Node.Now() when the reader decoded it
	reply      *replyState   // shared by copies, so a request is answered once
	// refusal is set on a line the reader would not read (too long, too
	// deeply nested): only the envelope fields above it that salvage found
	// are set, and the loop answers it with this error.
	refusal *Error
}

// replyState records whether a request has been answered.
type replyState struct{ replied bool }

// IsReply reports whether m answers an earlier request: its body has an
// `in_reply_to` key. Replies are routed to RPC callbacks, never to handlers.
func (m Message) IsReply() bool { return m.HasInReplyTo }

// DecodeBody unmarshals the body into v (a pointer to a struct with json
// tags). On failure it returns an *Error with CodeMalformedRequest whose
// text names the message type and the offending field, so a handler can
// simply `return err`. Fields the struct lacks are ignored; a field missing
// from the body keeps its zero value, so use pointer fields where absence
// matters.
func (m Message) DecodeBody(v any) error {
	if err := json.Unmarshal(m.Body, v); err != nil {
		return Errorf(CodeMalformedRequest, "malformed %s body: %s", m.Type, bodyErrorText(err))
	}
	return nil
}

// bodyErrorText says which field was wrong, without Go type names where a
// JSON reader would not recognise them.
func bodyErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("field %q must be %s, got JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "a " + goKind
}

// Err returns the error carried by an error body (type "error"), or nil for
// any other message. A missing or non-integer code decodes as an unknown,
// indefinite code, as Maelstrom reads it.
func (m Message) Err() *Error {
	if m.Type != "error" {
		return nil
	}
	var fields struct {
		Code json.RawMessage `json:"code"`
		Text json.RawMessage `json:"text"`
	}
	_ = json.Unmarshal(m.Body, &fields) // the body is a valid object; bad fields stay nil
	e := &Error{Code: codeUnknown}
	if code, ok := parseInt(fields.Code); ok {
		e.Code = Code(code)
	}
	if json.Unmarshal(fields.Text, &e.Text) != nil {
		e.Text = string(fields.Text)
	}
	return e
}

// wireEnvelope is the envelope as read. Pointers tell a missing field from an
// empty one; unknown fields such as Maelstrom's integer `id` are ignored.
type wireEnvelope struct {
	Src  *string         `json:"src"`
	Dest *string         `json:"dest"`
	Body json.RawMessage `json:"body"`
}

// wireHeader is the body's reserved fields, kept raw so presence and type
// are checked here rather than by encoding/json's lenient conversions.
type wireHeader struct {
	Type      json.RawMessage `json:"type"`
	MsgID     json.RawMessage `json:"msg_id"`
	InReplyTo json.RawMessage `json:"in_reply_to"`
}

// errNotJSON marks input that is not (yet) a complete JSON value, as opposed
// to valid JSON of the wrong shape. The reader uses it to decide whether a
// line may begin a message printed over several lines.
var errNotJSON = errors.New("not JSON")

// parseMessage decodes one complete input message. The error says what was
// wrong in words a person can act on; errors.Is(err, errNotJSON) when the
// input is not a complete JSON value. The common line takes the one-pass
// fast path (fastparse.go), whose Body shares data's memory; anything else
// is decoded by parseMessageStd, with identical results.
func parseMessage(data []byte) (Message, error) {
	if m, ok := fastParse(data); ok {
		return m, nil
	}
	return parseMessageStd(data)
}

// parseMessageStd is parseMessage through encoding/json: the reference
// the fast path is held to.
func parseMessageStd(data []byte) (Message, error) {
	var env wireEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Message{}, fmt.Errorf("%w: %v", errNotJSON, err)
		}
		return Message{}, fmt.Errorf("envelope is not {src: string, dest: string, body: object}: %v", err)
	}
	if err := checkEnvelope(&env); err != nil {
		return Message{}, err
	}
	m := Message{Src: *env.Src, Dest: *env.Dest, Body: env.Body}
	if err := parseHeader(&m); err != nil {
		return Message{}, err
	}
	return m, nil
}

func checkEnvelope(env *wireEnvelope) error {
	switch {
	case env.Src == nil || *env.Src == "":
		return errors.New(`envelope has no "src" (a non-empty string is required)`)
	case env.Dest == nil || *env.Dest == "":
		return errors.New(`envelope has no "dest" (a non-empty string is required)`)
	case env.Body == nil:
		return errors.New(`envelope has no "body"`)
	case env.Body[0] != '{':
		return fmt.Errorf(`"body" must be a JSON object, got %s`, clip(env.Body, 40))
	}
	return nil
}

// parseHeader fills the reserved fields. An ill-typed msg_id or in_reply_to
// makes the message unusable (no reply could ever be matched), so it is an
// error; a missing or ill-typed type is left as "" for the loop to answer
// with CodeMalformedRequest.
func parseHeader(m *Message) error {
	var h wireHeader
	if err := json.Unmarshal(m.Body, &h); err != nil {
		return fmt.Errorf("body: %v", err)
	}
	if h.MsgID != nil {
		id, ok := parseInt(h.MsgID)
		if !ok {
			return fmt.Errorf(`body "msg_id" must be an integer, got %s`, clip(h.MsgID, 40))
		}
		m.MsgID, m.HasMsgID = id, true
	}
	if h.InReplyTo != nil {
		id, ok := parseInt(h.InReplyTo)
		if !ok {
			return fmt.Errorf(`body "in_reply_to" must be an integer, got %s`, clip(h.InReplyTo, 40))
		}
		m.InReplyTo, m.HasInReplyTo = id, true
	}
	if h.Type != nil && json.Unmarshal(h.Type, &m.Type) != nil {
		m.Type = ""
	}
	return nil
}

// parseInt accepts exactly a JSON integer that fits in int64: no fraction,
// no exponent, no quotes, not null. Maelstrom matches ids with Clojure `=`,
// under which 1.0 and "1" are not 1, so neither are they here.
func parseInt(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || bytes.ContainsAny(raw, ".eE") || raw[0] == '"' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// clip shows at most limit bytes of b in a log line or error text, so a
// 1 MiB line does not become a 1 MiB log entry. Printable text is shown as
// is between backquotes (JSON stays readable); anything else is Go-quoted.
func clip(b []byte, limit int) string {
	more := ""
	if len(b) > limit {
		b, more = b[:limit], fmt.Sprintf("... (%d bytes)", len(b))
	}
	if utf8.Valid(b) && !bytes.ContainsFunc(b, func(r rune) bool { return !unicode.IsPrint(r) || r == '`' }) {
		return "`" + string(b) + "`" + more
	}
	return strconv.Quote(string(b)) + more
}
