package maelstrom_test

import (
	"io"
	"os"
	"strings"
	"time"

	"chunklease/maelstrom"
)

// A node with one client request type and one peer RPC. The handler decodes
// a typed body, asks a peer with a deadline, and answers from the callback.
func Example() {
	input := strings.NewReader(strings.Join([]string{
		`{"id":0,"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1","n2"],"msg_id":1}}`,
		`{"id":3,"src":"c1","dest":"n1","body":{"type":"lease_check","chunk_handle":"ch_1","msg_id":1}}`,
		`{"id":5,"src":"n2","dest":"n1","body":{"type":"read_ok","in_reply_to":1,"primary":"cs2","msg_id":0}}`,
		`{"id":6,"src":"c1","dest":"n1","body":{"type":"lease_check","msg_id":2}}`,
	}, "\n"))
	n := maelstrom.New(input, os.Stdout, io.Discard)

	type checkReq struct {
		ChunkHandle string `json:"chunk_handle"`
	}
	type readReq struct {
		ChunkHandle string `json:"chunk_handle"`
	}
	type checkOK struct {
		Primary *string `json:"primary"`
	}
	n.Handle("lease_check", func(req maelstrom.Message) error {
		var body checkReq
		if err := req.DecodeBody(&body); err != nil {
			return err
		}
		if body.ChunkHandle == "" {
			return maelstrom.Errorf(maelstrom.CodeMalformedRequest, "lease_check needs a non-empty chunk_handle")
		}
		return n.RPC("n2", "read", readReq{body.ChunkHandle}, time.Second, func(reply maelstrom.Message, err error) {
			if err != nil {
				_ = n.ReplyError(req, maelstrom.CodeTemporarilyUnavailable, "no answer from n2: "+err.Error())
				return
			}
			var got checkOK
			if err := reply.DecodeBody(&got); err != nil {
				_ = n.ReplyError(req, maelstrom.CodeCrash, err.Error())
				return
			}
			_ = n.Reply(req, "lease_check_ok", got)
		})
	})
	if err := n.Run(); err != nil {
		panic(err)
	}
	// Output:
	// {"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":0}}
	// {"src":"n1","dest":"n2","body":{"type":"read","chunk_handle":"ch_1","msg_id":1}}
	// {"src":"n1","dest":"c1","body":{"type":"lease_check_ok","in_reply_to":1,"primary":"cs2","msg_id":2}}
	// {"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":2,"code":12,"text":"lease_check needs a non-empty chunk_handle","msg_id":3}}
}
