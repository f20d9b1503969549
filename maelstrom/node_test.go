package maelstrom

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestInitThenRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := startNode(t, func(n *Node) {
			echoNode(n)
			n.Handle("lease_grant", func(req Message) error {
				var b struct {
					ChunkHandle string `json:"chunk_handle"`
					Server      string `json:"server"`
				}
				if err := req.DecodeBody(&b); err != nil {
					return err
				}
				return n.Reply(req, "lease_grant_ok", grantOK{b.ChunkHandle, b.Server, 60000})
			})
		})
		// The course grader's sample test, with Maelstrom's id field added.
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1","n2","n3"]}}`)
		tn.send(`{"id":5,"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":2,"chunk_handle":"ch_001","server":"n2"}}`)
		tn.expect(
			`{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":0}}`,
			`{"src":"n1","dest":"c1","body":{"type":"lease_grant_ok","in_reply_to":2,"chunk_handle":"ch_001","primary":"n2","expires_in_ms":60000,"msg_id":1}}`,
		)
		for i := 2; i < 6; i++ {
			tn.send(fmt.Sprintf(`{"src":"c2","dest":"n1","body":{"type":"echo","echo":%d,"msg_id":%d}}`, i*10, 100+i))
		}
		for i := 2; i < 6; i++ {
			tn.expect(fmt.Sprintf(`{"src":"n1","dest":"c2","body":{"type":"echo_ok","in_reply_to":%d,"echo":%d,"msg_id":%d}}`, 100+i, i*10, i))
		}
		if tn.node.ID() != "n1" || strings.Join(tn.node.NodeIDs(), ",") != "n1,n2,n3" {
			t.Fatalf("identity %s %v", tn.node.ID(), tn.node.NodeIDs())
		}
		if err := tn.finish(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		tn.quiet()
	})
}

func TestRequestBeforeInit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ran := 0
		tn := startNode(t, func(n *Node) {
			n.Handle("echo", func(req Message) error { ran++; return n.Reply(req, "echo_ok", nil) })
		})
		tn.send(`{"src":"c1","dest":"n7","body":{"type":"echo","echo":1,"msg_id":0}}`)
		line := tn.next()
		want := `{"src":"n7","dest":"c1","body":{"type":"error","in_reply_to":0,"code":11,"text":"node is not initialised: `
		if !strings.HasPrefix(line, want) || !strings.HasSuffix(line, `,"msg_id":0}}`) {
			t.Fatalf("got %s\nwant prefix %s", line, want)
		}
		tn.send(`{"src":"n2","dest":"n7","body":{"type":"gossip"}}`) // no msg_id: nothing to answer
		tn.send(`{"src":"n2","dest":"n7","body":{"type":"x_ok","in_reply_to":4}}`)
		tn.quiet()
		tn.logged("no msg_id", "no pending request")
		tn.send(`{"src":"c0","dest":"n7","body":{"type":"init","node_id":"n7","node_ids":["n7"],"msg_id":1}}`)
		tn.send(`{"src":"c1","dest":"n7","body":{"type":"echo","msg_id":1}}`)
		tn.expect(
			`{"src":"n7","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":1}}`,
			`{"src":"n7","dest":"c1","body":{"type":"echo_ok","in_reply_to":1,"msg_id":2}}`,
		)
		if ran != 1 {
			t.Fatalf("handler ran %d times, want 1 (only after init)", ran)
		}
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestInitFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		failHook := true
		tn := startNode(t, func(n *Node) {
			echoNode(n)
			n.OnInit(func() error {
				if n.ID() != "n1" {
					t.Errorf("hook sees id %q", n.ID())
				}
				if failHook {
					return errors.New("bad -lease-ms: must be > 0")
				}
				return nil
			})
		})
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_ids":["n1"],"msg_id":1}}`)
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","msg_id":2}}`)
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n9","node_ids":["n1"],"msg_id":3}}`)
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":"n1","msg_id":4}}`)
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1"],"msg_id":5}}`)
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"echo","echo":1,"msg_id":6}}`)
		tn.expect(
			`{"src":"n1","dest":"c0","body":{"type":"error","in_reply_to":1,"code":12,"text":"init needs \"node_id\", a non-empty string","msg_id":0}}`,
			`{"src":"n1","dest":"c0","body":{"type":"error","in_reply_to":2,"code":12,"text":"init needs \"node_ids\", a non-empty list of node ids","msg_id":1}}`,
			`{"src":"n1","dest":"c0","body":{"type":"error","in_reply_to":3,"code":12,"text":"init node_ids [\"n1\"] does not contain node_id \"n9\"","msg_id":2}}`,
			`{"src":"n1","dest":"c0","body":{"type":"error","in_reply_to":4,"code":12,"text":"malformed init body: field \"node_ids\" must be an array, got JSON string","msg_id":3}}`,
			`{"src":"n1","dest":"c0","body":{"type":"error","in_reply_to":5,"code":12,"text":"bad -lease-ms: must be > 0","msg_id":4}}`,
		)
		line := tn.next() // the hook failed, so the node is still not initialised
		if !strings.Contains(line, `"code":11`) || !strings.Contains(line, `"in_reply_to":6`) {
			t.Fatalf("after a failed init hook: %s", line)
		}
		failHook = false
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1","n2"],"msg_id":7}}`)
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1","n2"],"msg_id":8}}`)
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n2","node_ids":["n1","n2"],"msg_id":9}}`)
		tn.expect(
			`{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":7,"msg_id":6}}`,
			`{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":8,"msg_id":7}}`,
			`{"src":"n1","dest":"c0","body":{"type":"error","in_reply_to":9,"code":22,"text":"already initialised as n1 of [n1 n2]; a node's identity cannot change (got n2 of [n1 n2])","msg_id":8}}`,
		)
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBadInputKeepsServing feeds each kind of bad input, then a valid
// request, and checks the exact answers: the node never stops serving.
func TestBadInputKeepsServing(t *testing.T) {
	const initOK = `{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":0}}`
	big := strings.Repeat("y", 1<<20)
	tests := []struct {
		name  string
		input []string
		reply []string // exact lines answering the bad input, msg_id from 1
		log   string   // stderr must mention this ("" = anything)
	}{
		{"not JSON", []string{`this is not json`}, nil, "not a JSON object"},
		{"truncated JSON", []string{`{"src":"c1","dest":"n1","body":{"type":"echo","msg`}, nil, "not a complete JSON object"},
		{"truncated inside an array", []string{`{"src":"c1","dest":"n1","body":{"type":"echo","echo":[`}, nil, "not a complete JSON object"},
		{"missing src", []string{`{"dest":"n1","body":{"type":"echo","msg_id":1}}`}, nil, `no "src"`},
		{"missing dest", []string{`{"src":"c1","body":{"type":"echo","msg_id":1}}`}, nil, `no "dest"`},
		{"missing body", []string{`{"src":"c1","dest":"n1"}`}, nil, `no "body"`},
		{"non-object body", []string{`{"src":"c1","dest":"n1","body":[1,2]}`}, nil, "must be a JSON object"},
		{"string msg_id", []string{`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":"5"}}`}, nil, `"msg_id" must be an integer`},
		{"float in_reply_to", []string{`{"src":"n2","dest":"n1","body":{"type":"x_ok","in_reply_to":1.5}}`}, nil, `"in_reply_to" must be an integer`},
		{"unmatched reply is not answered", []string{`{"src":"n2","dest":"n1","body":{"type":"error","in_reply_to":0,"code":10}}`}, nil, "no pending request"},
		{"unknown type", []string{`{"src":"c1","dest":"n1","body":{"type":"frobnicate","msg_id":7}}`},
			[]string{`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":7,"code":10,"text":"unknown message type \"frobnicate\"; this node serves: echo, init","msg_id":1}}`}, ""},
		{"unknown type without msg_id", []string{`{"src":"n2","dest":"n1","body":{"type":"frobnicate"}}`}, nil, "no msg_id"},
		{"missing type", []string{`{"src":"c1","dest":"n1","body":{"msg_id":8}}`},
			[]string{`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":8,"code":12,"text":"body has no \"type\" string; every request needs one","msg_id":1}}`}, ""},
		{"ill-typed field", []string{`{"src":"c1","dest":"n1","body":{"type":"echo","echo":1,"msg_id":9,"strict":"yes"}}`},
			[]string{`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":9,"code":12,"text":"malformed echo body: field \"strict\" must be a boolean, got JSON string","msg_id":1}}`}, ""},
		{"Maelstrom's id field", []string{`{"id":41,"src":"c1","dest":"n1","body":{"type":"echo","echo":"i","msg_id":3}}`},
			[]string{`{"src":"n1","dest":"c1","body":{"type":"echo_ok","in_reply_to":3,"echo":"i","msg_id":1}}`}, ""},
		{"1 MiB line", []string{`{"src":"c1","dest":"n1","body":{"type":"echo","echo":"` + big + `","msg_id":3}}`},
			[]string{`{"src":"n1","dest":"c1","body":{"type":"echo_ok","in_reply_to":3,"echo":"` + big + `","msg_id":1}}`}, ""},
		{"pretty-printed object", []string{"{", ` "src": "c1",`, ` "dest": "n1",`, ` "body": {`, `   "type": "echo",`, `   "echo": [1, 2],`, `   "msg_id": 4`, " }", "}"},
			[]string{`{"src":"n1","dest":"c1","body":{"type":"echo_ok","in_reply_to":4,"echo":[1,2],"msg_id":1}}`}, ""},
		{"blank lines", []string{"", "   ", "\t"}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tn := startNode(t, func(n *Node) {
					n.Handle("echo", func(req Message) error {
						var b struct {
							Echo   any  `json:"echo"`
							Strict bool `json:"strict"`
						}
						if err := req.DecodeBody(&b); err != nil {
							return err
						}
						return n.Reply(req, "echo_ok", struct {
							Echo any `json:"echo"`
						}{b.Echo})
					})
				})
				tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1","n2"],"msg_id":1}}`)
				tn.expect(initOK)
				for _, line := range tc.input {
					tn.send(line)
				}
				tn.expect(tc.reply...)
				tn.quiet()
				// The valid request is served at once, without waiting for
				// more input (a bad line may be judged only when the next
				// line arrives, so the log is checked after).
				id := 1 + len(tc.reply)
				tn.send(`{"src":"c1","dest":"n1","body":{"type":"echo","echo":"ok","msg_id":99}}`)
				tn.expect(fmt.Sprintf(`{"src":"n1","dest":"c1","body":{"type":"echo_ok","in_reply_to":99,"echo":"ok","msg_id":%d}}`, id))
				if tc.log != "" {
					tn.logged(tc.log)
				}
				if err := tn.finish(); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

func TestHandlerReplies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var replyErrs []error
		tn := startNode(t, func(n *Node) {
			n.Handle("definite", func(req Message) error {
				return Errorf(CodePreconditionFailed, "chunk ch_1 is held by cs2")
			})
			n.Handle("plain", func(req Message) error { return errors.New("disk on fire") })
			n.Handle("twice", func(req Message) error {
				replyErrs = append(replyErrs, n.Reply(req, "twice_ok", nil))
				replyErrs = append(replyErrs, n.Reply(req, "twice_ok", nil))
				return errors.New("late failure")
			})
			n.Handle("reserved", func(req Message) error {
				replyErrs = append(replyErrs, n.Reply(req, "reserved_ok", map[string]int{"msg_id": 1}))
				replyErrs = append(replyErrs, n.Reply(req, "error", nil))
				return n.ReplyError(req, CodeAbort, "gave up")
			})
			n.Handle("oneway", func(req Message) error {
				replyErrs = append(replyErrs, n.Reply(req, "oneway_ok", nil))
				return errors.New("not answered")
			})
		})
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"definite","msg_id":1}}`)
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"plain","msg_id":2}}`)
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"twice","msg_id":3}}`)
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"reserved","msg_id":4}}`)
		tn.send(`{"src":"n2","dest":"n1","body":{"type":"oneway"}}`)
		tn.expect(
			`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":1,"code":22,"text":"chunk ch_1 is held by cs2","msg_id":1}}`,
			`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":2,"code":13,"text":"disk on fire","msg_id":2}}`,
			`{"src":"n1","dest":"c1","body":{"type":"twice_ok","in_reply_to":3,"msg_id":3}}`,
			`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":4,"code":14,"text":"gave up","msg_id":4}}`,
		)
		tn.quiet()
		wantErrs := []string{"", "already answered", "library writes itself", `reply type "error" refused`, "no msg_id"}
		if len(replyErrs) != len(wantErrs) {
			t.Fatalf("Reply errors %v", replyErrs)
		}
		for i, want := range wantErrs {
			if (want == "") != (replyErrs[i] == nil) || (want != "" && !strings.Contains(replyErrs[i].Error(), want)) {
				t.Errorf("Reply error %d = %v, want one mentioning %q", i, replyErrs[i], want)
			}
		}
		tn.logged("late failure", "not answered")
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStaleClientRepliesDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := startNode(t, func(n *Node) {
			n.Handle("slow", func(req Message) error {
				var b struct {
					DelayMs int64 `json:"delay_ms"`
				}
				if err := req.DecodeBody(&b); err != nil {
					return err
				}
				n.After(time.Duration(b.DelayMs)*time.Millisecond, func() { _ = n.Reply(req, "slow_ok", nil) })
				return nil
			})
		})
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"slow","delay_ms":4500,"msg_id":1}}`)
		tn.send(`{"src":"c2","dest":"n1","body":{"type":"slow","delay_ms":4501,"msg_id":2}}`)
		tn.send(`{"src":"n2","dest":"n1","body":{"type":"slow","delay_ms":9000,"msg_id":3}}`)
		tn.send(`{"src":"c3","dest":"n1","body":{"type":"slow","delay_ms":6000,"msg_id":4}}`)
		time.Sleep(10 * time.Second) // virtual time: lets the node's timers run
		tn.expect(
			`{"src":"n1","dest":"c1","body":{"type":"slow_ok","in_reply_to":1,"msg_id":1}}`,
			`{"src":"n1","dest":"n2","body":{"type":"slow_ok","in_reply_to":3,"msg_id":2}}`,
		)
		tn.quiet()
		tn.logged("dropped slow_ok to c2", "dropped slow_ok to c3", "its client has given up")
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		tn := startNode(t, func(n *Node) {
			n.Handle("slow", func(req Message) error {
				n.After(time.Minute, func() { _ = n.Reply(req, "slow_ok", nil) })
				return nil
			})
		}, WithStaleClientAge(0))
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"slow","msg_id":1}}`)
		time.Sleep(2 * time.Minute)
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"slow_ok","in_reply_to":1,"msg_id":1}}`)
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}
