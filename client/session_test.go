package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/fakelease"
	"chunklease/internal/testseed"
)

// pipeClient is fakeClient on the in-memory network, for synctest.
func pipeClient(t *testing.T, opts fakelease.Options) (*fakelease.Cluster, *Client) {
	opts.Network = fakelease.Pipe
	return fakeClient(t, opts, Config{})
}

// TestSessionRenewSchedule: renewals come at a third of the lease,
// jittered by at most 10%, counted from when the previous one was sent;
// the believed expiry is the send time plus the answer's length less the
// drift margin (1% + 1 ms).
func TestSessionRenewSchedule(t *testing.T) {
	seed := testseed.Get(t)
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		f.Node(0).SetLatency(5*time.Millisecond, 7*time.Millisecond)
		start := time.Now()
		s, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if want := start.Add(300*time.Millisecond - 4*time.Millisecond); !s.Until().Equal(want) {
			t.Fatalf("believed expiry %v after the grant, want sent + 300 ms - 4 ms = %v", s.Until().Sub(start), want.Sub(start))
		}
		time.Sleep(3 * time.Second)
		renews := f.CallsOf("lease_renew")
		prev := f.CallsOf("lease_grant")[0].At
		gaps := map[time.Duration]bool{}
		for _, r := range renews {
			gap := r.At.Sub(prev) // both performed 5 ms after sending
			if gap < 90*time.Millisecond || gap > 110*time.Millisecond {
				t.Fatalf("a renewal came %v after the previous one; want 100 ms +-10%%", gap)
			}
			gaps[gap] = true
			prev = r.At
		}
		if n := len(renews); n < 27 || n > 34 || len(gaps) < n/2 {
			t.Fatalf("%d renewals in 3 s with %d distinct gaps; want about 30, jittered", n, len(gaps))
		}
		last := renews[len(renews)-1]
		if want := last.At.Add(-5*time.Millisecond + 296*time.Millisecond); !s.Until().Equal(want) || s.Token() != last.Token {
			t.Fatalf("after the last renewal: until %v token %d, want %v token %d", s.Until(), s.Token(), want, last.Token)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSessionLostOnConflict: a renew refused with 409 is a loss at once.
func TestSessionLostOnConflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		s, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		f.Steal("ch_1", "cs2", 5000)
		<-s.Done()
		renews := f.CallsOf("lease_renew")
		if len(renews) != 1 || renews[0].Status != 409 || !time.Now().Equal(renews[0].At) {
			t.Fatalf("renewals %+v; want one, refused with 409, at the loss", renews)
		}
		if err := s.Err(); !errors.Is(err, ErrLost) || !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "held by cs2") {
			t.Fatalf("Err = %v; want lost, held by cs2", err)
		}
		if err := s.Close(context.Background()); err != nil || f.Holder("ch_1").Server != "cs2" || !f.Holder("ch_1").Live {
			t.Fatalf("Close after the loss: %v, holder %+v; want nil and cs2 untouched", err, f.Holder("ch_1"))
		}
	})
}

// TestSessionLostBeforeEnd: with every member gone, the loss is declared
// exactly at the believed expiry less the safety margin, before the
// lease's real end, after renewals were tried until then.
func TestSessionLostBeforeEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		s, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		for i := range 3 {
			f.Node(i).Kill()
		}
		until := s.Until()
		<-s.Done()
		end := f.Holder("ch_1").End
		if want := until.Add(-30 * time.Millisecond); !time.Now().Equal(want) || !time.Now().Before(end) {
			t.Fatalf("lost at %v; want the loss deadline %v, before the real end %v", time.Now(), want, end)
		}
		if err := s.Err(); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "nothing confirmed it") || !strings.Contains(err.Error(), "not sent") {
			t.Fatalf("Err = %v; want lost, with the last renewal failure", err)
		}
	})
}

// TestSessionRenewsThroughAnyMember: the member that answered dies; the
// renewals go on through the others and the lease is never lost.
func TestSessionRenewsThroughAnyMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		s, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		f.Node(0).Kill()
		time.Sleep(time.Second)
		f.Node(1).Inject(fakelease.Fault{Op: "lease_renew", Status: 504, Apply: true}, fakelease.Fault{Op: "lease_renew", Reset: true})
		time.Sleep(time.Second)
		select {
		case <-s.Done():
			t.Fatalf("lost: %v", s.Err())
		default:
		}
		byNode := map[string]int{}
		for _, r := range f.CallsOf("lease_renew") {
			byNode[r.Node]++
		}
		if byNode["n1"] < 8 || byNode["n2"] < 8 || byNode["n3"] < 1 {
			t.Fatalf("renewals by member %v; want n1 then n2, and n3 after n2's faults", byNode)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSessionCloseReleasesLatest: Close gives the lease back with the
// latest token, which ends every earlier instance; a renewal in flight
// is awaited, and its token is the one given back.
func TestSessionCloseReleasesLatest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		s, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(350 * time.Millisecond) // three renewals
		f.Node(0).Inject(fakelease.Fault{Op: "lease_renew", DelayIn: 40 * time.Millisecond})
		time.Sleep(80 * time.Millisecond) // the fourth is in flight
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		renews, releases := f.CallsOf("lease_renew"), f.CallsOf("lease_release")
		latest := renews[len(renews)-1]
		if len(renews) != 4 || len(releases) != 1 || releases[0].Token != latest.Token || s.Token() != latest.Token {
			t.Fatalf("renewals %d, releases %+v; want 4 renewals and one release with the latest token %d", len(renews), releases, latest.Token)
		}
		if f.Holder("ch_1").Live || !errors.Is(s.Err(), ErrClosed) {
			t.Fatalf("after Close: holder %+v, Err %v; want the chunk free and ErrClosed", f.Holder("ch_1"), s.Err())
		}
		if _, err := c.Grant(context.Background(), "ch_1", "cs2", 1000); err != nil || f.Holder("ch_1").Server != "cs2" {
			t.Fatalf("another server's grant after Close: %v", err)
		}
	})
}

// TestSessionStartRefusals: a chunk held by another server, and margins
// that leave no time to renew (the grant is given back).
func TestSessionStartRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		f.Steal("ch_1", "cs2", 5000)
		_, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{LeaseMs: 300})
		if !errors.Is(err, ErrHeld) || !IsRefused(err) || !strings.Contains(err.Error(), "held by cs2") {
			t.Fatalf("got %v; want held by cs2", err)
		}
		_, err = c.NewSession(context.Background(), "ch_2", "cs1", SessionOptions{LeaseMs: 300, SafetyMargin: 200 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "leave no time to renew") || f.Holder("ch_2").Live {
			t.Fatalf("got %v, holder %+v; want refused options and the grant given back", err, f.Holder("ch_2"))
		}
		_, err = c.NewSession(context.Background(), "ch_3", "cs1", SessionOptions{LeaseMs: -1})
		if err == nil || len(f.CallsOf("lease_grant")) != 2 {
			t.Fatalf("negative LeaseMs: %v; want refused before any request", err)
		}
	})
}

// TestSessionDefaultLease: LeaseMs 0 asks for the members' default, and
// the answer sets the schedule and the margins.
func TestSessionDefaultLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{DefaultLeaseMs: 600})
		s, err := c.NewSession(context.Background(), "ch_1", "cs1", SessionOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if n := len(f.CallsOf("lease_renew")); n < 4 || n > 6 || f.CallsOf("lease_renew")[0].LeaseMs != 0 {
			t.Fatalf("%d renewals in 1 s of a 600 ms default lease; want about 5, asking for the default", n)
		}
		s.Close(context.Background())
	})
}
