package netsim

import (
	"encoding/json"
	"strconv"

	"chunklease/internal/jsonstr"
)

// Message is one network message: Maelstrom's {id, src, dest, body}.
type Message struct {
	ID   int64           // network-global, from 0 in send order
	Src  string          // sender name
	Dest string          // receiver name
	Body json.RawMessage // a compact JSON object
}

// Line renders the message as the node receives it on stdin: one compact
// JSON object with keys id, src, dest, body, ending in a newline.
func (m Message) Line() []byte {
	line := make([]byte, 0, 48+len(m.Src)+len(m.Dest)+len(m.Body))
	line = append(line, `{"id":`...)
	line = strconv.AppendInt(line, m.ID, 10)
	line = append(line, `,"src":`...)
	line = jsonstr.Append(line, m.Src)
	line = append(line, `,"dest":`...)
	line = jsonstr.Append(line, m.Dest)
	line = append(line, `,"body":`...)
	line = append(line, m.Body...)
	return append(line, "}\n"...)
}
