package maelstrom

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/proctest"
)

func TestTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fired []string
		tn := startNode(t, func(n *Node) {
			n.Handle("arm", func(req Message) error {
				record := func(name string) func() {
					return func() { fired = append(fired, fmt.Sprintf("%s@%v", name, n.Now())) }
				}
				n.After(2*time.Second, record("a"))
				n.After(time.Second, record("b"))
				n.After(2*time.Second, record("c")) // same deadline as a: fires after a
				cancelD := n.After(time.Second, record("d"))
				cancelD()
				cancelD() // idempotent
				n.After(-time.Second, func() {
					record("e")()
					n.After(0, record("f")) // runs on a later turn, not inside this one
					fired = append(fired, "e-done")
				})
				cancelG := n.After(3*time.Second, record("g"))
				n.After(2500*time.Millisecond, cancelG) // a timer cancels a later one
				n.After(math.MaxInt64, record("never")) // must not wrap into the past
				return n.Reply(req, "arm_ok", nil)
			})
		})
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"arm","msg_id":1}}`)
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"arm_ok","in_reply_to":1,"msg_id":1}}`)
		time.Sleep(time.Minute)
		synctest.Wait()
		got := strings.Join(fired, " ")
		if want := "e@0s e-done f@0s b@1s a@2s c@2s"; got != want {
			t.Fatalf("fired %q, want %q", got, want)
		}
		if len(tn.node.timers) != 1 || tn.node.timers[0].at != math.MaxInt64 {
			t.Fatalf("timers left: %d, want only the never timer", len(tn.node.timers))
		}
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestEOFDrainsPendingRPCs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &rpcRecorder{}
		tn := startNode(t, rpcNode(rec, 1500*time.Millisecond))
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"start","msg_id":1}}`)
		tn.outgoingPrepare()
		start := time.Now()
		if err := tn.finish(); err != nil { // closes stdin while the RPC is pending
			t.Fatalf("Run: %v", err)
		}
		if elapsed := time.Since(start); elapsed != 1500*time.Millisecond {
			t.Fatalf("Run returned %v after EOF, want when the RPC deadline passed (1.5s)", elapsed)
		}
		// The callback's reply was flushed before Run returned.
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"start_ok","in_reply_to":1,"outcome":"timeout","msg_id":2}}`)
		tn.logged("end of input: 1 RPCs pending")
	})
}

func TestEOFIdleReturnsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := startNode(t, func(n *Node) {
			echoNode(n)
			n.Handle("later", func(req Message) error {
				n.After(time.Hour, func() { t.Error("a timer of an idle node ran after EOF") })
				return nil
			})
		})
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"later","msg_id":1}}`)
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"echo","echo":1,"msg_id":2}}`)
		start := time.Now()
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(start); elapsed != 0 {
			t.Fatalf("an idle node took %v to return after EOF", elapsed)
		}
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"echo_ok","in_reply_to":2,"echo":1,"msg_id":1}}`)
	})
}

func TestEOFDrainTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ticks := 0
		tn := startNode(t, func(n *Node) {
			var tick func()
			tick = func() { ticks++; n.After(100*time.Millisecond, tick) }
			n.OnInit(func() error { tick(); return nil })
			n.SetIdle(func() bool { return false }) // never idle: only the cap ends the drain
		}, WithDrainTimeout(2*time.Second))
		tn.initNode()
		start := time.Now()
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(start); elapsed != 2*time.Second {
			t.Fatalf("drain lasted %v, want the 2s cap", elapsed)
		}
		if ticks < 20 {
			t.Fatalf("timers ran %d times during the drain, want them served", ticks)
		}
		tn.logged("drain timeout 2s passed")
	})
}

// TestSlowStdoutDoesNotBlockLoop stops reading stdout: the loop must keep
// serving input and timers, and every line must come out later, in order.
func TestSlowStdoutDoesNotBlockLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		stderr := &proctest.Output{}
		handled := 0
		n := New(inR, outW, stderr)
		n.Handle("echo", func(req Message) error {
			handled++
			return n.Reply(req, "echo_ok", map[string]string{"echo": strings.Repeat("z", 1000)})
		})
		done := make(chan error, 1)
		go func() { done <- n.Run(); outW.Close() }()
		const count = 2000 // about 2 MB of replies, far beyond any pipe buffer
		go func() {
			io.WriteString(inW, `{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1"],"msg_id":1}}`+"\n")
			for i := range count {
				fmt.Fprintf(inW, `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":%d}}`+"\n", i)
			}
		}()
		synctest.Wait() // nobody reads stdout; the loop must still have served everything
		if handled != count {
			t.Fatalf("loop handled %d of %d requests while stdout was blocked", handled, count)
		}
		out := make(chan string, count+1)
		go collectLines(outR, out)
		inW.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(out) != count+1 {
			t.Fatalf("got %d lines, want %d", len(out), count+1)
		}
		<-out // init_ok
		for i := range count {
			line := <-out
			want := fmt.Sprintf(`"in_reply_to":%d,`, i)
			if !strings.Contains(line, want) || !strings.HasSuffix(line, fmt.Sprintf(`"msg_id":%d}}`+"\n", i+1)) {
				t.Fatalf("line %d out of order: %.80s...", i, line)
			}
		}
	})
}

// TestStdoutClosed: a broken stdout is logged, Run still serves and returns
// an error at the end instead of hanging or crashing.
func TestStdoutClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		outR.Close()
		stderr := &proctest.Output{}
		n := New(inR, outW, stderr)
		echoNode(n)
		done := make(chan error, 1)
		go func() { done <- n.Run() }()
		io.WriteString(inW, `{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1"],"msg_id":1}}`+"\n")
		io.WriteString(inW, `{"src":"c1","dest":"n1","body":{"type":"echo","echo":1,"msg_id":2}}`+"\n")
		inW.Close()
		err := <-done
		if err == nil || !strings.Contains(stderr.String(), "writing stdout failed") {
			t.Fatalf("Run = %v; stderr %s", err, stderr)
		}
	})
}

// TestStdoutStalledAtExit: if stdout never takes the last lines, Run gives
// up after the flush timeout instead of waiting forever.
func TestStdoutStalledAtExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		n := New(inR, outW, &proctest.Output{})
		done := make(chan error, 1)
		go func() { done <- n.Run() }()
		io.WriteString(inW, `{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1"],"msg_id":1}}`+"\n")
		inW.Close()
		start := time.Now()
		err := <-done
		if err == nil || time.Since(start) != flushTimeout {
			t.Fatalf("Run = %v after %v, want an error after %v", err, time.Since(start), flushTimeout)
		}
		outR.Close() // releases the writer goroutine
		synctest.Wait()
	})
}

func TestRunTwiceAndHandlePanics(t *testing.T) {
	n := New(strings.NewReader(""), io.Discard, io.Discard)
	echoNode(n)
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"duplicate", func() { echoNode(n) }},
		{"init", func() { n.Handle("init", func(Message) error { return nil }) }},
		{"empty", func() { n.Handle("", func(Message) error { return nil }) }},
		{"nil", func() { n.Handle("x", nil) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handle %s did not panic", tc.name)
				}
			}()
			tc.fn()
		}()
	}
	if err := n.Run(); err != nil {
		t.Fatalf("Run on empty input: %v", err)
	}
	if err := n.Run(); err == nil {
		t.Fatal("second Run did not fail")
	}
}

// TestInputBeforeDueTimers: a process starved of CPU wakes with a due
// timer and input already waiting; the loop must handle the waiting input
// first (an answer that completes a round must not lose to the round's
// timeout). Each "arm" sets a timer due at once and holds its handler
// until the next line ("answer") is in the inbox, so both are ready when
// the loop next chooses; the timer must find the answer handled. Before
// the fix the loop's select chose at random: about half the rounds failed.
func TestInputBeforeDueTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rounds = 64
		answered, late := 0, 0
		tn := startNode(t, func(n *Node) {
			n.Handle("arm", func(req Message) error {
				want := answered + 1
				n.After(0, func() {
					if answered < want {
						late++
					}
				})
				for len(n.inbox) == 0 { // until the answer is decoded and waiting
					runtime.Gosched()
				}
				return nil
			})
			n.Handle("answer", func(req Message) error { answered++; return nil })
		})
		tn.initNode()
		for i := range rounds {
			tn.send(fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"arm","msg_id":%d}}`, 2*i+1) + "\n" +
				fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"answer","msg_id":%d}}`, 2*i+2))
			synctest.Wait()
		}
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
		if answered != rounds || late != 0 {
			t.Fatalf("%d of %d due timers ran before the input waiting beside them (%d answers handled)", late, rounds, answered)
		}
	})
}
