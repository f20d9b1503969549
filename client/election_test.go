package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/internal/fakelease"
)

// TestCampaignWaitsForMastership: a campaign on n2 blocks while n1 is
// master and returns once n1 resigns and n2 becomes master; Resign gives
// the master lease back.
func TestCampaignWaitsForMastership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		n1, n2 := f.Endpoints()[0], f.Endpoints()[1]
		m1, err := c.Campaign(context.Background(), n1, CampaignOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if holder, _ := f.Master(); holder != "n1" || m1.Node() != n1 {
			t.Fatalf("master %q; want n1", holder)
		}
		won := make(chan *Mastership)
		go func() {
			m2, err := c.Campaign(context.Background(), n2, CampaignOptions{Seed: 2})
			if err != nil {
				t.Error(err)
			}
			won <- m2
		}()
		time.Sleep(2 * time.Second)
		select {
		case <-won:
			t.Fatal("n2's campaign returned while n1 was master")
		default:
		}
		resigned := time.Now()
		if err := m1.Resign(context.Background()); err != nil || !errors.Is(m1.Err(), ErrClosed) {
			t.Fatalf("Resign: %v, Err %v", err, m1.Err())
		}
		m2 := <-won
		if waited := time.Since(resigned); waited > 110*time.Millisecond {
			t.Fatalf("n2 learned its mastership %v after n1 resigned; want within a poll (100 ms +-10%%)", waited)
		}
		if holder, end := f.Master(); holder != "n2" || m2.Until().After(end) {
			t.Fatalf("master %q until %v, believed until %v; want n2, believed no later than the end", holder, end, m2.Until())
		}
		m2.Resign(context.Background())
		if holder, _ := f.Master(); holder != "" {
			t.Fatalf("after both resigned the master is %q", holder)
		}
	})
}

// mastershipLoss makes n1 master, breaks it with fault, and checks that
// Done closed before the node's mastership ended, by its own record.
func mastershipLoss(t *testing.T, late bool, fault func(f *fakelease.Cluster, c *Client)) error {
	var result error
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		m, err := c.campaign(context.Background(), f.Endpoints()[0], CampaignOptions{Seed: 1}, late)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		select {
		case <-m.Done():
			t.Fatalf("lost a healthy mastership: %v", m.Err())
		default:
		}
		_, end := f.Master()
		fault(f, c)
		if _, e := f.Master(); e.After(end) {
			end = e
		}
		<-m.Done()
		switch {
		case !errors.Is(m.Err(), ErrLost):
			result = fmt.Errorf("Err = %v, want ErrLost", m.Err())
		case !time.Now().Before(end):
			result = fmt.Errorf("loss signalled at %v, at or after the mastership's end %v", time.Now(), end)
		case m.Until().After(end):
			result = fmt.Errorf("believed until %v, after the end %v", m.Until(), end)
		}
	})
	return result
}

// TestMastershipLossBeforeEnd: a node that stops renewing, and a node
// that dies, end the mastership's Done before the node's master lease
// ends; a node that says it is not master ends it at once. A variant
// that signals the loss a safety margin after the believed end must be
// caught (the negative control).
func TestMastershipLossBeforeEnd(t *testing.T) {
	faults := map[string]func(f *fakelease.Cluster, c *Client){
		"stalled": func(f *fakelease.Cluster, c *Client) { f.Node(0).StallMaster(true) },
		"killed":  func(f *fakelease.Cluster, c *Client) { f.Node(0).Kill() },
	}
	for name, fault := range faults {
		if err := mastershipLoss(t, false, fault); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := mastershipLoss(t, true, fault); err == nil {
			t.Errorf("%s: the late variant was not caught", name)
		}
	}
}

// TestMastershipNotMasterAnyMore: a status saying is_master false ends
// the mastership at that poll.
func TestMastershipNotMasterAnyMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		m, err := c.Campaign(context.Background(), f.Endpoints()[0], CampaignOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := c.MasterStop(context.Background(), f.Endpoints()[0]); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		<-m.Done()
		if err := m.Err(); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "not master") || time.Since(stopped) > 110*time.Millisecond {
			t.Fatalf("Err = %v after %v; want lost at the next poll, the node not master", err, time.Since(stopped))
		}
	})
}

// TestCampaignCancelled: a campaign whose context ends first stops the
// node's campaign (master_stop) and returns the context's error.
func TestCampaignCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := pipeClient(t, fakelease.Options{})
		m1, err := c.Campaign(context.Background(), f.Endpoints()[0], CampaignOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer m1.Resign(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err = c.Campaign(ctx, f.Endpoints()[1], CampaignOptions{})
		stops := f.CallsOf("master_stop")
		if !errors.Is(err, context.DeadlineExceeded) || len(stops) != 1 || stops[0].Node != "n2" {
			t.Fatalf("got %v, master_stop calls %+v; want the deadline and n2 stopped", err, stops)
		}
	})
}

// TestCampaignRefused: a node refusing for good (401) ends the campaign
// at once.
func TestCampaignRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakelease.Start(t, fakelease.Options{Network: fakelease.Pipe, Token: "t0k"})
		c, err := New(Config{Endpoints: f.Endpoints(), DialContext: f.DialContext(), Token: "wrong"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Campaign(context.Background(), f.Endpoints()[0], CampaignOptions{})
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("got %v; want unauthorized", err)
		}
	})
}
