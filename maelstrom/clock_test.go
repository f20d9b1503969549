package maelstrom

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// scaledClock runs rate times as fast as the (bubble's) real clock and
// can change its rate while the node runs, as a clockfault build's clock
// does.
type scaledClock struct {
	mu       sync.Mutex
	origin   time.Time
	base     time.Duration
	realBase time.Duration
	rate     float64
	changed  chan struct{}
}

func (c *scaledClock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base + time.Duration(float64(time.Since(c.origin)-c.realBase)*c.rate)
}

func (c *scaledClock) RealDelay(d time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Duration(float64(max(d, 0)) / c.rate)
}

func (c *scaledClock) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

func (c *scaledClock) setRate(rate float64) {
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base, c.realBase, c.rate = now, time.Since(c.origin), rate
	close(c.changed)
	c.changed = make(chan struct{})
}

// TestTimersFollowTheNodesClock: when the node's clock starts to run 10
// times too fast while a timer waits, the armed timer is re-armed at once
// for the rest of its wait at the new rate (it would fire seconds late
// otherwise), and later timers follow the new rate too.
func TestTimersFollowTheNodesClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := &scaledClock{origin: time.Now(), rate: 1, changed: make(chan struct{})}
		start := time.Now()
		var fired []string
		tn := startNode(t, func(n *Node) {
			n.Handle("arm", func(req Message) error {
				n.After(10*time.Second, func() { fired = append(fired, fmt.Sprintf("a@%v", time.Since(start))) })
				n.After(20*time.Second, func() { fired = append(fired, fmt.Sprintf("b@%v", time.Since(start))) })
				return n.Reply(req, "arm_ok", nil)
			})
		}, WithClock(clk))
		tn.initNode()
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"arm","msg_id":1}}`)
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"arm_ok","in_reply_to":1,"msg_id":1}}`)
		time.Sleep(1500 * time.Millisecond) // node clock at 1.5 s: a due in 8.5 s, b in 18.5 s
		synctest.Wait()
		clk.setRate(10) // a now needs 0.85 s of real time, b 1.85 s
		time.Sleep(time.Minute)
		synctest.Wait()
		if got, want := strings.Join(fired, " "), "a@2.35s b@3.35s"; got != want {
			t.Fatalf("fired %q, want %q", got, want)
		}
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}
