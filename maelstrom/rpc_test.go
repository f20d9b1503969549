package maelstrom

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/proctest"
)

// rpcNode serves "start": it sends one "prepare" RPC to n2 with the given
// timeout, records every callback, and answers the client with the outcome.
// "probe" answers with the sizes of the pending table and the timer heap.
type rpcRecorder struct {
	calls []string
	at    []time.Duration
}

func rpcNode(rec *rpcRecorder, timeout time.Duration) func(n *Node) {
	return func(n *Node) {
		n.Handle("start", func(req Message) error {
			return n.RPC("n2", "prepare", map[string]int{"ballot": 7}, timeout, func(reply Message, err error) {
				var e *Error
				outcome := "ok " + reply.Type
				switch {
				case errors.Is(err, ErrTimeout):
					outcome = "timeout"
				case errors.As(err, &e):
					outcome = fmt.Sprintf("error %d", e.Code)
				case err != nil:
					outcome = "other " + err.Error()
				}
				rec.calls = append(rec.calls, outcome)
				rec.at = append(rec.at, n.Now())
				_ = n.Reply(req, "start_ok", map[string]string{"outcome": outcome})
			})
		})
		n.Handle("probe", func(req Message) error {
			return n.Reply(req, "probe_ok", map[string]int{"pending": len(n.pending), "timers": len(n.timers)})
		})
	}
}

// outgoing reads the node's next line, checks it is a prepare to n2, and
// returns its msg_id.
func (tn *testNode) outgoingPrepare() int {
	tn.t.Helper()
	line := tn.next()
	body := bodyOf(tn.t, line)
	if !strings.HasPrefix(line, `{"src":"n1","dest":"n2","body":{"type":"prepare","ballot":7,"msg_id":`) {
		tn.t.Fatalf("expected a prepare to n2, got %s", line)
	}
	return int(body["msg_id"].(float64))
}

func (tn *testNode) expectProbe(msgID, pending, timers int) {
	tn.t.Helper()
	tn.send(`{"src":"c9","dest":"n1","body":{"type":"probe","msg_id":500}}`)
	tn.expect(fmt.Sprintf(`{"src":"n1","dest":"c9","body":{"type":"probe_ok","in_reply_to":500,"pending":%d,"timers":%d,"msg_id":%d}}`, pending, timers, msgID))
}

func TestRPCTimeoutFiresOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &rpcRecorder{}
		tn := startNode(t, rpcNode(rec, 800*time.Millisecond))
		tn.initNode()
		start := time.Now()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"start","msg_id":1}}`)
		id := tn.outgoingPrepare()
		tn.expectProbe(2, 1, 1)
		time.Sleep(799 * time.Millisecond) // virtual time
		tn.quiet()
		time.Sleep(time.Millisecond)
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"start_ok","in_reply_to":1,"outcome":"timeout","msg_id":3}}`)
		if elapsed := time.Since(start); elapsed != 800*time.Millisecond {
			t.Fatalf("timeout after %v, want exactly 800ms", elapsed)
		}
		tn.expectProbe(4, 0, 0) // the pending table and the timer heap are empty
		// A late reply matches nothing: dropped, not answered, no second callback.
		tn.send(fmt.Sprintf(`{"src":"n2","dest":"n1","body":{"type":"prepare_ok","in_reply_to":%d}}`, id))
		time.Sleep(time.Hour)
		tn.quiet()
		tn.logged("no pending request")
		if len(rec.calls) != 1 {
			t.Fatalf("callback ran %d times: %v", len(rec.calls), rec.calls)
		}
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRPCReplyMatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &rpcRecorder{}
		tn := startNode(t, rpcNode(rec, time.Second))
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"start","msg_id":1}}`)
		id := tn.outgoingPrepare()
		// Right in_reply_to, wrong src: ignored, still pending.
		tn.send(fmt.Sprintf(`{"src":"n3","dest":"n1","body":{"type":"prepare_ok","in_reply_to":%d}}`, id))
		// Right src, wrong in_reply_to: ignored.
		tn.send(fmt.Sprintf(`{"src":"n2","dest":"n1","body":{"type":"prepare_ok","in_reply_to":%d}}`, id+100))
		tn.quiet()
		tn.logged("that request went to n2")
		tn.expectProbe(2, 1, 1)
		time.Sleep(500 * time.Millisecond)
		tn.send(fmt.Sprintf(`{"src":"n2","dest":"n1","body":{"type":"prepare_ok","in_reply_to":%d,"msg_id":0}}`, id))
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"start_ok","in_reply_to":1,"outcome":"ok prepare_ok","msg_id":3}}`)
		tn.expectProbe(4, 0, 0)
		// A duplicate of the reply is dropped.
		tn.send(fmt.Sprintf(`{"src":"n2","dest":"n1","body":{"type":"prepare_ok","in_reply_to":%d}}`, id))
		time.Sleep(time.Hour)
		tn.quiet()
		if len(rec.calls) != 1 || rec.at[0] != 500*time.Millisecond {
			t.Fatalf("callbacks %v at %v", rec.calls, rec.at)
		}
		// An error reply reaches the callback as *Error.
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"start","msg_id":2}}`)
		id = tn.outgoingPrepare()
		tn.send(fmt.Sprintf(`{"src":"n2","dest":"n1","body":{"type":"error","in_reply_to":%d,"code":11,"text":"booting"}}`, id))
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"start_ok","in_reply_to":2,"outcome":"error 11","msg_id":6}}`)
		tn.expectProbe(7, 0, 0)
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSendAndRPCRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var errs []error
		tn := startNode(t, func(n *Node) {
			noop := func(Message, error) {}
			n.OnInit(func() error {
				errs = append(errs, n.Send("n2", "hello", nil)) // allowed in the hook: the id is set
				return nil
			})
			n.Handle("go", func(req Message) error {
				errs = append(errs,
					n.Send("c1", "hello", nil),                          // a client: never unsolicited
					n.Send("n9", "hello", nil),                          // not in node_ids
					n.RPC("n2", "prepare", nil, 0, noop),                // no timeout
					n.RPC("n2", "prepare", nil, time.Second, nil),       // no callback
					n.RPC("n2", "", nil, time.Second, noop),             // no type
					n.RPC("n2", "prepare", []int{1}, time.Second, noop), // not an object
					n.Send("lin-kv", "read", map[string]int{"key": 1}),  // a service: allowed
				)
				return n.Reply(req, "go_ok", nil)
			})
		})
		tn.initNodeExpecting(`{"src":"n1","dest":"n2","body":{"type":"hello","msg_id":0}}`,
			`{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":1}}`)
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"go","msg_id":1}}`)
		tn.expect(
			`{"src":"n1","dest":"lin-kv","body":{"type":"read","key":1,"msg_id":2}}`,
			`{"src":"n1","dest":"c1","body":{"type":"go_ok","in_reply_to":1,"msg_id":3}}`,
		)
		want := []string{"", "not in node_ids", "not in node_ids", "timeout > 0", "callback", "needs a type", "JSON object", ""}
		if len(errs) != len(want) {
			t.Fatalf("errors %v", errs)
		}
		for i, w := range want {
			if (w == "") != (errs[i] == nil) || (w != "" && !strings.Contains(errs[i].Error(), w)) {
				t.Errorf("call %d: error %v, want one mentioning %q", i, errs[i], w)
			}
		}
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
	// Before init there is no src to send from.
	n := New(strings.NewReader(""), &proctest.Output{}, &proctest.Output{})
	if err := n.Send("n2", "x", nil); err == nil || !strings.Contains(err.Error(), "before init") {
		t.Fatalf("Send before init: %v", err)
	}
}

func (tn *testNode) initNodeExpecting(lines ...string) {
	tn.t.Helper()
	tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1","n2","n3"],"msg_id":1}}`)
	tn.expect(lines...)
}
