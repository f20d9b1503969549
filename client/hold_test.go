package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/fakelease"
)

// stalledSession is a Session of cs1 on ch_1 (300 ms leases: the loss
// deadline 30 ms before the believed end) whose watchdog never fires, as
// in a process paused past its deadline; the members are killed 20 ms
// in, so nothing renews it.
func stalledSession(t *testing.T) (*fakelease.Cluster, *Session) {
	f, c := pipeClient(t, fakelease.Options{})
	s, err := c.newSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300, Seed: 1}, stalledWatchdog)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	for i := range 3 {
		f.Node(i).Kill()
	}
	return f, s
}

// TestCurrentReadsTheClockNotTheTimer: with the watchdog stalled, Done
// stays open past the loss deadline, but Current refuses from the
// deadline on, while the cluster's lease is still live, and its refusal
// closes Done for good.
func TestCurrentReadsTheClockNotTheTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, s := stalledSession(t)
		h, err := s.Current()
		if err != nil || h.Token != f.Holder("ch_1").Token || h.Token != s.Token() || !h.ActBy.Equal(h.Until.Add(-30*time.Millisecond)) {
			t.Fatalf("Current = %+v, %v; want the cluster's token %d, act by 30 ms before %v", h, err, f.Holder("ch_1").Token, h.Until)
		}
		time.Sleep(time.Until(h.ActBy) - time.Millisecond)
		if _, err := s.Current(); err != nil {
			t.Fatalf("1 ms before the loss deadline: %v", err)
		}
		time.Sleep(time.Until(h.ActBy))
		select {
		case <-s.Done():
			t.Fatal("Done closed at the deadline with the watchdog stalled: the test models nothing")
		default:
		}
		_, err = s.Current()
		if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "after its believed end less the safety margin") {
			t.Fatalf("Current at the loss deadline: %v; want ErrLost naming the deadline", err)
		}
		if hold := f.Holder("ch_1"); !hold.Live || hold.Server != "cs1" {
			t.Fatalf("the refusal came after the lease ended: %+v", hold)
		}
		select {
		case <-s.Done():
		default:
			t.Fatal("Current refused but Done is open")
		}
		if !errors.Is(s.Err(), ErrLost) {
			t.Fatalf("Err = %v, want the refusal", s.Err())
		}
		time.Sleep(time.Second)
		for i := range 3 {
			f.Node(i).Restart()
		}
		if _, err := s.Current(); !errors.Is(err, ErrLost) {
			t.Fatalf("Current after the loss: %v; a refusal is final", err)
		}
	})
}

// TestActReportsWhetherTheLeaseHeld: an action under a live lease gets
// the token and Held; an action that outlasts the loss deadline reports
// the lapse (ErrLost, joined with its own error); after the loss the
// action does not run.
func TestActReportsWhetherTheLeaseHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, s := stalledSession(t)
		var got int64
		a, err := s.Act(func(token int64) error { got = token; return nil })
		if err != nil || !a.Held || a.Token != got || got != f.Holder("ch_1").Token || a.To.Before(a.From) {
			t.Fatalf("Act = %+v, %v (token %d); want held with the cluster's token", a, err, got)
		}
		writeErr := errors.New("the write failed")
		h, _ := s.Current()
		a, err = s.Act(func(int64) error { time.Sleep(time.Until(h.ActBy) + time.Millisecond); return writeErr })
		if a.Held || a.Token != got || !errors.Is(err, ErrLost) || !errors.Is(err, writeErr) ||
			!strings.Contains(err.Error(), "may have ended before the action") {
			t.Fatalf("an action past the deadline: %+v, %v; want not held, ErrLost and the action's error", a, err)
		}
		ran := false
		a, err = s.Act(func(int64) error { ran = true; return nil })
		if ran || a.Token != 0 || !errors.Is(err, ErrLost) {
			t.Fatalf("after the loss: ran %v, %+v, %v; want not run, ErrLost", ran, a, err)
		}
	})
}

// TestActAfterClose: a closed Session refuses with ErrClosed.
func TestActAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c := pipeClient(t, fakelease.Options{})
		s, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Act(func(int64) error { t.Fatal("ran after Close"); return nil }); !errors.Is(err, ErrClosed) {
			t.Fatalf("Act after Close: %v, want ErrClosed", err)
		}
	})
}

// TestMastershipCurrentHasTheToken: a Mastership's Current names the
// master lease's token, which grows with each renewal, and an action
// gets it; after the node stops being master Current refuses.
func TestMastershipCurrentHasTheToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		m, err := c.Campaign(context.Background(), f.Endpoints()[0], CampaignOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		first, err := m.Current()
		if err != nil || first.Token <= 0 || first.Token != f.MasterToken() {
			t.Fatalf("Current = %+v, %v; want the master lease's token %d", first, err, f.MasterToken())
		}
		time.Sleep(3 * time.Second) // several renewals of the fake's 1 s master lease
		var acted int64
		a, err := m.Act(func(token int64) error { acted = token; return nil })
		if err != nil || !a.Held || acted <= first.Token || acted > f.MasterToken() {
			t.Fatalf("Act = %+v, %v with token %d; want a renewed token above %d, at most the cluster's %d", a, err, acted, first.Token, f.MasterToken())
		}
		if err := c.MasterStop(context.Background(), f.Endpoints()[0]); err != nil {
			t.Fatal(err)
		}
		<-m.Done()
		if _, err := m.Current(); !errors.Is(err, ErrLost) {
			t.Fatalf("Current after the node stopped: %v, want ErrLost", err)
		}
	})
}

// TestMasterStatusWithoutTokenRefused: a node that says is_master without
// a token breaks the contract; the answer is not one to act on.
func TestMasterStatusWithoutTokenRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"type":"master_status_ok","is_master":true,"master":"n1","remaining_ms":500}`)
	}))
	defer srv.Close()
	c, err := New(Config{Endpoints: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.MasterStatus(ctxFor(t, 5*time.Second), srv.URL)
	if !IsUnknown(err) || !strings.Contains(err.Error(), "without a token") {
		t.Fatalf("MasterStatus: %v; want an unknown outcome naming the missing token", err)
	}
}
